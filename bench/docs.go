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
	fmt.Fprintf(&table, "%s\n\nCommand: `go run ./bench %s`\n\n```", docsBegin, strings.Join(args, " "))
	r.print(&table)
	table.WriteString("```\n")
	return os.WriteFile(path, []byte(text[:begin]+table.String()+text[end:]), 0o644)
}
