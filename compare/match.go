package compare

// twins are one baseline figure and its twins, the figures with the same
// key, in the other runs.
type twins struct {
	key string
	// at[i] is the index of the figure in run i's Figures, -1 where run
	// i lacks it; at[0] is the baseline's.
	at []int
}

// match pairs every baseline figure with its twins, in the baseline's order,
// and leaves out those that no other run has. A key that a run repeats (a
// valid run has none) counts once, at its first figure. onlyInBase[i-1]
// counts the baseline's figures that run i lacks, onlyInOther[i-1] run i's
// that the baseline lacks.
func match(inputs []Input) (shared []twins, onlyInBase, onlyInOther []int) {
	index := make([]map[string]int, len(inputs))
	for i := 1; i < len(inputs); i++ {
		figs := inputs[i].Run.Figures
		index[i] = make(map[string]int, len(figs))
		for t := range figs {
			k := figs[t].Key()
			if _, dup := index[i][k]; !dup {
				index[i][k] = t
			}
		}
	}
	onlyInBase = make([]int, len(inputs)-1)
	matched := make([]int, len(inputs)-1)
	base := inputs[0].Run.Figures
	seen := make(map[string]bool, len(base))
	for j := range base {
		k := base[j].Key()
		if seen[k] {
			continue
		}
		seen[k] = true
		tw := twins{key: k, at: make([]int, len(inputs))}
		tw.at[0] = j
		found := false
		for i := 1; i < len(inputs); i++ {
			t, ok := index[i][k]
			if !ok {
				tw.at[i] = -1
				onlyInBase[i-1]++
				continue
			}
			tw.at[i] = t
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
