package report

import (
	"fmt"
	"strings"

	"github.com/p2pbench/p2pbench/results"
)

// wireSection shows what the NVLink counters saw around the large-transfer
// figures, and what follows from it for the gap between SM copies and the
// copy engine. It writes nothing when no figure of the run has link traffic.
func wireSection(d *Document, run *results.Run, size uint64) {
	rows := results.LinkEfficiency(run, size)
	if len(rows) == 0 {
		return
	}
	d.Section("On the wire: NVLink counters")
	d.para("p2pbench read each device's NVLink throughput counters (NVML, summed over its links) before and after every "+
		"bandwidth figure between two devices. Payload (data) bytes are what the copy moved; raw bytes are everything the "+
		"links carried, payload included: packet headers, read requests, write responses. \"Wire\" is raw bytes per payload byte "+
		"in the direction the data moved, \"back\" the raw bytes counted in the other direction per payload byte (one-way figures "+
		"only: read requests, write responses and whatever else that counter includes), and the wire rate is the figure's GB/s × wire: how many bytes per second the links really carried. "+
		"Medians over pairs at %s. The counters count any other traffic on those links in the window too.", results.FormatBytes(size))
	d.table(wireTable(rows))
	if p := wireGapText(rows); p != "" {
		d.para("%s", p)
	}
}

// wireTable lists what the counters saw per kind of figure.
func wireTable(rows []results.Efficiency) *table {
	t := &table{header: []string{"figure", "engine", "pairs", "GB/s", "wire", "back", "wire rate GB/s"}, align: "llrrrrr"}
	for _, e := range rows {
		back := "–"
		if e.Back > 0 {
			back = fmt.Sprintf("%.3f", e.Back)
		}
		t.rows = append(t.rows, []string{e.Label(), string(e.Engine), fmt.Sprint(e.Pairs), fmt.Sprintf("%.1f", e.GBps),
			fmt.Sprintf("%.3f", e.Wire), back, fmt.Sprintf("%.1f", e.WireGBps)})
	}
	return t
}

// wireGapText explains, from the counters alone, how the SM figures follow
// from the copy engine's: the same wire rate, more wire bytes per payload
// byte. Empty when the run lacks a copy-engine and an SM figure of the
// same kind.
func wireGapText(rows []results.Efficiency) string {
	find := func(test results.Test, dir results.Direction, part results.Part) *results.Efficiency {
		for i := range rows {
			if rows[i].Test == test && (dir == "" || rows[i].Direction == dir) && rows[i].Part == part && rows[i].Open == "" {
				return &rows[i]
			}
		}
		return nil
	}
	onPeer := func(test results.Test, dir results.Direction, part results.Part) *results.Efficiency {
		for i := range rows {
			if rows[i].Test == test && rows[i].Direction == dir && rows[i].Part == part && rows[i].Open == results.IPCOpenPeerDevice {
				return &rows[i]
			}
		}
		return nil
	}
	lo, hi := 0.0, 0.0
	for i, e := range rows {
		if i == 0 || e.WireGBps < lo {
			lo = e.WireGBps
		}
		if i == 0 || e.WireGBps > hi {
			hi = e.WireGBps
		}
	}
	var parts []string
	for _, k := range []struct {
		ce, sm results.Test
		what   string
	}{{results.CERead, results.SMRead, "pulling"}, {results.CEWrite, results.SMWrite, "pushing"}} {
		ce, sm := find(k.ce, "", ""), find(k.sm, "", "")
		if ce == nil || sm == nil || sm.Wire <= 0 {
			continue
		}
		predicted := ce.WireGBps / sm.Wire
		parts = append(parts, fmt.Sprintf("%s, the copy engine spent %.3f wire bytes per payload byte and the SM copy %.3f: "+
			"at the copy engine's wire rate of %.1f GB/s that leaves the SM copy %.1f GB/s of payload; it moved %.1f (%.1f%% of the copy engine's %.1f)",
			k.what, ce.Wire, sm.Wire, ce.WireGBps, predicted, sm.GBps, 100*sm.GBps/ce.GBps, ce.GBps))
	}
	if len(parts) == 0 {
		return ""
	}
	s := fmt.Sprintf("Every figure here ran its links at %.1f–%.1f GB/s of raw bytes in the data's direction, whatever moved them: "+
		"the links' capacity is the same for both engines, and what differs is how many wire bytes each payload byte costs. ", lo, hi)
	s += "One direction " + strings.Join(parts, "; ") + "."
	s += readCostText(find)
	s += peerOpenText(find, onPeer)
	return s
}

