package sim

import (
	"encoding/binary"
	"fmt"
	"os"
	"sync"

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
// every process of a run appends what it counts to one file, and a
// reading sums what all of them appended.

// wireCeiling is what the counters count of a saturated direction, as a
// share of the link's capacity the model gives it (419 of 450 GB/s).
const wireCeiling = 419.0 / 450.0

// recordSize is one record of the shared file: a device and what it
// counted, five little-endian uint64s.
const recordSize = 5 * 8

// traffic holds the machine's counters: this process's, or where shared,
// the sums of the file every process of the run appends to (read up to
// readOff so far). The records of the copies that end while the
// simulation runs are appended in one write when it stops (flush: at the
// end of every sched.run, before the host thread learns anything of what
// ended, and so before it can tell another process), not one write a
// copy: a write a copy was a fifth of a simulated all's time.
type traffic struct {
	mu      sync.Mutex
	own     []results.LinkCounts // by device
	file    *os.File
	pending []byte // records not yet appended to file
	readOff int64
	sums    []results.LinkCounts
	n       int // devices
}

// WithSharedTraffic makes the machine's NVLink throughput counters those
// of every process that appends to f: the parent of an IPC run and its
// children, whose copies the real counters of a device all count. f is
// opened for appending; the machine closes it.
func WithSharedTraffic(f *os.File) Option {
	return func(d *Driver) error {
		d.traffic.file = f
		return nil
	}
}

// count adds a copy's traffic: bytes of payload from device src to device
// dst, moved by an engine of profile p.
func (t *traffic) count(src, dst int, bytes float64, p profile) {
	if src < 0 || dst < 0 || src == dst || p.eff <= 0 || bytes <= 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.own == nil {
		t.own = make([]results.LinkCounts, t.n)
	}
	data := uint64(bytes)
	raw := uint64(bytes * wireCeiling / p.eff)
	back := uint64(bytes * wireCeiling * p.rev)
	add := []struct {
		dev int
		c   results.LinkCounts
	}{{src, results.LinkCounts{TxData: data, TxRaw: raw, RxRaw: back}}, {dst, results.LinkCounts{RxData: data, RxRaw: raw, TxRaw: back}}}
	var b [2 * recordSize]byte
	for i, a := range add {
		o := &t.own[a.dev]
		o.TxData, o.TxRaw, o.RxData, o.RxRaw = o.TxData+a.c.TxData, o.TxRaw+a.c.TxRaw, o.RxData+a.c.RxData, o.RxRaw+a.c.RxRaw
		for k, v := range []uint64{uint64(a.dev), a.c.TxData, a.c.TxRaw, a.c.RxData, a.c.RxRaw} {
			binary.LittleEndian.PutUint64(b[i*recordSize+8*k:], v)
		}
	}
	if t.file != nil {
		t.pending = append(t.pending, b[:]...)
	}
}

// flush appends the records counted since the last flush to the shared
// file, in one write appended whole: a failed one leaves the other
// processes' readings short, as the counters are the simulator's model,
// not a measurement.
func (t *traffic) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.flushLocked()
}

func (t *traffic) flushLocked() {
	if t.file != nil && len(t.pending) > 0 {
		_, _ = t.file.Write(t.pending)
		t.pending = t.pending[:0]
	}
}

// read returns device dev's counters: this process's, or what every
// process appended where they share a file.
func (t *traffic) read(dev int) results.LinkCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.file == nil {
		if t.own == nil {
			return results.LinkCounts{}
		}
		return t.own[dev]
	}
	t.flushLocked()
	if t.sums == nil {
		t.sums = make([]results.LinkCounts, t.n)
	}
	buf := make([]byte, 64*recordSize)
	for {
		k, _ := t.file.ReadAt(buf, t.readOff)
		k -= k % recordSize // whole records only
		for i := 0; i < k; i += recordSize {
			r := buf[i:]
			d := int(binary.LittleEndian.Uint64(r))
			if d < 0 || d >= t.n {
				continue
			}
			s := &t.sums[d]
			s.TxData += binary.LittleEndian.Uint64(r[8:])
			s.TxRaw += binary.LittleEndian.Uint64(r[16:])
			s.RxData += binary.LittleEndian.Uint64(r[24:])
			s.RxRaw += binary.LittleEndian.Uint64(r[32:])
		}
		t.readOff += int64(k)
		if k < len(buf) {
			return t.sums[dev]
		}
	}
}

// close appends what is left to the shared file and closes it.
func (t *traffic) close() {
	if t.file != nil {
		t.flush()
		t.file.Close()
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
