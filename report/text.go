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
	for i, b := range d.blocks {
		if i > 0 || d.width == 0 { // a screen starts on its first line
			bw.WriteString("\n")
		}
		switch b.kind {
		case headingBlock:
			mark := "===="
			if b.level > 1 {
				mark = "---"
			}
			bw.WriteString(mark + " " + b.text + " " + mark + "\n")
		case paraBlock, bannerBlock:
			bw.WriteString(Wrap(b.text, d.width) + "\n")
		case verdictBlock:
			head := "VERDICT: " + strings.ToUpper(b.text)
			rule := strings.Repeat("#", utf8.RuneCountInString(head)+4)
			bw.WriteString(rule + "\n# " + head + " #\n" + rule + "\n" + Wrap(b.line, d.width) + "\n")
		case tableBlock:
			writeTextTable(bw, b.table, d.width)
		case figureBlock:
			bw.WriteString("Figure: " + b.text + " (drawn by p2pbench plot and in the PDF and Markdown reports)\n")
		}
	}
	return bw.Flush()
}

// writeTextTable writes t with its columns aligned as t.align says, two
// spaces apart; where width is set, a row wider than it has its last
// column wrapped under itself, and the title and notes are wrapped.
func writeTextTable(w *bufio.Writer, t *table, width int) {
	if t.title != "" {
		w.WriteString(Wrap(t.title, width) + "\n")
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
		line, last := "", 0
		for i, cw := range widths {
			cell := ""
			if i < len(row) {
				cell = row[i]
			}
			last = utf8.RuneCountInString(line) + 2
			pad := strings.Repeat(" ", cw-utf8.RuneCountInString(cell))
			if i < len(t.align) && t.align[i] == 'r' {
				line += "  " + pad + cell
			} else {
				line += "  " + cell + pad
			}
		}
		line = strings.TrimRight(line, " ")
		if width > 0 && utf8.RuneCountInString(line) > width && len(widths) > 0 && width-last >= 20 {
			// The last column, wrapped under itself.
			runes := []rune(line)
			cells := wrap(string(runes[last:]), width-last)
			line = string(runes[:last]) + strings.Join(cells, "\n"+strings.Repeat(" ", last))
		}
		w.WriteString(line + "\n")
	}
	for _, n := range t.notes {
		w.WriteString(Wrap(n, width) + "\n")
	}
}