// peerOpenText says what changes across processes when the peer's buffer
// is opened in the process's context on the peer's GPU: which copy engine
// reads, as the counters show it, and what that does to both directions.
func peerOpenText(find, onPeer func(test results.Test, dir results.Direction, part results.Part) *results.Efficiency) string {
	ownR, ownW := find(results.IPCCEBidir, results.DirRead, results.PartForward), find(results.IPCCEBidir, results.DirWrite, results.PartForward)
	peerR, peerW := onPeer(results.IPCCEBidir, results.DirRead, results.PartForward), onPeer(results.IPCCEBidir, results.DirWrite, results.PartForward)
	ce := find(results.CEBidir, results.DirRead, results.PartForward)
	if ownR == nil || ownW == nil || peerR == nil || peerW == nil {
		return ""
	}
	s := fmt.Sprintf(" Across processes with the peer's buffer opened a second time, in the process's context on the peer's GPU, and copied with "+
		"cuMemcpyPeerAsync between the two contexts, the costs change places: reading both ways costs %.3f wire bytes per payload byte "+
		"and moves %.1f GB/s per direction (against %.3f and %.1f with the buffer opened in the process's own context), writing costs %.3f "+
		"and moves %.1f (against %.3f and %.1f): as far as the counters tell, the peer's copy engine then makes the copy, pushing what the process "+
		"pulls and reading what it pushes.", peerR.Wire, peerR.GBps, ownR.Wire, ownR.GBps, peerW.Wire, peerW.GBps, ownW.Wire, ownW.GBps)
	if ce != nil {
		s += fmt.Sprintf(" Its read both ways is %.1f%% of one process's %.1f GB/s.", 100*peerR.GBps/ce.GBps, ce.GBps)
	}
	return s
}

// readCostText compares reading with writing both ways at once, where each
// direction also carries what the other direction's copy sends back: for
// SM copies, for the copy engine in one process, and across processes.
func readCostText(find func(test results.Test, dir results.Direction, part results.Part) *results.Efficiency) string {
	extra := func(test results.Test) (r, w *results.Efficiency, ok bool) {
		r, w = find(test, results.DirRead, results.PartForward), find(test, results.DirWrite, results.PartForward)
		return r, w, r != nil && w != nil
	}
	var s string
	smR, smW, okSM := extra(results.SMBidir)
	if okSM {
		s += fmt.Sprintf(" Both directions at once, reading costs the SM copy %.3f wire bytes per payload byte against %.3f writing: "+
			"each direction also carries the other's read requests.", smR.Wire, smW.Wire)
	}
	ceR, ceW, okCE := extra(results.CEBidir)
	if okCE && ceR.Wire <= ceW.Wire*1.005 {
		s += fmt.Sprintf(" In one process the copy engine's \"read\" both ways costs what its write does (%.3f against %.3f): "+
			"no read requests show on the wire: as far as the counters tell, the driver moves an in-process peer copy the same way whichever context issues it.",
			ceR.Wire, ceW.Wire)
		if ipcR, ipcW, ok := extra(results.IPCCEBidir); ok && ipcR.Wire > ceR.Wire*1.01 {
			s += fmt.Sprintf(" Issued from another process (IPC) with the peer's buffer opened in that process's own context, where the driver has only the destination's copy engine to do it, the read costs %.3f "+
				"against %.3f writing, and moves %.1f GB/s per direction against %.1f in one process: the wire bytes predict %.1f%%, measured %.1f%%.",
				ipcR.Wire, ipcW.Wire, ipcR.GBps, ceR.GBps, 100*ceR.Wire/ipcR.Wire, 100*ipcR.GBps/ceR.GBps)
			if okSM {
				s += fmt.Sprintf(" A real read's extra cost over a write is %.3f wire bytes per payload byte for the copy engine and %.3f for SM copies.",
					ipcR.Wire-ipcW.Wire, smR.Wire-smW.Wire)
			}
		}
	}
	return s
}
