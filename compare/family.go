package compare

import (
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// A family is the tests that one fallback floor stands for (FALLBACK.md):
// most tests are a family of their own; the copies across processes pool by
// engine and handle, since what a process keeps of another's buffer (where
// the importer mapped it) is the same for every copy through that handle;
// and the pointer chases split by where their working set sits.

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
	if c := f.Params["cache"]; c != "" {
		qual = append(qual, c)
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
	bandLarge              // 1 MiB to below 64 MiB
	bandHuge               // 64 MiB and more
	nBands
)

func bandOf(size uint64) band {
	switch {
	case size >= 64<<20:
		return bandHuge
	case size >= 1<<20:
		return bandLarge
	case size >= 64<<10:
		return bandMedium
	}
	return bandSmall
}

func (b band) String() string {
	return [...]string{"< 64 KiB", "64 KiB – 1 MiB", "1 – 64 MiB", "≥ 64 MiB"}[b]
}

// fallbackCell is one family and band of the fallback table.
type fallbackCell struct {
	family string
	band   band
}

// fallbackEntry is what was measured of a cell (fallback_table.go, made by
// TestFallbackTable from the runs it names).
type fallbackEntry struct {
	Family string
	Band   band
	// Unit is the family's unit (a family has one).
	Unit results.Unit
	// Beyond is the largest change of a figure of the cell between two
	// runs in separate processes of one machine beyond the floor the runs'
	// own data gave it (NoiseMultiple × their rounds' CV, or their samples'
	// spread), as a fraction of the smaller median; Figures counts the
	// figure-pairs of runs it was taken over; Where names the largest.
	Beyond  float64
	Figures int
	Where   string
}

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
		m[fallbackCell{e.Family, e.Band}] = e
	}
	return m
}

// fallback is the floor a figure of family fam, band b and unit u adds to
// what its runs' own data give (FALLBACK.md): FallbackMargin × the cell's
// Beyond; for a cell without measurements the family's largest in any
// band, and for a family without any the largest of every family of the
// unit. from names what it came from.
func fallback(fam string, b band, u results.Unit) (floor float64, from string) {
	return lookup(fallbackTable, fallbackIndex, fam, b, u)
}

// machineFallback is fallback for a change between two machines of one
// kind: from what real machines of one kind showed (machineTable).
func machineFallback(fam string, b band, u results.Unit) (floor float64, from string) {
	floor, from = lookup(machineTable, machineIndex, fam, b, u)
	return floor, "between machines: " + from
}

func lookup(table []fallbackEntry, index map[fallbackCell]*fallbackEntry, fam string, b band, u results.Unit) (floor float64, from string) {
	if e := index[fallbackCell{fam, b}]; e != nil {
		return FallbackMargin * e.Beyond, fam + " " + b.String()
	}
	largest, at := -1.0, ""
	for _, e := range table {
		if e.Family == fam && e.Beyond > largest {
			largest, at = e.Beyond, fam+" "+e.Band.String()
		}
	}
	if largest >= 0 {
		return FallbackMargin * largest, fam + " " + b.String() + " unmeasured: the family's largest, " + at
	}
	for _, e := range table {
		if e.Unit == u && e.Beyond > largest {
			largest, at = e.Beyond, e.Family+" "+e.Band.String()
		}
	}
	if largest >= 0 {
		return FallbackMargin * largest, fam + " unmeasured: the largest in " + string(u) + ", " + at
	}
	// A unit no measured family has (an imported tool's): the largest of
	// the table.
	for _, e := range table {
		if e.Beyond > largest {
			largest, at = e.Beyond, e.Family+" "+e.Band.String()
		}
	}
	return FallbackMargin * max(largest, 0), fam + " unmeasured: the largest of any family, " + at
}
