package sim

import (
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// CanAccessPeer is cuDeviceCanAccessPeer; a device never reports access to
// itself.
func (d *Driver) CanAccessPeer(dev, peer int) (bool, error) {
	return query(d, "cuDeviceCanAccessPeer", []int{dev, peer}, func() (bool, error) {
		return d.m.canAccess(dev, peer), nil
	})
}

// P2PAttribute is cuDeviceGetP2PAttribute: INVALID_DEVICE for a bad ordinal
// or src == dst, INVALID_VALUE for an unknown attribute.
func (d *Driver) P2PAttribute(attr cuda.P2PAttribute, src, dst int) (int, error) {
	const call = "cuDeviceGetP2PAttribute"
	return query(d, call, []int{src, dst}, func() (int, error) {
		if src == dst {
			return 0, cuda.NewError(cuda.ErrorInvalidDevice, call)
		}
		v, ok := d.m.p2pAttribute(int(attr), src, dst)
		if !ok {
			return 0, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		return v, nil
	})
}

// P2PAtomicCapabilities is cuDeviceGetP2PAtomicCapabilities (CUDA 13). Like
// the 580 driver on the H200 pair it answers 0 for every operation, even
// where NATIVE_ATOMIC_SUPPORTED is 1.
func (d *Driver) P2PAtomicCapabilities(ops []cuda.AtomicOperation, src, dst int) ([]uint32, error) {
	const call = "cuDeviceGetP2PAtomicCapabilities"
	return query(d, call, []int{src, dst}, func() ([]uint32, error) {
		if src == dst {
			return nil, cuda.NewError(cuda.ErrorInvalidDevice, call)
		}
		if len(ops) == 0 {
			return nil, cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		for _, o := range ops {
			if o < cuda.AtomicIntegerAdd || o > cuda.AtomicFloatMax {
				return nil, cuda.NewError(cuda.ErrorInvalidValue, call)
			}
		}
		return make([]uint32, len(ops)), nil
	})
}

// EnablePeerAccess is cuCtxEnablePeerAccess from this context to peer's
// memory, with the 580 driver's answers: INVALID_VALUE for flags != 0,
// INVALID_CONTEXT for a context not of this driver, PEER_ACCESS_UNSUPPORTED
// for a pair without P2P and for the context itself (the documentation says
// INVALID_CONTEXT there; hardware.md), ALREADY_ENABLED on a second enable,
// TOO_MANY_PEERS past WithPeerLimit.
func (c *devContext) EnablePeerAccess(peer gpu.Context, flags uint32) error {
	const call = "cuCtxEnablePeerAccess"
	return c.locked(call, func(d *Driver) error {
		d.tick(costLight)
		if flags != 0 {
			return cuda.NewError(cuda.ErrorInvalidValue, call)
		}
		p, ok := d.ctxOf(peer)
		if !ok {
			return cuda.NewError(cuda.ErrorInvalidContext, call)
		}
		if p == c || !d.m.canAccess(c.dev, p.dev) {
			return cuda.NewError(cuda.ErrorPeerAccessUnsupported, call)
		}
		if c.peers[p.dev] {
			return cuda.NewError(cuda.ErrorPeerAccessAlreadyOn, call)
		}
		if err := d.pairError(c.dev, p.dev, call); err != nil {
			return err
		}
		return c.addPeer(p.dev, call)
	})
}

// addPeer maps dev's memory into c, within the peer limit.
func (c *devContext) addPeer(dev int, call string) error {
	if lim := c.d.peerLimit; lim >= 0 && len(c.peers) >= lim {
		return cuda.NewError(cuda.ErrorTooManyPeers, call)
	}
	c.peers[dev] = true
	// Enabled again after host copies: the next pull pays the cold cost.
	if c.d.hostCopied[c.dev] {
		c.d.hostCopied[c.dev] = false
		c.d.coldPull[c.dev] = c.d.coldPulls
	}
	return nil
}

// DisablePeerAccess is cuCtxDisablePeerAccess: PEER_ACCESS_NOT_ENABLED when
// access from this context to peer was never enabled.
func (c *devContext) DisablePeerAccess(peer gpu.Context) error {
	const call = "cuCtxDisablePeerAccess"
	return c.locked(call, func(d *Driver) error {
		d.tick(costLight)
		p, ok := d.ctxOf(peer)
		if !ok {
			return cuda.NewError(cuda.ErrorInvalidContext, call)
		}
		if !c.peers[p.dev] {
			return cuda.NewError(cuda.ErrorPeerAccessNotEnabled, call)
		}
		delete(c.peers, p.dev)
		return nil
	})
}
