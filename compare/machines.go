package compare

import (
	"fmt"
	"slices"
	"strings"
)

// Which machine a run measured is what its GPUs are: their UUIDs (and the
// system's serial where both runs read one). Two machines of one kind —
// the same GPUs and links, two VMs of one cloud, two nodes of a fleet —
// differ by more than one machine's runs do: on the 2× H200 VMs of the
// reference sets, latencies and atomics 2–9% apart that each VM
// reproduced within ±0.5 ns. So a change between two machines is not
// gated by one machine's floors: without Options.AcrossMachines it is
// shown and not flagged; with it, each figure is held to the spread
// between machines of that kind that real VMs showed (machineFallback,
// FALLBACK.md). Machines of different kinds are never gated. A figure the
// baseline measured and a run lost is a regression on any machine. Two
// machines are never called the same without their UUIDs: a run that
// records none (an import, a file written by hand) is of an unknown
// machine, which the output says, and is gated as the baseline's (an
// import's single values are not gated anyway).

// Whether a side measured the baseline's machine (MachineMatch.Same).
const (
	MachineSame      = "same"
	MachineDifferent = "different"
	MachineUnknown   = "unknown"
)

// MachineMatch says whether a side measured the baseline's machine.
type MachineMatch struct {
	// Side is the side's index in Result.Names (1 or more).
	Side int    `json:"side"`
	Same string `json:"same"`
	// Kind: the machines are of one kind (the same GPUs, in number and
	// model, and the same links).
	Kind bool `json:"same_kind"`
	// Why says what tells, in words.
	Why string `json:"why"`
}

// machineID is what identifies a side's machine.
type machineID struct {
	// gpus are the GPUs' UUIDs, sorted; nil where a run records none.
	gpus   []string
	system string
	kind   string
	// several: the side's runs are of more than one machine.
	several bool
}

func machineOf(in Input) machineID {
	var id machineID
	for k, r := range in.Runs {
		var gpus []string
		for _, d := range r.Environment.Devices {
			if d.UUID == "" {
				gpus = nil
				break
			}
			gpus = append(gpus, d.UUID)
		}
		if len(r.Environment.Devices) == 0 {
			gpus = nil
		}
		slices.Sort(gpus)
		system := ""
		if s := r.Environment.System; s != nil {
			system = s.Serial
		}
		kind := r.GPUSummary() + " | " + topologySummary(r)
		if r.Topology == nil {
			// A run that records no topology (an import) is of the kind
			// its GPUs say.
			kind = r.GPUSummary() + " | ?"
		}
		if k == 0 {
			id = machineID{gpus: gpus, system: system, kind: kind}
			continue
		}
		if !slices.Equal(gpus, id.gpus) || system != id.system {
			id.several = true
		}
	}
	return id
}

// sameKind reports whether two kinds (GPUs | topology) are one, a topology
// not recorded ("?") matching any.
func sameKind(a, b string) bool {
	ga, ta, _ := strings.Cut(a, " | ")
	gb, tb, _ := strings.Cut(b, " | ")
	return ga == gb && (ta == tb || ta == "?" || tb == "?")
}

// matchMachines says, for each side after the baseline, whether it
// measured the baseline's machine.
func matchMachines(inputs []Input) []MachineMatch {
	base := machineOf(inputs[0])
	var out []MachineMatch
	for i := 1; i < len(inputs); i++ {
		o := machineOf(inputs[i])
		m := MachineMatch{Side: i, Kind: sameKind(base.kind, o.kind)}
		switch {
		case base.gpus == nil || o.gpus == nil:
			m.Same = MachineUnknown
			who := inputs[0].Name
			if o.gpus == nil {
				who = inputs[i].Name
			}
			m.Why = fmt.Sprintf("%s records no GPU UUID", who)
		case base.several || o.several:
			m.Same = MachineDifferent
			m.Why = "a side's runs are of several machines"
		case !slices.Equal(base.gpus, o.gpus):
			m.Same = MachineDifferent
			m.Why = "GPU UUIDs " + uuidText(base.gpus) + " against " + uuidText(o.gpus)
		case base.system != "" && o.system != "" && base.system != o.system:
			m.Same = MachineDifferent
			m.Why = "system serials " + base.system + " against " + o.system
		default:
			m.Same = MachineSame
			m.Why = "GPU UUIDs " + uuidText(base.gpus)
			if base.system != "" && o.system != "" {
				m.Why += ", system serial " + base.system
			}
		}
		out = append(out, m)
	}
	return out
}

// uuidText shortens UUIDs to what tells them apart in a line:
// "GPU-e01a041c…, GPU-ec0fe4cb…".
func uuidText(uuids []string) string {
	short := make([]string, len(uuids))
	for i, u := range uuids {
		if len(u) > 12 {
			u = u[:12] + "…"
		}
		short[i] = u
	}
	return strings.Join(short, ", ")
}

// machineUngated says why a side's changes are not gated for its
// machine ("" where they are): another machine's, without
// Options.AcrossMachines; a machine of another kind, whatever the options.
func machineUngated(m MachineMatch, opt Options) string {
	switch {
	case m.Same == MachineSame, m.Same == MachineUnknown && m.Kind:
		return ""
	case !m.Kind:
		return ungatedKind
	case !opt.AcrossMachines:
		return ungatedMachines
	}
	return ""
}

// Reasons of Change.Ungated.
const (
	ungatedMethod   = "method changed"
	ungatedSingle   = "a single value"
	ungatedMachines = "machines differ"
	ungatedKind     = "machines of different kinds"
)

// machineLines say, for each side, whether it measured the baseline's
// machine, and what that means for the gate.
func machineLines(r *Result) []string {
	names := shortNames(r)
	var lines []string
	for _, m := range r.Machines {
		who := names[m.Side]
		switch {
		case m.Same == MachineSame:
			lines = append(lines, fmt.Sprintf("The same machine: %s measured the baseline's (%s).", who, m.Why))
		case !m.Kind:
			lines = append(lines, fmt.Sprintf("DIFFERENT MACHINES of different kinds: %s and the baseline (%s): changes are shown, not gated.", who, m.Why))
		case m.Same == MachineUnknown && r.AcrossMachines:
			lines = append(lines, fmt.Sprintf("Whether %s measured the baseline's machine is unknown (%s): each figure is held to the spread between machines of this kind (--across-machines).", who, m.Why))
		case m.Same == MachineUnknown:
			lines = append(lines, fmt.Sprintf("Whether %s measured the baseline's machine is unknown (%s): gated as the baseline's machine, which it may not be.", who, m.Why))
		case r.AcrossMachines:
			lines = append(lines, fmt.Sprintf("DIFFERENT MACHINES of one kind: %s and the baseline (%s): each figure is held to the spread between machines of this kind that real VMs showed (--across-machines; compare/FALLBACK.md).", who, m.Why))
		default:
			lines = append(lines, fmt.Sprintf("DIFFERENT MACHINES of one kind: %s and the baseline (%s): changes are shown, not gated — machines of one kind differ by more than one machine's runs do; --across-machines holds each figure to the spread between machines of this kind (compare/FALLBACK.md).", who, m.Why))
		}
	}
	return lines
}
