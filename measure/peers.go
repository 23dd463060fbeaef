package measure

import (
	"errors"
	"fmt"
	"sync"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// PairError is a failure on one ordered device pair. It names the pair and
// what was being done, and wraps the driver's error.
type PairError struct {
	Src, Dst int
	Op       string
	Err      error
}

func (e *PairError) Error() string {
	return fmt.Sprintf("pair %d→%d: %s: %v", e.Src, e.Dst, e.Op, e.Err)
}

func (e *PairError) Unwrap() error { return e.Err }

// Peers enables and disables peer access pairwise and keeps track of it.
//
// Access is directional: Enable(a, b) lets contexts on a map b's memory (it
// calls cuCtxEnablePeerAccess with a's context current and b's as the peer).
// ALREADY_ENABLED counts as success. TOO_MANY_PEERS is recovered from by
// disabling a's least recently used peer that no measurement holds, then
// retrying. Release drops a hold; DisableIdle and ReleaseAll disable again.
type Peers struct {
	mu sync.Mutex
	// order lists, per accessing device, the peers it has enabled, least
	// recently used first.
	order map[int][]int
	// holds counts the users of each enabled pair.
	holds map[[2]int]int
	// foundOn marks pairs that were already enabled when first asked for;
	// they are left enabled at the end, as found.
	foundOn map[[2]int]bool
	ctxs    map[int]gpu.Context
}

// NewPeers returns an empty peer-access tracker.
func NewPeers() *Peers {
	return &Peers{order: map[int][]int{}, holds: map[[2]int]int{}, foundOn: map[[2]int]bool{}, ctxs: map[int]gpu.Context{}}
}

// Enable makes acc able to access peer's memory and holds the pair until Release.
func (p *Peers) Enable(acc, peer gpu.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	a, b := acc.Device(), peer.Device()
	key := [2]int{a, b}
	p.ctxs[a], p.ctxs[b] = acc, peer
	if p.tracked(a, b) {
		p.holds[key]++
		p.touch(a, b)
		return nil
	}
	for {
		err := acc.EnablePeerAccess(peer, 0)
		switch {
		case err == nil:
		case errors.Is(err, cuda.ErrPeerAccessAlreadyOn):
			if !p.tracked(a, b) {
				p.foundOn[key] = true
			}
		case errors.Is(err, cuda.ErrTooManyPeers):
			if victim, ok := p.lru(a); ok {
				if derr := acc.DisablePeerAccess(p.ctxs[victim]); derr != nil {
					return &PairError{a, victim, "disabling peer access to make room", derr}
				}
				p.forget(a, victim)
				continue
			}
			return &PairError{a, b, "enabling peer access (every enabled peer is in use)", err}
		default:
			return &PairError{a, b, "enabling peer access", err}
		}
		break
	}
	p.holds[key] = 1
	p.touch(a, b)
	return nil
}

// EnableBoth enables access both ways between a and b and holds both until
// ReleaseBoth.
func (p *Peers) EnableBoth(a, b gpu.Context) error {
	if err := p.Enable(a, b); err != nil {
		return err
	}
	if err := p.Enable(b, a); err != nil {
		p.Release(a, b)
		return err
	}
	return nil
}

// ReleaseBoth drops the holds of EnableBoth.
func (p *Peers) ReleaseBoth(a, b gpu.Context) {
	p.Release(a, b)
	p.Release(b, a)
}

// Release drops one hold on the pair. A pair nobody holds stays enabled but
// idle: the first candidate to make room on TOO_MANY_PEERS, and disabled by
// DisableIdle.
func (p *Peers) Release(acc, peer gpu.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key := [2]int{acc.Device(), peer.Device()}
	if p.holds[key] > 0 {
		p.holds[key]--
	}
}

// DisableIdle disables every enabled pair nobody holds (pairs that were
// already enabled when first asked for are left as found).
func (p *Peers) DisableIdle() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disable(false)
}

// ReleaseAll disables every pair p enabled, whatever holds remain (used when
// a run stops early). It returns every failure.
func (p *Peers) ReleaseAll() []error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.disable(true)
}

func (p *Peers) disable(held bool) []error {
	var errs []error
	for a, peers := range p.order {
		for _, b := range append([]int(nil), peers...) {
			key := [2]int{a, b}
			if !held && p.holds[key] > 0 {
				continue
			}
			if !p.foundOn[key] {
				if err := p.ctxs[a].DisablePeerAccess(p.ctxs[b]); err != nil && !errors.Is(err, cuda.ErrPeerAccessNotEnabled) {
					errs = append(errs, &PairError{a, b, "disabling peer access", err})
				}
			}
			p.forget(a, b)
		}
	}
	return errs
}

// Enabled reports whether acc→peer is enabled (held or idle).
func (p *Peers) Enabled(acc, peer int) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.tracked(acc, peer)
}

func (p *Peers) tracked(a, b int) bool {
	for _, x := range p.order[a] {
		if x == b {
			return true
		}
	}
	return false
}

func (p *Peers) touch(a, b int) {
	p.remove(a, b)
	p.order[a] = append(p.order[a], b)
}

func (p *Peers) remove(a, b int) {
	o := p.order[a]
	for i, x := range o {
		if x == b {
			p.order[a] = append(o[:i:i], o[i+1:]...)
			return
		}
	}
}

func (p *Peers) forget(a, b int) {
	p.remove(a, b)
	delete(p.holds, [2]int{a, b})
	delete(p.foundOn, [2]int{a, b})
}

// lru returns a's least recently used enabled peer that nobody holds.
func (p *Peers) lru(a int) (int, bool) {
	for _, b := range p.order[a] {
		if p.holds[[2]int{a, b}] == 0 {
			return b, true
		}
	}
	return 0, false
}
