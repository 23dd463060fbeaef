package compare

import (
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// A family is the tests that one fallback floor stands for (FALLBACK.md):
// most tests are a family of their own; the copies across processes pool by
// engine and handle, since what a process keeps of another's buffer (where
// the importer mapped it) is the same for every copy through that handle,
// and split by whether both processes share a GPU; the pointer chases split
// by where their working set sits, the atomics by whether their threads
// contend for one address (contended ones agree between processes within
// 0.15%, distinct addresses move by 5-11% on the same machine).

// familyOf names the family of a figure.
func familyOf(f *results.Figure) string {
	t := string(f.Test)
	switch f.Test {
	case results.IPCCERead, results.IPCCEWrite, results.IPCCEBidir:
		t = "ipc_ce"
	case results.IPCSMRead, results.IPCSMWrite, results.IPCSMBidir:
		t = "ipc_sm"
	}
	var qual []string
	if strings.HasPrefix(string(f.Test), "ipc_") {
		switch h := f.Params[results.ParamIPCHandle]; h {
		case "":
			qual = append(qual, "legacy")
		default:
			qual = append(qual, strings.TrimPrefix(h, "vmm_")+" handle")
		}
	}
	if strings.HasPrefix(string(f.Test), "ipc_") && f.Params["same_gpu"] == "true" {
		qual = append(qual, "same GPU")
	}
	if c := f.Params["cache"]; c != "" {
		qual = append(qual, c)
	}
	if f.Test == results.AtomicTput || f.Test == results.AtomicLatency {
		switch f.Params["contended"] {
		case "true":
			qual = append(qual, "contended")
		case "false":
			qual = append(qual, "distinct")
		}
	}
	if len(qual) > 0 {
		t += " (" + strings.Join(qual, ", ") + ")"
	}
	return t
}

// band is a range of sizes that one fallback floor covers: a transfer's
// bytes, or a pointer chase's working set.
type band int

const (
	bandSmall  band = iota // below 64 KiB
	bandMedium             // 64 KiB to below 1 MiB
	bandLarge              // 1 MiB to below 16 MiB
	bandLarger             // 16 MiB to below 64 MiB
	bandHuge               // 64 MiB and more
	nBands
)

// bandOf is a size's band: the bands split at 16 MiB too, where the copy
// engine's pulls are no longer queued as issued (results.UnheldPullBelow).
func bandOf(size uint64) band {
	switch {
	case size >= 64<<20:
		return bandHuge
	case size >= results.UnheldPullBelow:
		return bandLarger
	case size >= 1<<20:
		return bandLarge
	case size >= 64<<10:
		return bandMedium
	}
	return bandSmall
}

func (b band) String() string {
	return [...]string{"< 64 KiB", "64 KiB – 1 MiB", "1 – 16 MiB", "16 – 64 MiB", "≥ 64 MiB"}[b]
}

// fallbackCell is one family, band and method of the fallback table: the
// floors of figures measured one way come from runs that measured them so
// (results.MethodLabel names the method).
type fallbackCell struct {
	family string
	band   band
	method string
}

// fallbackEntry is what was measured of a cell (fallback_table.go, made by
// TestFallbackTable from the runs it names).
type fallbackEntry struct {
	Family string
	Band   band
	// Method is the figures' method (results.MethodLabel).
	Method string
	// Unit is the family's unit (a family has one).
	Unit results.Unit
	// Beyond is the largest change of a figure of the cell between two
	// runs in separate processes of one machine beyond the floor the runs'
	// own data gave it (NoiseMultiple × their rounds' CV, or their samples'
	// spread), as a fraction of the smaller median; Largest the largest
	// change itself; Figures counts the figure-pairs of runs they were taken
	// over; Where names the largest beyond.
	Beyond  float64
	Largest float64
	Figures int
	Where   string
}

// minFigurePairs is the fewest figure-pairs a cell of a method stands on
// alone: fewer (a method one or two sets measured, on one pair) take the
// largest of every method of their family and band.
const minFigurePairs = 20

// FallbackMargin is how many times the largest change that separate
// processes showed beyond their own data (fallbackEntry.Beyond) the
// fallback is: those are the largest of tens to hundreds of changes on one
// to three machines, and a new machine may do a little worse.
const FallbackMargin = 1.5

// fallbackIndex is the fallback table by cell.
var fallbackIndex = indexOf(fallbackTable)

// machineIndex is the table of what machines of one kind showed beyond
// their runs' own data (machineTable), by cell.
var machineIndex = indexOf(machineTable)

func indexOf(table []fallbackEntry) map[fallbackCell]*fallbackEntry {
	m := make(map[fallbackCell]*fallbackEntry, len(table))
	for i := range table {
		e := &table[i]
		m[fallbackCell{e.Family, e.Band, e.Method}] = e
	}
	return m
}

// floorLookup is what a table gives a figure: its floor part and what it
// came from, and the largest change itself that its cell's runs showed
// (for figures whose rounds are no replicates).
type floorLookup struct {
	floor, largest float64
	from           string
}

// fallback is the floor a figure of family fam, band b, unit u and method
// m adds to what its runs' own data give (FALLBACK.md): FallbackMargin ×
// the cell's Beyond (lookup says where a cell has no runs).
func fallback(fam string, b band, u results.Unit, m string) floorLookup {
	return lookup(fallbackTable, fallbackIndex, fam, b, u, m)
}

// machineFallback is fallback for a change between two machines of one
// kind: from what real machines of one kind showed (machineTable).
func machineFallback(fam string, b band, u results.Unit, m string) floorLookup {
	l := lookup(machineTable, machineIndex, fam, b, u, m)
	l.floor *= MachineMargin / FallbackMargin
	l.largest *= MachineMargin / FallbackMargin
	l.from = "between machines: " + l.from
	return l
}

// MachineMargin is FallbackMargin for the spread between machines: the
// largest over six to nine machines of a kind, where the next machine may
// stand further out than the next process of one (the held-out 2× H100's
// chase within L2 across processes on one GPU read 5.3% from two other
// VMs', 1.5 × what the others showed among themselves being 4.7%).
const MachineMargin = 2.0

// lookup finds a figure's cell: its family, band and method; where no run
// measured that method, the largest of the cell's other methods; then the
// family's largest in any band, the largest of the unit, and of any family.
func lookup(table []fallbackEntry, index map[fallbackCell]*fallbackEntry, fam string, b band, u results.Unit, m string) floorLookup {
	if e := index[fallbackCell{fam, b, m}]; e != nil && e.Figures >= minFigurePairs {
		return floorLookup{FallbackMargin * e.Beyond, FallbackMargin * e.Largest, fam + " " + b.String()}
	}
	best := func(ok func(e *fallbackEntry) bool, from func(e *fallbackEntry) string) (floorLookup, bool) {
		var out floorLookup
		found := false
		for i := range table {
			e := &table[i]
			if !ok(e) {
				continue
			}
			if !found || FallbackMargin*e.Beyond > out.floor {
				out = floorLookup{FallbackMargin * e.Beyond, FallbackMargin * e.Largest, from(e)}
			}
			out.largest = max(out.largest, FallbackMargin*e.Largest)
			found = true
		}
		return out, found
	}
	if l, ok := best(func(e *fallbackEntry) bool { return e.Family == fam && e.Band == b },
		func(e *fallbackEntry) string {
			return fam + " " + b.String() + ", too few runs of its method (" + m + "): the largest of every method (" + e.Method + ")"
		}); ok {
		return l
	}
	if l, ok := best(func(e *fallbackEntry) bool { return e.Family == fam },
		func(e *fallbackEntry) string {
			return fam + " " + b.String() + " unmeasured: the family's largest, " + e.Band.String()
		}); ok {
		return l
	}
	if l, ok := best(func(e *fallbackEntry) bool { return e.Unit == u },
		func(e *fallbackEntry) string {
			return fam + " unmeasured: the largest in " + string(u) + ", " + e.Family + " " + e.Band.String()
		}); ok {
		return l
	}
	// A unit no measured family has (an imported tool's): the largest of
	// the table.
	l, _ := best(func(*fallbackEntry) bool { return true },
		func(e *fallbackEntry) string {
			return fam + " unmeasured: the largest of any family, " + e.Family + " " + e.Band.String()
		})
	return l
}
