package results

import "github.com/p2pbench/p2pbench/figstats"

// Efficiency is what the NVLink counters say about one kind of bandwidth
// figure (a test, direction and part at one size), over the pairs that
// recorded them.
type Efficiency struct {
	Test      Test
	Engine    Engine
	Direction Direction
	Part      Part
	// Open is the IPC figures' ParamIPCOpen: IPCOpenPeerDevice for
	// copies with the peer's buffer opened on the peer's device; Handle
	// their ParamIPCHandle (VMM handles).
	Open   string
	Handle string
	Size   uint64
	Pairs  int
	// GBps is the median over pairs of the figures' medians.
	GBps float64
	// Wire is the median over pairs of the raw bytes the links carried per
	// payload byte in the direction the figure's data moved; Back, for
	// figures whose data moved one way only, the raw bytes counted in the
	// other direction per payload byte (0 otherwise). On the 2× H200 this
	// is ~0.64 for the copy engine and ~0.79 for SM copies, far more than
	// those directions' data figures lose when both directions are busy:
	// the counter includes traffic that gives way to payload.
	Wire, Back float64
	// WireGBps = GBps × Wire: the rate at which the links carried bytes of
	// every kind in the data's direction while the figure ran.
	WireGBps float64
}

// LinkEfficiency summarises the link traffic of run's figures at size, one
// entry per test, engine, direction and part, in the order the figures
// come. Figures without traffic, with an error or failed data are left out.
func LinkEfficiency(run *Run, size uint64) []Efficiency {
	type key struct {
		test   Test
		engine Engine
		dir    Direction
		part   Part
		open   string
		handle string
	}
	type acc struct {
		gbps, wire, back []float64
	}
	var order []key
	accs := map[key]*acc{}
	for i := range run.Figures {
		f := &run.Figures[i]
		if f.Traffic == nil || f.Size != size || f.Stats == nil || f.Failed() || f.Part == PartTotal || f.Unit != UnitGBps {
			continue
		}
		c := f.Traffic.Src // the device the data left
		other := f.Traffic.Dst
		if f.Part == PartReverse {
			c, other = other, c
		}
		if c.TxData == 0 {
			continue
		}
		k := key{f.Test, f.Engine, f.Direction, f.Part, f.Params[ParamIPCOpen], f.Params[ParamIPCHandle]}
		a := accs[k]
		if a == nil {
			a = &acc{}
			accs[k] = a
			order = append(order, k)
		}
		a.gbps = append(a.gbps, f.Stats.Median)
		a.wire = append(a.wire, float64(c.TxRaw)/float64(c.TxData))
		if other.TxData == 0 {
			a.back = append(a.back, float64(other.TxRaw)/float64(c.TxData))
		}
	}
	out := make([]Efficiency, 0, len(order))
	for _, k := range order {
		a := accs[k]
		e := Efficiency{Test: k.test, Engine: k.engine, Direction: k.dir, Part: k.part, Open: k.open, Handle: k.handle, Size: size, Pairs: len(a.gbps),
			GBps: figstats.Median(a.gbps), Wire: figstats.Median(a.wire), Back: figstats.Median(a.back)}
		e.WireGBps = e.GBps * e.Wire
		out = append(out, e)
	}
	return out
}

// Label names the row for a reader (KindLabel, marked for VMM handles).
func (e Efficiency) Label() string {
	if e.Handle != "" {
		return KindLabel(e.Test, e.Direction, e.Part, e.Open) + " [VMM handles]"
	}
	return KindLabel(e.Test, e.Direction, e.Part, e.Open)
}

// KindLabel names a kind of figure for a reader: the test's short name, for
// a test both ways the direction and part, and a mark for IPC copies with
// the peer's buffer opened on the peer's GPU (open is the ParamIPCOpen
// value): "SM read", "CE both ways, reading (forward)", "IPC CE write
// [opened on peer GPU]".
func KindLabel(t Test, d Direction, p Part, open string) string {
	info := t.Info()
	l := info.Short
	if l == "" {
		l = string(t)
	}
	if info.BothWays {
		if w := map[Direction]string{DirRead: "reading", DirWrite: "writing"}[d]; w != "" {
			l += ", " + w
		}
		if p != PartNone {
			l += " (" + string(p) + ")"
		}
	}
	if open == IPCOpenPeerDevice {
		l += " [opened on peer GPU]"
	}
	return l
}
