package compare

import "github.com/p2pbench/p2pbench/results"

// twins are one figure of the baseline and its twins, the figures with the
// same key, on every side.
type twins struct {
	key string
	// figs[i] are side i's figures of the key, one per run that has it
	// (none where side i lacks it); figs[0] are the baseline's.
	figs [][]*results.Figure
}

// sideIndex maps each key to a side's figures of it, and lists the keys in
// the order they first come in the side's runs. A key that a run repeats
// (a valid run has none) counts once, at its first figure.
func sideIndex(in Input) (map[string][]*results.Figure, []string) {
	n := 0
	for _, r := range in.Runs {
		n = max(n, len(r.Figures))
	}
	index := make(map[string][]*results.Figure, n)
	order := make([]string, 0, n)
	for _, r := range in.Runs {
		seen := make(map[string]bool, len(r.Figures))
		for j := range r.Figures {
			f := &r.Figures[j]
			k := f.Key()
			if seen[k] {
				continue
			}
			seen[k] = true
			if _, ok := index[k]; !ok {
				order = append(order, k)
			}
			index[k] = append(index[k], f)
		}
	}
	return index, order
}

// match pairs every baseline figure with its twins, in the baseline's order,
// and leaves out those that no other side has. onlyInBase[i-1] counts the
// baseline's figures that side i lacks, onlyInOther[i-1] side i's that the
// baseline lacks.
func match(inputs []Input) (shared []twins, onlyInBase, onlyInOther []int) {
	index := make([]map[string][]*results.Figure, len(inputs))
	var order []string
	for i, in := range inputs {
		var o []string
		index[i], o = sideIndex(in)
		if i == 0 {
			order = o
		}
	}
	onlyInBase = make([]int, len(inputs)-1)
	matched := make([]int, len(inputs)-1)
	for _, k := range order {
		tw := twins{key: k, figs: make([][]*results.Figure, len(inputs))}
		tw.figs[0] = index[0][k]
		found := false
		for i := 1; i < len(inputs); i++ {
			figs, ok := index[i][k]
			if !ok {
				onlyInBase[i-1]++
				continue
			}
			tw.figs[i] = figs
			matched[i-1]++
			found = true
		}
		if found {
			shared = append(shared, tw)
		}
	}
	onlyInOther = make([]int, len(inputs)-1)
	for i := range onlyInOther {
		onlyInOther[i] = len(index[i+1]) - matched[i]
	}
	return shared, onlyInBase, onlyInOther
}
