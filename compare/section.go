package compare

import (
	"slices"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// section is the rows of one test, engine, direction, part and unit, which
// the text and Markdown outputs show as one table: its rows differ only by
// pair, size and params.
type section struct {
	title string
	rows  []*Row
	// params[i] is row i's params less those every row of the section
	// shares, which go in the title.
	params    []string
	hasParams bool
	// hasMethods: some row was measured by different methods, shown in a
	// last column.
	hasMethods bool
}

// sectionKey is what puts rows in one section (Row.Engine is the engine's
// kind: the SM kernel variants of a sweep share a section).
type sectionKey struct {
	test          results.Test
	engine        results.Engine
	direction     results.Direction
	part          results.Part
	unit          results.Unit
	lowerIsBetter bool
}

// sections groups the rows, in the order their first rows come.
func sections(r *Result) []*section {
	var out []*section
	byKey := map[sectionKey]*section{}
	for i := range r.Rows {
		row := &r.Rows[i]
		k := sectionKey{row.Test, row.Engine, row.Direction, row.Part, row.Unit, row.LowerIsBetter}
		s := byKey[k]
		if s == nil {
			s = &section{title: k.title()}
			byKey[k] = s
			out = append(out, s)
		}
		s.rows = append(s.rows, row)
		s.hasMethods = s.hasMethods || row.MethodChanged
	}
	for _, s := range out {
		s.splitParams()
	}
	return out
}

// title is "Copy engine read (pull) · copy_engine · read  [ce_read, GB/s,
// higher is better]": the test's title, what sets the section apart, and
// what its figures are.
func (k sectionKey) title() string {
	parts := []string{k.test.Title(), string(k.engine)}
	for _, s := range []string{string(k.direction), string(k.part)} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	better := "higher is better"
	if k.lowerIsBetter {
		better = "lower is better"
	}
	return strings.Join(parts, " · ") + "  [" + string(k.test) + ", " + string(k.unit) + ", " + better + "]"
}

// splitParams moves the params every row shares into the title.
func (s *section) splitParams() {
	count := map[string]int{} // rows with each k=v
	for _, row := range s.rows {
		for _, kv := range paramList(row.Params) {
			count[kv]++
		}
	}
	var common []string
	for kv, n := range count {
		if n == len(s.rows) {
			common = append(common, kv)
		}
	}
	if len(common) > 0 {
		slices.Sort(common)
		s.title += "  " + strings.Join(common, ",")
	}
	s.params = make([]string, len(s.rows))
	for i, row := range s.rows {
		kept := slices.DeleteFunc(paramList(row.Params), func(kv string) bool { return count[kv] == len(s.rows) })
		s.params[i] = strings.Join(kept, ",")
		s.hasParams = s.hasParams || s.params[i] != ""
	}
}

// paramList splits Row.Params into its k=v.
func paramList(params string) []string {
	if params == "" {
		return nil
	}
	return strings.Split(params, ",")
}

// lead is the number of columns before the other runs': pair, size, params
// where the section has them, and the baseline's cell.
func (s *section) lead() int {
	if s.hasParams {
		return 4
	}
	return 3
}

// changeColumn is the column of the change of run k+1 against the
// baseline; the run's cell is before it, the p-value after.
func (s *section) changeColumn(k int) int { return s.lead() + 3*k + 1 }

// header is the table's first row, pHead the p-value columns' name.
func (s *section) header(names []string, pHead string) []string {
	h := []string{"pair", "size"}
	if s.hasParams {
		h = append(h, "params")
	}
	h = append(h, names[0])
	for _, n := range names[1:] {
		h = append(h, n, "vs "+names[0], pHead)
	}
	if s.hasMethods {
		h = append(h, "method")
	}
	return h
}

// cells are row i's cells, in header's columns.
func (s *section) cells(i int) []string {
	row := s.rows[i]
	c := []string{PairText(row.Src, row.Dst), results.FormatBytes(row.Size)}
	if s.hasParams {
		c = append(c, s.params[i])
	}
	c = append(c, cellText(row.Cells[0]))
	for k, ch := range row.Changes {
		c = append(c, cellText(row.Cells[k+1]), changeText(ch), pText(ch, row.Cells[0], row.Cells[k+1]))
	}
	if s.hasMethods {
		m := ""
		if row.MethodChanged {
			m = methodText(*row)
		}
		c = append(c, m)
	}
	return c
}
