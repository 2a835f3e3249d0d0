package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
)

const (
	docsBegin = "<!-- bench:begin -->"
	docsEnd   = "<!-- bench:end -->"
)

// updateDocs replaces the text between the bench markers of a Markdown file with this run's
// table, the command that produced it and the machine: numbers in the docs are never typed.
func (r *report) updateDocs(path string, args []string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	text := string(data)
	begin, end := strings.Index(text, docsBegin), strings.Index(text, docsEnd)
	if begin < 0 || end < begin {
		return fmt.Errorf("%s has no %s … %s section", path, docsBegin, docsEnd)
	}
	var table bytes.Buffer
	command := "make bench"
	if shown := benchArgs(args); len(shown) > 0 {
		command += ` BENCH_ARGS="` + strings.Join(shown, " ") + `"`
	}
	fmt.Fprintf(&table, "%s\n\nCommand: `%s`\n\n```", docsBegin, command)
	r.print(&table)
	table.WriteString("```\n")
	return os.WriteFile(path, []byte(text[:begin]+table.String()+text[end:]), 0o644)
}

// benchArgs drops the arguments make adds itself (--bin-dir, --update-docs) from a command line.
func benchArgs(args []string) []string {
	var out []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--bin-dir" || a == "--update-docs" || a == "-bin-dir" || a == "-update-docs":
			i++ // and its value
		case strings.HasPrefix(a, "--bin-dir=") || strings.HasPrefix(a, "--update-docs="):
		default:
			out = append(out, a)
		}
	}
	return out
}
