package bench

import (
	"errors"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/internal/measure"
	"github.com/p2pbench/p2pbench/results"
)

// observed names a call's outcome the way the documentation does.
func observed(err error) string {
	if err == nil {
		return "CUDA_SUCCESS"
	}
	if n := cuda.NameOf(err); n != "" {
		return n
	}
	return err.Error()
}

// Conformance runs the documented error cases of the peer-access group on
// real devices and reports, per case, the documented and the observed result.
// It leaves peer access between the devices as it found it. Devices must hold
// at least two indices; the first pair with peer access is used for the
// enable/disable cases, and a pair without it (if any) for the unsupported case.
func Conformance(drv gpu.Driver, devs []int) ([]results.ConformanceCase, error) {
	var cases []results.ConformanceCase
	add := func(name, call string, src, dst int, documented string, err error, note string) {
		obs := observed(err)
		cases = append(cases, results.ConformanceCase{
			Name: name, Call: call, Src: src, Dst: dst,
			Documented: documented, Observed: obs, Matches: obs == documented, Note: note,
		})
	}
	if len(devs) == 0 {
		return nil, errors.New("no devices selected")
	}
	d0 := devs[0]
	_, err := drv.P2PAttribute(cuda.P2PPerformanceRank, d0, d0)
	add("attribute of a device with itself", "cuDeviceGetP2PAttribute", d0, d0, "CUDA_ERROR_INVALID_DEVICE", err, "")
	_, err = drv.P2PAtomicCapabilities([]cuda.AtomicOperation{cuda.AtomicIntegerAdd}, d0, d0)
	if !errors.Is(err, cuda.ErrUnavailable) {
		add("atomic capabilities of a device with itself", "cuDeviceGetP2PAtomicCapabilities", d0, d0, "CUDA_ERROR_INVALID_DEVICE", err, "")
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return cases, err
	}
	_, err = drv.CanAccessPeer(d0, n)
	add("peer query with a device that does not exist", "cuDeviceCanAccessPeer", d0, n, "CUDA_ERROR_INVALID_DEVICE", err, "")

	c0, err := drv.Context(d0)
	if err != nil {
		return cases, err
	}
	err = c0.EnablePeerAccess(c0, 0)
	if err == nil {
		_ = c0.DisablePeerAccess(c0)
	}
	add("enable a context's access to itself", "cuCtxEnablePeerAccess", d0, d0, "CUDA_ERROR_INVALID_CONTEXT", err,
		"the documentation lists the peer being the current context under INVALID_CONTEXT")

	if len(devs) < 2 {
		return cases, nil
	}
	var src, dst, noSrc, noDst = -1, -1, -1, -1
	for _, a := range devs {
		for _, b := range devs {
			if a == b {
				continue
			}
			ok, err := drv.CanAccessPeer(a, b)
			if err != nil {
				continue
			}
			if ok && src < 0 {
				src, dst = a, b
			}
			if !ok && noSrc < 0 {
				noSrc, noDst = a, b
			}
		}
	}
	_, err = drv.P2PAttribute(cuda.P2PAttribute(99), devs[0], devs[1])
	add("unknown P2P attribute", "cuDeviceGetP2PAttribute", devs[0], devs[1], "CUDA_ERROR_INVALID_VALUE", err, "attribute 99")

	if noSrc >= 0 {
		a, err1 := drv.Context(noSrc)
		b, err2 := drv.Context(noDst)
		if err1 == nil && err2 == nil {
			err := a.EnablePeerAccess(b, 0)
			if err == nil {
				_ = a.DisablePeerAccess(b)
			}
			add("enable a pair without peer support", "cuCtxEnablePeerAccess", noSrc, noDst, "CUDA_ERROR_PEER_ACCESS_UNSUPPORTED", err, "")
		}
	}
	if src < 0 {
		return cases, nil
	}
	a, err := drv.Context(src)
	if err != nil {
		return cases, err
	}
	b, err := drv.Context(dst)
	if err != nil {
		return cases, err
	}
	// Find out whether access was on before, so it can be put back.
	first := a.EnablePeerAccess(b, 0)
	wasOn := errors.Is(first, cuda.ErrPeerAccessAlreadyOn)
	if first != nil && !wasOn {
		add("enable peer access", "cuCtxEnablePeerAccess", src, dst, "CUDA_SUCCESS", first, "")
		return cases, nil
	}
	if !wasOn {
		add("enable peer access", "cuCtxEnablePeerAccess", src, dst, "CUDA_SUCCESS", first, "")
	}
	err = a.EnablePeerAccess(b, 0)
	add("enable the same peer a second time", "cuCtxEnablePeerAccess", src, dst, "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED", err, "")
	err = a.DisablePeerAccess(b)
	add("disable an enabled peer", "cuCtxDisablePeerAccess", src, dst, "CUDA_SUCCESS", err, "")
	err = a.DisablePeerAccess(b)
	add("disable a peer that is not enabled", "cuCtxDisablePeerAccess", src, dst, "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", err, "")
	err = a.EnablePeerAccess(b, 1)
	if err == nil {
		_ = a.DisablePeerAccess(b)
	}
	add("enable with flags = 1", "cuCtxEnablePeerAccess", src, dst, "CUDA_ERROR_INVALID_VALUE", err, "flags must be 0")
	if wasOn {
		if err := a.EnablePeerAccess(b, 0); err != nil && !errors.Is(err, cuda.ErrPeerAccessAlreadyOn) {
			return cases, &measure.PairError{Src: src, Dst: dst, Op: "restoring peer access", Err: err}
		}
	}
	return cases, nil
}
