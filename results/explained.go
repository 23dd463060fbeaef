package results

import "strings"

// ExplainedFailure says why a failed figure failed as the machine is known
// to make it fail, or "" when its failure is not explained that way: a test
// between two GPUs on a pair without peer access (cuDeviceCanAccessPeer 0)
// that the driver refused with CUDA_ERROR_PEER_ACCESS_UNSUPPORTED; atomics
// across a pair without native atomics (the P2P attribute
// native_atomic_supported 0) whose count came out wrong, which is what such
// a link does (the CUDA programming guide leaves it undefined). Readers
// that judge a run (report's findings, verdicts) call these notes rather
// than problems: the staged path is measured for such pairs instead.
func (r *Run) ExplainedFailure(f *Figure) string {
	if f.Src < 0 || f.Dst < 0 || f.Src == f.Dst || !f.Failed() {
		return ""
	}
	p, ok := r.Topology.Pair(f.Src, f.Dst)
	if !ok {
		return ""
	}
	switch {
	case f.Error != "" && !p.CanAccessPeer && strings.HasSuffix(f.ErrorName, "PEER_ACCESS_UNSUPPORTED"):
		return "the pair has no peer access (cuDeviceCanAccessPeer 0): tests that need it cannot run; copies between the two go through the host (nop2p_copy)"
	case f.Error == "" && f.Verify == VerifyFailed && (f.Test == AtomicTput || f.Test == AtomicLatency) &&
		p.CanAccessPeer && p.Attributes[AttrNativeAtomicSupported] == 0:
		return "the link has no native atomics (native_atomic_supported 0): atomics over it are not atomic under contention, so updates are lost"
	}
	return ""
}

// Failures counts a run's figures that failed: the one count the exit
// status, the verdict and the summaries say.
type Failures struct {
	// Figures is how many figures the run has.
	Figures int
	// Errors failed with an error (no value); BadData moved data that did
	// not verify. A figure is one or the other.
	Errors, BadData int
	// Explained are those of them that fail as the machine is known to
	// make them fail (ExplainedFailure).
	Explained int
}

// Failed is how many figures failed either way.
func (c Failures) Failed() int { return c.Errors + c.BadData }

// Unexplained reports whether a failure is one the machine does not
// explain, or whether every figure failed (or none was measured): what
// makes a run's figures incomplete.
func (c Failures) Unexplained() bool {
	return c.Failed() > c.Explained || c.Failed() >= c.Figures
}

// Failures counts r's failed figures.
func (r *Run) Failures() Failures {
	c := Failures{Figures: len(r.Figures)}
	for i := range r.Figures {
		f := &r.Figures[i]
		switch {
		case f.Error != "":
			c.Errors++
		case f.Verify == VerifyFailed:
			c.BadData++
		default:
			continue
		}
		if r.ExplainedFailure(f) != "" {
			c.Explained++
		}
	}
	return c
}
