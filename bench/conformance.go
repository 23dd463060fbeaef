package bench

import (
	"errors"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/measure"
	"github.com/p2pbench/p2pbench/results"
)

// conformanceCase is one documented behaviour of the peer-access calls
// (cuda-api.md), checked on the devices: the case's call, made on the
// devices its pair names, should give the documented result.
type conformanceCase struct {
	name       string
	call       string // the driver entry point, as the documentation names it
	pair       casePair
	documented cuda.Result
	// Exactly one of query (a device-level call from src to dst) and
	// inContexts (a call in src's primary context a, for dst's b) makes the
	// call and returns its error, or errNothingToCheck where the devices'
	// state leaves nothing to check.
	query      func(drv gpu.Driver, src, dst int) error
	inContexts func(k *checker, a, b gpu.Context) error
	note       string
	// required: when this case does not give its documented result, the
	// cases after it, which rely on it, are not run.
	required bool
}

// casePair says which devices a case runs on.
type casePair int

const (
	selfPair     casePair = iota // the first device with itself
	pastLastPeer                 // the first device and the ordinal after the last device
	firstTwo                     // the first two devices
	pairNoPeer                   // the first ordered pair without peer access
	pairWithPeer                 // the first ordered pair with peer access
)

// conformanceCases are the cases, in the order they run. The last five run
// in sequence on one pair: access enabled, enabled again, disabled,
// disabled again, then enabled with bad flags (and undone if it succeeds).
var conformanceCases = []conformanceCase{
	{name: "attribute of a device with itself", call: "cuDeviceGetP2PAttribute", pair: selfPair,
		documented: cuda.ErrorInvalidDevice, query: p2pAttribute(cuda.P2PPerformanceRank)},
	{name: "atomic capabilities of a device with itself", call: "cuDeviceGetP2PAtomicCapabilities", pair: selfPair,
		documented: cuda.ErrorInvalidDevice, query: atomicCapabilities},
	{name: "peer query with a device that does not exist", call: "cuDeviceCanAccessPeer", pair: pastLastPeer,
		documented: cuda.ErrorInvalidDevice, query: canAccessPeer},
	{name: "enable a context's access to itself", call: "cuCtxEnablePeerAccess", pair: selfPair,
		documented: cuda.ErrorInvalidContext, inContexts: enableUndone(0),
		note: "the documentation lists the peer being the current context under INVALID_CONTEXT"},
	{name: "unknown P2P attribute", call: "cuDeviceGetP2PAttribute", pair: firstTwo,
		documented: cuda.ErrorInvalidValue, query: p2pAttribute(99), note: "attribute 99"},
	{name: "enable a pair without peer support", call: "cuCtxEnablePeerAccess", pair: pairNoPeer,
		documented: cuda.ErrorPeerAccessUnsupported, inContexts: enableUndone(0)},
	{name: "enable peer access", call: "cuCtxEnablePeerAccess", pair: pairWithPeer,
		documented: cuda.Success, inContexts: enableFirst, required: true},
	{name: "enable the same peer a second time", call: "cuCtxEnablePeerAccess", pair: pairWithPeer,
		documented: cuda.ErrorPeerAccessAlreadyOn, inContexts: enable},
	{name: "disable an enabled peer", call: "cuCtxDisablePeerAccess", pair: pairWithPeer,
		documented: cuda.Success, inContexts: disable},
	{name: "disable a peer that is not enabled", call: "cuCtxDisablePeerAccess", pair: pairWithPeer,
		documented: cuda.ErrorPeerAccessNotEnabled, inContexts: disable},
	{name: "enable with flags = 1", call: "cuCtxEnablePeerAccess", pair: pairWithPeer,
		documented: cuda.ErrorInvalidValue, inContexts: enableUndone(1), note: "flags must be 0"},
}

// Conformance runs the documented error cases of the peer-access group on
// real devices and reports, per case, the documented and the observed result.
// It leaves peer access between the devices as it found it. Devices must hold
// at least one index; cases that need two devices, a pair with peer access
// or a pair without it are left out where the devices have none.
func Conformance(drv gpu.Driver, devs []int) ([]results.ConformanceCase, error) {
	if len(devs) == 0 {
		return nil, errors.New("no devices selected")
	}
	pairs, err := pairsFor(drv, devs)
	if err != nil {
		return nil, err
	}
	k := &checker{drv: drv}
	var out []results.ConformanceCase
	for _, c := range conformanceCases {
		src, dst := pairs[c.pair][0], pairs[c.pair][1]
		if src < 0 {
			continue // the devices have no such pair
		}
		var err error
		if c.query != nil {
			err = c.query(drv, src, dst)
		} else {
			a, b, cerr := k.contexts(src, dst)
			if cerr != nil {
				return out, cerr
			}
			err = c.inContexts(k, a, b)
		}
		if errors.Is(err, errNothingToCheck) || errors.Is(err, cuda.ErrUnavailable) {
			continue // access was on already; the driver lacks the entry point
		}
		got, want := observed(err), cuda.NewError(c.documented, "").Name
		out = append(out, results.ConformanceCase{
			Name: c.name, Call: c.call, Src: src, Dst: dst,
			Documented: want, Observed: got, Matches: got == want, Note: c.note,
		})
		if c.required && got != want {
			return out, nil
		}
	}
	return out, k.restore()
}

