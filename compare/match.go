package compare

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// Figures are matched by what they measure, not by how: the test, the
// engine's kind, the direction, the part, the pair, the size and the params
// that say what was measured (the working set, the atomic operation, the
// processes …). How it was measured — the SM kernel variant (in the engine's
// name and in the params), its grid, the copy call — is the figure's method:
// two runs that measured the same thing with another kernel are compared
// row by row, and the row shows both methods.

// methodParam reports whether a param says how a figure was measured rather
// than what: the SM copy kernel's variant and grid, the SMs' share of a
// device, the driver call that made the copy, whether an SM copy's windows
// were one launch each (results.ParamInKernelReps: a descriptive param,
// which the figure's key leaves out, so that files before it match; as a
// method it shows where a comparison spans the change).
func methodParam(name string) bool {
	switch name {
	case "variant", "block_size", "blocks_per_sm", "grid", "sm_share", "copy_call", "queue", results.ParamInKernelReps:
		return true
	}
	return false
}

// engineKind is the engine without its SM kernel variant: "sm" for
// "sm:v4_u4", the engine itself otherwise.
func engineKind(e results.Engine) results.Engine {
	if e.IsSM() {
		return results.EngineSM
	}
	return e
}

// whatParams are a figure's identifying params (results.Figure.IdentityParams)
// less its method's, as sorted k=v joined by commas.
func whatParams(f *results.Figure) string {
	return string(appendWhatParams(nil, f))
}

// appendWhatParams appends whatParams of f to b. It is asked for every
// figure of every side, in matching, planning and each row: the params are
// sorted by key in the order of their k=v texts (kvOrder) and written into
// b, where a string a param and a join were most of its time.
func appendWhatParams(b []byte, f *results.Figure) []byte {
	var room [8]string
	keys := room[:0]
	for k := range f.Params {
		if !results.DescriptiveParam(k) && !methodParam(k) {
			keys = append(keys, k)
		}
	}
	if len(keys) > 1 {
		slices.SortFunc(keys, func(x, y string) int { return kvOrder(x, f.Params[x], y, f.Params[y]) })
	}
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, k...)
		b = append(b, '=')
		b = append(b, f.Params[k]...)
	}
	return b
}

// kvOrder orders two params as their texts k=v do, without making them:
// by their keys, where neither key begins the other; else by '=' against
// the longer key's next byte; else (a key with '=' in it) by the texts.
func kvOrder(k1, v1, k2, v2 string) int {
	n := min(len(k1), len(k2))
	if c := strings.Compare(k1[:n], k2[:n]); c != 0 {
		return c
	}
	switch {
	case len(k1) < len(k2) && k2[n] != '=':
		return cmp.Compare('=', k2[n])
	case len(k2) < len(k1) && k1[n] != '=':
		return cmp.Compare(k1[n], '=')
	}
	return strings.Compare(k1+"="+v1, k2+"="+v2)
}

// methodOf says how a figure was measured: its SM kernel variant and the
// method params, as sorted k=v joined by commas ("" for none).
func methodOf(f *results.Figure) string {
	var kv []string
	for k, v := range f.Params {
		if methodParam(k) {
			kv = append(kv, k+"="+v)
		}
	}
	if v := f.Engine.Variant(); v != "" && f.Params["variant"] == "" {
		kv = append(kv, "variant="+v)
	}
	slices.Sort(kv)
	return strings.Join(kv, ",")
}

// measureKey is what a figure measured: results.Figure.Key without the
// method: test|engine kind|direction|part|src|dst|size|whatParams.
func measureKey(f *results.Figure) string {
	b := make([]byte, 0, 96)
	b = append(b, f.Test...)
	b = append(b, '|')
	b = append(b, engineKind(f.Engine)...)
	b = append(b, '|')
	b = append(b, f.Direction...)
	b = append(b, '|')
	b = append(b, f.Part...)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(f.Src), 10)
	b = append(b, '|')
	b = strconv.AppendInt(b, int64(f.Dst), 10)
	b = append(b, '|')
	b = strconv.AppendUint(b, f.Size, 10)
	b = append(b, '|')
	return string(appendWhatParams(b, f))
}

// twins are one figure of the baseline and its twins, the figures that
// measured the same, on every side.
type twins struct {
	key string
	// figs[i] are side i's figures of the key, one per run that has it
	// (none where side i lacks it); figs[0] are the baseline's. at[i] is
	// side i's keyFigs of them (nil where side i lacks it).
	figs [][]*results.Figure
	at   []*keyFigs
	// omitted[i] says why side i's plan left out a baseline figure it
	// lacks ("" where it has it, or lost it: lost.go).
	omitted []string
}

// runKeys gives each figure of a run the key it is matched by: its
// measureKey, or, where the run measured the same thing by two methods or
// more (a sweep of kernel variants), its full results.Figure.Key, so that
// each method stays a row of its own.
func runKeys(r *results.Run) []string {
	keys := make([]string, len(r.Figures))
	count := make(map[string]int, len(r.Figures))
	for j := range r.Figures {
		keys[j] = measureKey(&r.Figures[j])
		count[keys[j]]++
	}
	for j, k := range keys {
		if count[k] > 1 {
			keys[j] = r.Figures[j].Key()
		}
	}
	return keys
}

// match pairs every baseline figure with its twins, in the baseline's order
// (a side that lacks it has none), then lists the keys of figures only the
// other sides have. onlyInBase[i-1] counts the baseline's figures that side
// i lacks, onlyInOther[i-1] side i's that the baseline lacks.
func match(sides []*sideData) (all []twins, onlyInBase, onlyInOther []int) {
	onlyInBase = make([]int, len(sides)-1)
	matched := make([]int, len(sides)-1)
	all = make([]twins, 0, len(sides[0].order))
	// One array each for the twins' figures and keyFigs.
	figs := make([][]*results.Figure, len(sides)*len(sides[0].order))
	at := make([]*keyFigs, len(figs))
	for _, k := range sides[0].order {
		tw := twins{key: k, figs: figs[:len(sides):len(sides)], at: at[:len(sides):len(sides)]}
		figs, at = figs[len(sides):], at[len(sides):]
		for i, s := range sides {
			kf := s.at(k)
			if kf == nil {
				onlyInBase[i-1]++
				continue
			}
			tw.figs[i], tw.at[i] = kf.figs, kf
			if i > 0 {
				matched[i-1]++
			}
		}
		all = append(all, tw)
	}
	onlyInOther = make([]int, len(sides)-1)
	for i := range onlyInOther {
		onlyInOther[i] = len(sides[i+1].index) - matched[i]
	}
	return all, onlyInBase, onlyInOther
}
