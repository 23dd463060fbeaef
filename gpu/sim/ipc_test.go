package sim

import (
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
)

func TestIPCMemory(t *testing.T) {
	const size = 8 << 20
	r := newRig(t, "h200x2")
	owner, importer := r.ctx[0], r.ctx[1]
	p := r.alloc(0, size)
	r.fill(0, p, size, 31)
	h, err := owner.IpcGetMemHandle(p)
	r.must(err)
	q, err := importer.IpcOpenMemHandle(h, 1)
	r.must(err)
	q2, err := importer.IpcOpenMemHandle(h, 1)
	r.must(err)
	if q != q2 {
		t.Errorf("second open in one context: %#x, first %#x", q2, q)
	}
	// Lazy peer enable happened: the importer's kernels read the mapping.
	wantCode(t, "enable after the lazy one", importer.EnablePeerAccess(owner, 0), cuda.ErrorPeerAccessAlreadyOn)
	local := r.alloc(1, size)
	r.must(r.smJob(1, "v4_u4", local, q, size).op(0))
	r.must(importer.Synchronize())
	if _, bad, err := r.check(1, local, size, 31); err != nil || bad != 0 {
		t.Errorf("data read through the mapping: %d bad, %v", bad, err)
	}
	// The owner's own context may open it too (within one process).
	o, err := owner.IpcOpenMemHandle(h, 0)
	r.must(err)
	if o == p || o == q {
		t.Errorf("owner's mapping %#x repeats an address", o)
	}
	r.must(owner.IpcCloseMemHandle(o))

	r.must(importer.IpcCloseMemHandle(q))
	r.must(importer.IpcCloseMemHandle(q))
	wantCode(t, "third close", importer.IpcCloseMemHandle(q), cuda.ErrorInvalidValue)

	var junk cuda.IpcMemHandle
	junk[0] = 1
	_, err = importer.IpcOpenMemHandle(junk, 1)
	wantCode(t, "unknown handle", err, cuda.ErrorInvalidHandle)
	_, err = importer.IpcOpenMemHandle(h, 2)
	wantCode(t, "bad flags", err, cuda.ErrorInvalidValue)
	other := newRig(t, "h200x2")
	_, err = other.ctx[1].IpcOpenMemHandle(h, 1)
	wantCode(t, "handle of another driver", err, cuda.ErrorInvalidHandle)
	_, err = owner.IpcGetMemHandle(cuda.DevicePtr(0x1234))
	wantCode(t, "export of no allocation", err, cuda.ErrorInvalidValue)
	r.must(owner.MemFree(p))
	_, err = importer.IpcOpenMemHandle(h, 1)
	wantCode(t, "handle of freed memory", err, cuda.ErrorInvalidHandle)

	// No mapping between devices without P2P.
	pc := newRig(t, "pcie-4gpu")
	hp, err := pc.ctx[2].IpcGetMemHandle(pc.alloc(2, 4096))
	pc.must(err)
	_, err = pc.ctx[1].IpcOpenMemHandle(hp, 1)
	wantCode(t, "open across the no-P2P pair", err, cuda.ErrorMapFailed)
}

func TestIPCEvents(t *testing.T) {
	const size = 256 << 20
	r := newRig(t, "h200x2")
	c0, c1 := r.ctx[0], r.ctx[1]
	plain, _ := c0.EventCreate()
	_, err := c0.IpcGetEventHandle(plain)
	wantCode(t, "export a timing event", err, cuda.ErrorInvalidValue)
	e, err := c0.EventCreateInterprocess()
	r.must(err)
	h, err := c0.IpcGetEventHandle(e)
	r.must(err)
	e1, err := c1.IpcOpenEventHandle(h)
	r.must(err)
	var junk cuda.IpcEventHandle
	_, err = c1.IpcOpenEventHandle(junk)
	wantCode(t, "unknown event handle", err, cuda.ErrorInvalidHandle)

	// A record on device 0 orders device 1's stream through the opened event.
	r.enable(0, 1)
	src, dst := r.alloc(0, size), r.alloc(1, size)
	s0, s1 := r.stream(0), r.stream(1)
	r.must(c0.MemcpyPeerAsync(dst, c1, src, c0, size, s0))
	r.must(c0.EventRecord(e, s0))
	start, _ := c1.EventCreate()
	end, _ := c1.EventCreate()
	r.must(c1.EventRecord(start, s1))
	r.must(c1.StreamWaitEvent(s1, e1))
	r.must(c1.EventRecord(end, s1))
	r.must(c1.EventSynchronize(end))
	ms, err := c1.EventElapsed(start, end)
	r.must(err)
	if min := float64(size) / 400e9 * 1e3; float64(ms) < min {
		t.Errorf("device 1 waited %.3f ms through the IPC event, less than the copy's %.3f", ms, min)
	}
}
