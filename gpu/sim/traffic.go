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
// every process of a run counts into one file, each in a slot of its own,
// and a reading sums the slots.

// wireCeiling is what the counters count of a saturated direction, as a
// share of the link's capacity the model gives it (419 of 450 GB/s).
const wireCeiling = 419.0 / 450.0

// countsSize is a device's four counters in a slot of the shared file.
const countsSize = 4 * 8

// traffic holds the machine's counters: this process's, and where shared,
// the file every process of the run counts into.
type traffic struct {
	mu   sync.Mutex
	own  []results.LinkCounts // by device
	file *os.File
	slot int // this process's slot in the file
	n    int // devices
}

// WithSharedTraffic makes the machine's NVLink throughput counters those
// of every process that gives the same file: the parent of an IPC run and
// its children, whose copies the real counters of a device all count. The
// file is created when missing; each process writes its own slot.
func WithSharedTraffic(path string) Option {
	return func(d *Driver) error {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
		if err != nil {
			return fmt.Errorf("sim: shared NVLink counters: %w", err)
		}
		slot, err := claimSlot(path)
		if err != nil {
			f.Close()
			return err
		}
		d.traffic.file, d.traffic.slot = f, slot
		return nil
	}
}

// maxSlots bounds the processes that share a machine's counters.
const maxSlots = 1024

// claimSlot takes the first slot of the file at path no process has
// taken, by creating its marker (path.N) exclusively.
func claimSlot(path string) (int, error) {
	for i := range maxSlots {
		f, err := os.OpenFile(fmt.Sprintf("%s.%d", path, i), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if err == nil {
			f.Close()
			return i, nil
		}
		if !os.IsExist(err) {
			return 0, fmt.Errorf("sim: shared NVLink counters: %w", err)
		}
	}
	return 0, fmt.Errorf("sim: shared NVLink counters: %d processes share %s", maxSlots, path)
}

// RemoveSharedTraffic removes the file of WithSharedTraffic and the slot
// markers of its processes.
func RemoveSharedTraffic(path string) {
	for i := range maxSlots {
		if os.Remove(fmt.Sprintf("%s.%d", path, i)) != nil {
			break
		}
	}
	os.Remove(path)
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
	s, r := &t.own[src], &t.own[dst]
	s.TxData += data
	s.TxRaw += raw
	s.RxRaw += back
	r.RxData += data
	r.RxRaw += raw
	r.TxRaw += back
	if t.file != nil {
		for _, dev := range []int{src, dst} {
			c := t.own[dev]
			var b [countsSize]byte
			for i, v := range []uint64{c.TxData, c.TxRaw, c.RxData, c.RxRaw} {
				binary.LittleEndian.PutUint64(b[8*i:], v)
			}
			// A failed write leaves the other processes' readings short:
			// the counters are the simulator's model, not a measurement.
			_, _ = t.file.WriteAt(b[:], int64((t.slot*t.n+dev)*countsSize))
		}
	}
}

// read returns device dev's counters: this process's, or every process's
// summed where they share a file.
func (t *traffic) read(dev int) results.LinkCounts {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.file == nil {
		if t.own == nil {
			return results.LinkCounts{}
		}
		return t.own[dev]
	}
	var sum results.LinkCounts
	var b [countsSize]byte
	for slot := 0; ; slot++ {
		if _, err := t.file.ReadAt(b[:], int64((slot*t.n+dev)*countsSize)); err != nil {
			break
		}
		sum.TxData += binary.LittleEndian.Uint64(b[0:])
		sum.TxRaw += binary.LittleEndian.Uint64(b[8:])
		sum.RxData += binary.LittleEndian.Uint64(b[16:])
		sum.RxRaw += binary.LittleEndian.Uint64(b[24:])
	}
	return sum
}

// close closes the shared file.
func (t *traffic) close() {
	if t.file != nil {
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
