package e2e

import (
	"bufio"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// The walkthroughs of README.md and docs/ are run as written (TestWalkthroughs). This file reads
// them. What the text shows is what the test checks, by these rules, so that a reader can trust
// every sample:
//
//   - A ```sh block is a walkthrough's if one of its commands names the dev fleet
//     (.flotilla/dev/); other blocks (make dev, your own clusters) are not run.
//   - A command is one line, or several joined by a trailing backslash. NAME=$(command) keeps
//     the command's output for the commands after it, as a shell does.
//   - The "# " lines right after a command are its output as the reader will see it; "# " lines
//     before a command (after a blank line or at the block's start) are notes to the reader.
//   - Output that starts with a table header (upper-case column names) is compared as a table:
//     the same columns in the same order ("..." at the end of the header: more may follow), a
//     printed row with the values of every row shown, and no other rows unless "# ..." is one.
//     Rows are read by the header's column positions, as kubectl aligns them, so a blank cell
//     is shown blank. AGE and CREATED AT are not compared; "<anything>" other than
//     <none> in a cell stands for any value.
//   - Other output must appear, line by line and in order, in what the command prints (spaces
//     collapsed; "..." skips).
//   - A command that only reads (kubectl get, describe, explain; flotilla get, status, plan,
//     diff) is repeated until its output matches, as a reader waits for the fleet to converge;
//     any other command runs once and must succeed.

// docStep is one command of a walkthrough and the output the text shows for it.
type docStep struct {
	where   string   // file:line, for messages
	command string   // as a shell runs it
	want    []string // the output shown, without "# "; nil when none is
}

// walkthroughSteps reads the steps of path's walkthrough blocks.
func walkthroughSteps(path string) ([]docStep, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	var (
		steps   []docStep
		block   []docStep
		inSh    bool
		inOther bool
		output  bool // the "# " lines now are the last command's output
		pending string
		lineNo  int
		start   int
	)
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		lineNo++
		line := scanner.Text()
		trimmed := strings.TrimSpace(line)
		switch {
		case !inSh && !inOther:
			if strings.HasPrefix(trimmed, "```") {
				inSh = trimmed == "```sh"
				inOther = !inSh
				block, output, pending = nil, false, ""
			}
			continue
		case inOther:
			inOther = !strings.HasPrefix(trimmed, "```")
			continue
		}
		if strings.HasPrefix(trimmed, "```") {
			inSh = false
			if pending != "" {
				return nil, fmt.Errorf("%s:%d: a command ends with a backslash at the end of its block", path, lineNo)
			}
			if slices.ContainsFunc(block, func(s docStep) bool { return strings.Contains(s.command, ".flotilla/dev/") }) {
				steps = append(steps, block...)
			}
			continue
		}
		switch {
		case pending != "":
			pending += " " + strings.TrimSpace(strings.TrimSuffix(trimmed, `\`))
			if !strings.HasSuffix(trimmed, `\`) {
				block = append(block, docStep{where: fmt.Sprintf("%s:%d", path, start), command: pending})
				pending, output = "", true
			}
		case trimmed == "":
			output = false
		case trimmed == "#" || strings.HasPrefix(trimmed, "# "):
			if output {
				last := &block[len(block)-1]
				last.want = append(last.want, strings.TrimPrefix(strings.TrimPrefix(trimmed, "#"), " "))
			}
		case strings.HasSuffix(trimmed, `\`):
			pending, start = strings.TrimSpace(strings.TrimSuffix(trimmed, `\`)), lineNo
		default:
			block = append(block, docStep{where: fmt.Sprintf("%s:%d", path, lineNo), command: trimmed})
			output = true
		}
	}
	if err := scanner.Err(); err != nil {
		return nil, err
	}
	if inSh {
		return nil, fmt.Errorf("%s: a ```sh block is not closed", path)
	}
	return steps, nil
}

// assignment matches NAME=$(command).
var assignment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)=\$\((.*)\)$`)

// readsOnly reports whether a command only reads, and so may be repeated until the fleet shows
// what the text says.
func readsOnly(command string) bool {
	fields := strings.Fields(command)
	if len(fields) == 0 {
		return false
	}
	verbs := map[string][]string{
		"kubectl":      {"get", "describe", "explain"},
		"bin/kubectl":  {"get", "describe", "explain"},
		"bin/flotilla": {"get", "status", "plan", "diff"},
		"flotilla":     {"get", "status", "plan", "diff"},
	}
	allowed, ok := verbs[fields[0]]
	if !ok {
		return false
	}
	for i := 1; i < len(fields); i++ {
		switch f := fields[i]; {
		case f == "--kubeconfig" || f == "--hub-kubeconfig" || f == "-n" || f == "--namespace" || f == "--context":
			i++ // the flag's value
		case strings.HasPrefix(f, "-"):
		default:
			return slices.Contains(allowed, f)
		}
	}
	return false
}

// matchOutput reports how got differs from the output the text shows (want), or nil.
func matchOutput(want []string, got string) error {
	if len(want) == 0 {
		return nil
	}
	if isHeader(want[0]) {
		return matchTable(want, got)
	}
	return matchLines(want, got)
}

var headerCell = regexp.MustCompile(`^[A-Z][A-Z0-9 ._/-]*$`)

// isHeader reports whether line is a table header: two or more upper-case column names.
func isHeader(line string) bool {
	cells := cellsOf(line)
	if len(cells) < 2 {
		return false
	}
	for _, c := range cells {
		if c != "..." && !headerCell.MatchString(c) {
			return false
		}
	}
	return true
}

var cellGap = regexp.MustCompile(`\s{2,}`)

// cellsOf splits a line the text shows into cells: they are separated by two or more spaces.
func cellsOf(line string) []string {
	return cellGap.Split(strings.TrimSpace(line), -1)
}

// columnStarts returns where each column of a header kubectl printed starts.
func columnStarts(header string) []int {
	starts := []int{0}
	for i := 1; i < len(header); i++ {
		if header[i] != ' ' && i >= 2 && header[i-1] == ' ' && header[i-2] == ' ' {
			starts = append(starts, i)
		}
	}
	return starts
}

// rowCells cuts a printed row into the columns of its header.
func rowCells(line string, starts []int) []string {
	cells := make([]string, len(starts))
	for i, s := range starts {
		if s >= len(line) {
			break
		}
		end := len(line)
		if i+1 < len(starts) && starts[i+1] < end {
			end = starts[i+1]
		}
		cells[i] = strings.TrimSpace(line[s:end])
	}
	return cells
}

// unchecked are the columns whose values change from run to run.
var unchecked = map[string]bool{"AGE": true, "CREATED AT": true, "LAST SEEN": true}

func matchTable(want []string, got string) error {
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		if strings.TrimSpace(l) != "" {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return fmt.Errorf("no table printed")
	}
	starts := columnStarts(lines[0])
	columns := rowCells(lines[0], starts)
	wantStarts := columnStarts(want[0])
	wantColumns := rowCells(want[0], wantStarts)
	open := wantColumns[len(wantColumns)-1] == "..."
	if open {
		wantColumns, wantStarts = wantColumns[:len(wantColumns)-1], wantStarts[:len(wantStarts)-1]
	}
	if len(columns) < len(wantColumns) || !slices.Equal(columns[:len(wantColumns)], wantColumns) || !open && len(columns) != len(wantColumns) {
		return fmt.Errorf("columns are %v, the text shows %v", columns, cellsOf(want[0]))
	}
	var rows [][]string
	for _, l := range lines[1:] {
		rows = append(rows, rowCells(l, starts))
	}
	extraRows, shown := false, 0
	for _, w := range want[1:] {
		if strings.TrimSpace(w) == "..." {
			extraRows = true
			continue
		}
		shown++
		cells := rowCells(strings.TrimSuffix(strings.TrimRight(w, " "), "..."), wantStarts)
		if !slices.ContainsFunc(rows, func(row []string) bool { return rowMatches(cells, row, columns) }) {
			return fmt.Errorf("no row is %q", strings.Join(cells, "  "))
		}
	}
	if !extraRows && shown != len(rows) {
		return fmt.Errorf("%d rows printed, the text shows %d", len(rows), shown)
	}
	return nil
}

// rowMatches reports whether a printed row has the values the text shows, AGE and the like
// aside.
func rowMatches(want, row, columns []string) bool {
	for i, c := range want {
		if !unchecked[columns[i]] && !cellMatches(c, row[i]) {
			return false
		}
	}
	return true
}

var placeholder = regexp.MustCompile(`<[^<>]+>`)

// cellMatches reports whether got is what want shows: "<anything>" but <none> stands for any
// value.
func cellMatches(want, got string) bool {
	var pattern strings.Builder
	last := 0
	for _, m := range placeholder.FindAllStringIndex(want, -1) {
		if want[m[0]:m[1]] == "<none>" {
			continue
		}
		pattern.WriteString(regexp.QuoteMeta(want[last:m[0]]) + ".+")
		last = m[1]
	}
	pattern.WriteString(regexp.QuoteMeta(want[last:]))
	return regexp.MustCompile("^" + pattern.String() + "$").MatchString(got)
}

func matchLines(want []string, got string) error {
	var lines []string
	for _, l := range strings.Split(got, "\n") {
		lines = append(lines, strings.Join(strings.Fields(l), " "))
	}
	i := 0
	for _, w := range want {
		w = strings.Join(strings.Fields(w), " ")
		if w == "" || w == "..." {
			continue
		}
		for i < len(lines) && !cellMatches(w, lines[i]) {
			i++
		}
		if i == len(lines) {
			return fmt.Errorf("no line %q (in order)", w)
		}
		i++
	}
	return nil
}
