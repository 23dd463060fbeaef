package compare

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// A figure carries the method that made it: the params that say how (the
// SM kernel's variant and grid, the copy call, the queue: match.go) and the
// history of how p2pbench measures (results.MethodOf: the changes its build
// includes). Where the baseline and a side measured a figure by different
// methods, the row says what changed, and the change is not gated unless
// the options ask (Options.AcrossMethods): a new build's better timing is
// no regression of the machine, nor its loss an improvement.

// sideMethod is how one side measured a figure.
type sideMethod struct {
	// tool is "p2pbench", or the other tool and its version of an import;
	// toolName the other tool's name.
	tool, toolName string
	params         string
	changes        []int
	// known: the history says how (false for an import, or a build the
	// history does not hold).
	known bool
	// build names the side's build where its method is unknown.
	build string
}

func methodIn(run *results.Run, f *results.Figure) sideMethod {
	m := sideMethod{tool: "p2pbench", params: methodOf(f)}
	if run.Imported != nil {
		m.tool, m.toolName = toolText(run), run.Tool.Name
		return m
	}
	m.changes, m.known = run.MethodOf(f)
	if !m.known {
		m.build = toolText(run)
	}
	return m
}

// maxMethodTexts is how many of the history's changes a row names before
// it counts the rest.
const maxMethodTexts = 2

// methodChange says in words what changed from the baseline's method b to
// side's o ("" for nothing known): the params, and the changes of the
// history o has and b has not (or the reverse).
func methodChange(b, o sideMethod, f *results.Figure) string {
	var parts []string
	if b.tool != o.tool {
		tool := "another tool: " + b.tool + " → " + o.tool
		var known []string
		for _, m := range []sideMethod{b, o} {
			known = append(known, results.OtherToolDifferences(m.toolName, f)...)
		}
		if len(known) > 0 {
			tool += " (" + strings.Join(known, "; ") + ")"
		}
		parts = append(parts, tool)
	}
	if b.params != o.params {
		parts = append(parts, paramsOrNone(b.params)+" → "+paramsOrNone(o.params))
	}
	if b.known && o.known {
		added, undone := results.MethodChangesBetween(b.changes, o.changes)
		if len(added) > 0 {
			parts = append(parts, "since: "+listSome(added))
		}
		if len(undone) > 0 {
			parts = append(parts, "the baseline's build has what this one has not: "+listSome(undone))
		}
	}
	return strings.Join(parts, "; ")
}

func paramsOrNone(p string) string {
	if p == "" {
		return "(none)"
	}
	return p
}

// listSome joins the first maxMethodTexts texts and counts the rest.
func listSome(texts []string) string {
	if len(texts) <= maxMethodTexts {
		return strings.Join(texts, "; ")
	}
	return strings.Join(texts[:maxMethodTexts], "; ") + "; and " + strconv.Itoa(len(texts)-maxMethodTexts) + " more"
}

// unknownMethods names, per side, a build of a run of the side whose
// methods the history does not hold ("" for none; nil where every side's
// are known). An import's method is its tool's (imports.go).
func unknownMethods(inputs []Input) []string {
	out := make([]string, len(inputs))
	any := false
	for i, in := range inputs {
		for _, r := range in.Runs {
			if r.Imported != nil || len(r.Figures) == 0 {
				continue
			}
			if _, ok := r.MethodOf(&r.Figures[0]); !ok {
				out[i], any = toolText(r), true
				break
			}
		}
	}
	if !any {
		return nil
	}
	return out
}

// unknownMethodLines say which sides' methods are unknown.
func unknownMethodLines(r *Result) []string {
	names := shortNames(r)
	var lines []string
	for i, b := range r.UnknownMethods {
		if b != "" {
			lines = append(lines, fmt.Sprintf("How %s measured is unknown: its build (%s) is not one of p2pbench's history; its rows are gated as if no method had changed.", names[i], b))
		}
	}
	return lines
}
