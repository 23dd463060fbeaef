package sim

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/results"
)

// The NVLink throughput counters (Monitor.Traffic): each device's payload
// and raw bytes sent and received over its NVLinks, counted when a copy
// between two devices ends (copy engine or SM, not the latency and atomic
// kernels, whose traffic is small). A direction's raw bytes are its
// payload times the wire bytes each payload byte costs, wireCeiling over
// the engine's efficiency (profile.eff): a saturated direction counts
// wireCeiling of the link's capacity whatever moves it, as the real
// counters count 418–425 GB/s of raw bytes a busy direction of an NVLink 4
// bundle carries (2× H200, 2× H100); the other direction counts the
// engine's requests or acknowledgements (profile.rev) as raw bytes.
//
// An IPC run's processes each simulate the machine, the children hosting
// stand-ins of their peers; the real counters are the device's, so the
// parent's readings see the children's copies. With WithSharedTraffic
// every process of a run adds what it counts to one file's counters, mapped
// into each (Linux: shared memory, atomic adds), and a reading is the sum
// they hold. A copy counts when it ends in virtual time, before the host
// thread that waits for it learns it ended, and so before it can tell
// another process.

// wireCeiling is what the counters count of a saturated direction, as a
// share of the link's capacity the model gives it (419 of 450 GB/s).
const wireCeiling = 419.0 / 450.0

// countersSize is the shared file's counters of one device: TxData, TxRaw,
// RxData and RxRaw, little-endian uint64s (native order: Linux on amd64
// and arm64).
const countersSize = 4 * 8

// traffic holds the machine's counters: this process's, or where shared,
// the file's that every process of the run adds to (shared, 4 words a
// device). The shared counters were records appended to the file, one
// write a stop of the simulation; a simulated all made tens of thousands.
type traffic struct {
	mu     sync.Mutex
	own    []results.LinkCounts // by device
	file   *os.File
	shared []uint64 // the file's counters, mapped; nil: not shared
	unmap  func()
	n      int // devices
}

// WithSharedTraffic makes the machine's NVLink throughput counters those
// of every process that maps f: the parent of an IPC run and its children,
// whose copies the real counters of a device all count. f must be open for
// reading and writing; the machine closes it. Where f cannot be mapped
// (not on Linux), the machine counts for itself.
func WithSharedTraffic(f *os.File) Option {
	return func(d *Driver) error {
		t := &d.traffic
		words, unmap, err := mapCounters(f, t.n*countersSize)
		if err != nil {
			f.Close()
			return nil
		}
		t.file, t.shared, t.unmap = f, words, unmap
		return nil
	}
}

// count adds a copy's traffic: bytes of payload from device src to device
// dst, moved by an engine of profile p.
func (t *traffic) count(src, dst int, bytes float64, p profile) {
	if src < 0 || dst < 0 || src == dst || p.eff <= 0 || bytes <= 0 {
		return
	}
	data := uint64(bytes)
	raw := uint64(bytes * wireCeiling / p.eff)
	back := uint64(bytes * wireCeiling * p.rev)
	add := [2]struct {
		dev int
		c   results.LinkCounts
	}{{src, results.LinkCounts{TxData: data, TxRaw: raw, RxRaw: back}}, {dst, results.LinkCounts{RxData: data, RxRaw: raw, TxRaw: back}}}
	if t.shared != nil {
		for _, a := range add {
			w := t.shared[4*a.dev:]
			atomic.AddUint64(&w[0], a.c.TxData)
			atomic.AddUint64(&w[1], a.c.TxRaw)
			atomic.AddUint64(&w[2], a.c.RxData)
			atomic.AddUint64(&w[3], a.c.RxRaw)
		}
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.own == nil {
		t.own = make([]results.LinkCounts, t.n)
	}
	for _, a := range add {
		o := &t.own[a.dev]
		o.TxData, o.TxRaw, o.RxData, o.RxRaw = o.TxData+a.c.TxData, o.TxRaw+a.c.TxRaw, o.RxData+a.c.RxData, o.RxRaw+a.c.RxRaw
	}
}

// read returns device dev's counters: this process's, or what every
// process counted where they share a file.
func (t *traffic) read(dev int) results.LinkCounts {
	if w := t.shared; w != nil {
		w = w[4*dev:]
		return results.LinkCounts{TxData: atomic.LoadUint64(&w[0]), TxRaw: atomic.LoadUint64(&w[1]),
			RxData: atomic.LoadUint64(&w[2]), RxRaw: atomic.LoadUint64(&w[3])}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.own == nil {
		return results.LinkCounts{}
	}
	return t.own[dev]
}

// close unmaps and closes the shared file.
func (t *traffic) close() {
	if t.file != nil {
		t.unmap()
		t.file.Close()
		t.file, t.shared, t.unmap = nil, nil, nil
	}
}

// Traffic reads a device's NVLink throughput counters (see traffic); a
// machine without NVLinks has none.
func (m monitor) Traffic(dev int, busID string) (results.LinkCounts, error) {
	return query(m.d, "nvmlDeviceGetFieldValues", []int{dev}, func() (results.LinkCounts, error) {
		if m.d.m.linkCount() == 0 {
			return results.LinkCounts{}, fmt.Errorf("simulated machine: %w", gpu.ErrNoCounters)
		}
		return m.d.traffic.read(dev), nil
	})
}
