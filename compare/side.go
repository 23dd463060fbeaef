package compare

import (
	"sync"

	"golang.org/x/perf/benchmath"

	"github.com/p2pbench/p2pbench/results"
)

// sideData is what a comparison takes from one side alone: what its units
// carry, its plan, its figures by key, and — made when a row first needs
// them — each key's cell, units and method. A comparison makes one a side;
// a caller that compares one side many times (the tables of FALLBACK.md
// compare every two runs of a set, each run some twenty times) keeps it in
// a sideMemo and summarizes each figure once. Once made, it is read only.
type sideData struct {
	replicates string
	// process: every run of the side has process replicates.
	process bool
	plan    *sidePlan
	// index maps a key (runKeys) to the side's figures of it, keys[i];
	// order lists the keys as they first come in the side's runs.
	index map[string]int32
	keys  []keyFigs
	order []string
	// th and confidence are the comparison's (its alpha and confidence),
	// which the cells and units are made at.
	th         *benchmath.Thresholds
	confidence float64
}

// keyFigs are a side's figures of one key, one per run that has it, with
// what a row takes of them, made once.
type keyFigs struct {
	figs []*results.Figure
	// run is the run of figs[0].
	run *results.Run

	// kept holds what rows take of the figures, on a side that is kept
	// (nil on others).
	kept *keptKey
}

// keptKey is what rows take of a key's figures on a kept side, made when a
// row first wants it (head of the baseline's figures only).
type keptKey struct {
	sumOnce  sync.Once
	sum      *keySummary
	headOnce sync.Once
	head     *rowHead
}

// keySummary is a side's cell of a key and what the noise model takes of
// its units (summarize, spreadOf, unitRange), and how it was measured.
type keySummary struct {
	method               sideMethod
	cell                 Cell
	side                 side
	warns                []error
	rounds, runs         unitSpread
	roundRange, runRange [2]float64
}

// rowHead is what a row takes of its baseline figure's identity.
type rowHead struct {
	key, params string
	family      string
}

// newSide makes the sideData of in at th's alpha and confidence.
func newSide(in Input, th *benchmath.Thresholds, confidence float64) *sideData {
	s := &sideData{replicates: replicatesOf(in), plan: planOf(in), th: th, confidence: confidence}
	s.process = s.replicates == ReplicatesProcess
	n := 0
	for _, r := range in.Runs {
		n = max(n, len(r.Figures))
	}
	// A key that a run repeats (a valid run has none) counts once, at its
	// first figure.
	s.index = make(map[string]int32, n)
	s.order = make([]string, 0, n)
	s.keys = make([]keyFigs, 0, n)
	// The figures of a side of one run, one a key, share one array.
	var one []*results.Figure
	if len(in.Runs) == 1 {
		one = make([]*results.Figure, 0, n)
	}
	for _, r := range in.Runs {
		keys := runKeys(r)
		seen := make(map[string]bool, len(r.Figures))
		for j := range r.Figures {
			k := keys[j]
			if seen[k] {
				continue
			}
			seen[k] = true
			i, ok := s.index[k]
			if !ok {
				i = int32(len(s.keys))
				s.index[k] = i
				s.order = append(s.order, k)
				s.keys = append(s.keys, keyFigs{run: r})
			}
			kf := &s.keys[i]
			if one != nil {
				one = append(one, &r.Figures[j])
				kf.figs = one[len(one)-1 : len(one) : len(one)]
				continue
			}
			kf.figs = append(kf.figs, &r.Figures[j])
		}
	}
	return s
}

// at is the side's keyFigs of key k, or nil.
func (s *sideData) at(k string) *keyFigs {
	if i, ok := s.index[k]; ok {
		return &s.keys[i]
	}
	return nil
}

// summary is kf's keySummary on side s: kept on a kept side (sideMemo),
// made afresh on a side of one comparison, whose rows ask each key once (so
// that its units are garbage after their row).
func (kf *keyFigs) summary(s *sideData) *keySummary {
	k := kf.kept
	if k == nil {
		return kf.summarize(s)
	}
	k.sumOnce.Do(func() { k.sum = kf.summarize(s) })
	return k.sum
}

func (kf *keyFigs) summarize(s *sideData) *keySummary {
	m := &keySummary{method: methodIn(kf.run, kf.figs[0])}
	m.cell, m.side, m.warns = summarize(kf.figs, s.process, s.th, s.confidence)
	m.rounds, m.runs = spreadOf(m.side.rounds), spreadOf(m.side.runs)
	m.roundRange, m.runRange = unitRange(m.side.rounds), unitRange(m.side.runs)
	return m
}

// rowHead is what a row takes of kf's first figure as side s's, the
// baseline's.
func (kf *keyFigs) rowHead(s *sideData) *rowHead {
	head := func() *rowHead {
		f := kf.figs[0]
		return &rowHead{key: f.Key(), params: whatParams(f), family: familyOf(f)}
	}
	k := kf.kept
	if k == nil {
		return head()
	}
	k.headOnce.Do(func() { k.head = head() })
	return k.head
}

// sideMemo keeps the sideData of single runs that are compared many times,
// at one alpha and confidence each. It is for runs that nothing changes
// while it holds them (the tests' shared runs, readShared); it is safe for
// concurrent use.
type sideMemo struct {
	mu    sync.Mutex
	sides map[sideMemoKey]*sideData
}

type sideMemoKey struct {
	run               *results.Run
	alpha, confidence float64
}

// side is the sideData of in: kept in m where in is one run, made afresh
// otherwise (or where m is nil).
func (m *sideMemo) side(in Input, th *benchmath.Thresholds, confidence float64) *sideData {
	if m == nil || len(in.Runs) != 1 {
		return newSide(in, th, confidence)
	}
	k := sideMemoKey{in.Runs[0], th.CompareAlpha, confidence}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sides[k]
	if s == nil {
		s = newSide(in, th, confidence)
		kept := make([]keptKey, len(s.keys))
		for i := range s.keys {
			s.keys[i].kept = &kept[i]
		}
		if m.sides == nil {
			m.sides = map[sideMemoKey]*sideData{}
		}
		m.sides[k] = s
	}
	return s
}
