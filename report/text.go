package report

import (
	"bufio"
	"io"
	"strings"
	"unicode/utf8"
)

// WriteText writes the document as plain text for a terminal: every block
// after a blank line; level-1 headings as "==== Title ====", others as
// "--- Title ---"; the verdict framed in #; a table's title on the line above it, its columns
// aligned and indented by two spaces, its notes on the lines below; a
// figure named by its title (package plot draws it).
func (d *Document) WriteText(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, b := range d.blocks {
		bw.WriteString("\n")
		switch b.kind {
		case headingBlock:
			mark := "===="
			if b.level > 1 {
				mark = "---"
			}
			bw.WriteString(mark + " " + b.text + " " + mark + "\n")
		case paraBlock, bannerBlock:
			bw.WriteString(b.text + "\n")
		case verdictBlock:
			head := "VERDICT: " + strings.ToUpper(b.text)
			rule := strings.Repeat("#", utf8.RuneCountInString(head)+4)
			bw.WriteString(rule + "\n# " + head + " #\n" + rule + "\n" + b.line + "\n")
		case tableBlock:
			writeTextTable(bw, b.table)
		case figureBlock:
			bw.WriteString("Figure: " + b.text + " (drawn by p2pbench plot and in the PDF and Markdown reports)\n")
		}
	}
	return bw.Flush()
}

// writeTextTable writes t with its columns aligned as t.align says, two
// spaces apart.
func writeTextTable(w *bufio.Writer, t *table) {
	if t.title != "" {
		w.WriteString(t.title + "\n")
	}
	rows := append([][]string{t.header}, t.rows...)
	widths := make([]int, len(t.header))
	for _, row := range rows {
		for i := range widths {
			if i < len(row) {
				widths[i] = max(widths[i], utf8.RuneCountInString(row[i]))
			}
		}
	}
	for _, row := range rows {
		line := ""
		for i, width := range widths {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			pad := strings.Repeat(" ", width-utf8.RuneCountInString(cell))
			if i < len(t.align) && t.align[i] == 'r' {
				line += "  " + pad + cell
			} else {
				line += "  " + cell + pad
			}
		}
		w.WriteString(strings.TrimRight(line, " ") + "\n")
	}
	for _, n := range t.notes {
		w.WriteString(n + "\n")
	}
}
