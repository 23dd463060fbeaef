package compare

import (
	"hash/maphash"

	"github.com/p2pbench/p2pbench/results"
)

// matching pairs every baseline figure with its twin (the figure with the
// same key) in each other run.
type matching struct {
	baseKeys []string
	// dupBase[j]: base figure j repeats the key of an earlier one (a valid
	// run has none) and is left out.
	dupBase []bool
	// twin[i][j] is the index in run i of base figure j's twin, -1 for
	// none; twin[0] is unused.
	twin                    [][]int32
	onlyInBase, onlyInOther []int
}

// match pairs figures by key. Runs made by the same command list their
// figures in the same order, so a figure is first looked for at its own
// position; keys are indexed only for a run where that fails. On runs of
// hundreds of thousands of figures this saves most of the time a map of keys
// costs.
func match(inputs []Input) *matching {
	base := inputs[0].Run.Figures
	m := &matching{twin: make([][]int32, len(inputs)),
		onlyInBase: make([]int, len(inputs)-1), onlyInOther: make([]int, len(inputs)-1)}
	m.baseKeys = keysOf(base)
	baseSet := newKeySet(len(base))
	m.dupBase = make([]bool, len(base))
	for j, k := range m.baseKeys {
		if _, dup := baseSet.add(k, int32(j)); dup {
			m.dupBase[j] = true
		}
	}
	for i := 1; i < len(inputs); i++ {
		other := inputs[i].Run.Figures
		twin := make([]int32, len(base))
		m.twin[i] = twin
		aligned := len(other) == len(base)
		if aligned {
			ok := parallel(len(base), func(lo, hi int) bool {
				for j := lo; j < hi; j++ {
					if !sameFigure(&base[j], &other[j]) {
						return false
					}
					twin[j] = int32(j)
				}
				return true
			})
			for _, o := range ok {
				aligned = aligned && o
			}
		}
		if aligned {
			// The same keys in the same order: nothing is only in one run.
			continue
		}
		otherKeys := keysOf(other)
		otherSet := newKeySet(len(other))
		for t, k := range otherKeys {
			otherSet.add(k, int32(t))
		}
		matched := 0
		for j, k := range m.baseKeys {
			twin[j] = -1
			if m.dupBase[j] {
				continue
			}
			if t, ok := otherSet.find(k); ok {
				twin[j] = t
				matched++
			} else {
				m.onlyInBase[i-1]++
			}
		}
		m.onlyInOther[i-1] = otherSet.len() - matched
	}
	return m
}

// keysOf computes every figure's key, on every processor.
func keysOf(figs []results.Figure) []string {
	keys := make([]string, len(figs))
	parallel(len(figs), func(lo, hi int) struct{} {
		for j := lo; j < hi; j++ {
			keys[j] = figs[j].Key()
		}
		return struct{}{}
	})
	return keys
}

// sameFigure reports whether two figures have the same key, without
// building it.
func sameFigure(a, b *results.Figure) bool {
	if a.Test != b.Test || a.Engine != b.Engine || a.Direction != b.Direction || a.Part != b.Part ||
		a.Src != b.Src || a.Dst != b.Dst || a.Size != b.Size {
		return false
	}
	n := 0
	for k, v := range a.Params {
		if results.DescriptiveParam(k) {
			continue
		}
		if w, ok := b.Params[k]; !ok || w != v {
			return false
		}
		n++
	}
	for k := range b.Params {
		if !results.DescriptiveParam(k) {
			n--
		}
	}
	return n == 0
}

// keySet is a set of keys with an index each, hashed to 64 bits: maps of
// long strings cost most of their time hashing and comparing them.
type keySet struct {
	seed  maphash.Seed
	first map[uint64]keyAt
	// clash holds keys whose hash an earlier, different key had.
	clash map[string]int32
}

type keyAt struct {
	key string
	idx int32
}

func newKeySet(n int) *keySet {
	return &keySet{seed: maphash.MakeSeed(), first: make(map[uint64]keyAt, n)}
}

// add records k at idx unless it is there, and returns where it is.
func (s *keySet) add(k string, idx int32) (int32, bool) {
	h := maphash.String(s.seed, k)
	if e, ok := s.first[h]; ok {
		if e.key == k {
			return e.idx, true
		}
		if at, ok := s.clash[k]; ok {
			return at, true
		}
		if s.clash == nil {
			s.clash = map[string]int32{}
		}
		s.clash[k] = idx
		return idx, false
	}
	s.first[h] = keyAt{k, idx}
	return idx, false
}

func (s *keySet) find(k string) (int32, bool) {
	if e, ok := s.first[maphash.String(s.seed, k)]; ok && e.key == k {
		return e.idx, true
	}
	at, ok := s.clash[k]
	return at, ok
}

func (s *keySet) len() int { return len(s.first) + len(s.clash) }