// errNothingToCheck is what a case's call returns when the devices' state
// leaves nothing to check (access to enable was already on).
var errNothingToCheck = errors.New("nothing to check")

// observed names a call's outcome the way the documentation does.
func observed(err error) string {
	if err == nil {
		return cuda.NewError(cuda.Success, "").Name
	}
	if n := cuda.NameOf(err); n != "" {
		return n
	}
	return err.Error()
}

// pairsFor returns, for each casePair, the devices it names among devs;
// {-1, -1} where they have none.
func pairsFor(drv gpu.Driver, devs []int) (pairs [pairWithPeer + 1][2]int, err error) {
	n, err := drv.DeviceCount()
	if err != nil {
		return pairs, err
	}
	d0, none := devs[0], [2]int{-1, -1}
	pairs = [...][2]int{selfPair: {d0, d0}, pastLastPeer: {d0, n}, firstTwo: none, pairNoPeer: none, pairWithPeer: none}
	if len(devs) > 1 {
		pairs[firstTwo] = [2]int{d0, devs[1]}
	}
	for _, a := range devs {
		for _, b := range devs {
			if a == b {
				continue
			}
			ok, err := drv.CanAccessPeer(a, b)
			switch {
			case err != nil:
			case ok && pairs[pairWithPeer] == none:
				pairs[pairWithPeer] = [2]int{a, b}
			case !ok && pairs[pairNoPeer] == none:
				pairs[pairNoPeer] = [2]int{a, b}
			}
		}
	}
	return pairs, nil
}

// checker is what the calls in contexts share: the driver, and the pair
// whose peer access was on before the cases and is put back at the end.
type checker struct {
	drv      gpu.Driver
	wasOn    bool
	src, dst int
}

// contexts returns the primary contexts of src and dst.
func (k *checker) contexts(src, dst int) (gpu.Context, gpu.Context, error) {
	a, err := k.drv.Context(src)
	if err != nil {
		return nil, nil, err
	}
	b, err := k.drv.Context(dst)
	return a, b, err
}

// restore enables the peer access the cases found on, if they turned it off.
func (k *checker) restore() error {
	if !k.wasOn {
		return nil
	}
	a, b, err := k.contexts(k.src, k.dst)
	if err == nil {
		err = a.EnablePeerAccess(b, 0)
	}
	if err != nil && !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		return &measure.PairError{Src: k.src, Dst: k.dst, Op: "restoring peer access", Err: err}
	}
	return nil
}

// The calls the cases make.

func p2pAttribute(attr cuda.P2PAttribute) func(drv gpu.Driver, src, dst int) error {
	return func(drv gpu.Driver, src, dst int) error {
		_, err := drv.P2PAttribute(attr, src, dst)
		return err
	}
}

func atomicCapabilities(drv gpu.Driver, src, dst int) error {
	_, err := drv.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicIntegerAdd}, src, dst)
	return err
}

func canAccessPeer(drv gpu.Driver, src, dst int) error {
	_, err := drv.CanAccessPeer(src, dst)
	return err
}

func enable(_ *checker, a, b gpu.Context) error { return a.EnablePeerAccess(b, 0) }

func disable(_ *checker, a, b gpu.Context) error { return a.DisablePeerAccess(b) }

// enableFirst is the first enable of the pair. Where access was on already
// there is nothing to check; the cases after it turn it off, and restore
// puts it back.
func enableFirst(k *checker, a, b gpu.Context) error {
	err := a.EnablePeerAccess(b, 0)
	if errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
		k.wasOn, k.src, k.dst = true, a.Device(), b.Device()
		return errNothingToCheck
	}
	return err
}

// enableUndone is an enable with flags that should fail; where it
// succeeds, it is undone.
func enableUndone(flags uint32) func(_ *checker, a, b gpu.Context) error {
	return func(_ *checker, a, b gpu.Context) error {
		err := a.EnablePeerAccess(b, flags)
		if err == nil {
			_ = a.DisablePeerAccess(b)
		}
		return err
	}
}
