//go:build gpu

package bench

import (
	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
)

// FillCopyCheck fills n bytes at src (on a's device) with a pattern, copies
// them to dst (on b's), overwrites the word at byte corrupt when corrupt ≥ 0,
// and runs the GPU check on dst: the engine's own verification path.
func FillCopyCheck(drv gpu.Driver, a, b gpu.Context, src, dst cuda.DevicePtr, n uint64, corrupt int64) (err error) {
	e := NewEngine(drv, Options{})
	defer func() {
		if terr := e.teardown(); err == nil {
			err = terr
		}
	}()
	da, err := e.openDevice(a.Device(), 0)
	if err != nil {
		return err
	}
	e.devs[da.idx], e.order = da, append(e.order, da.idx)
	db, err := e.openDevice(b.Device(), 0)
	if err != nil {
		return err
	}
	e.devs[db.idx], e.order = db, append(e.order, db.idx)
	const seed = 0x1234567
	if err := da.fill(src, n, seed); err != nil {
		return err
	}
	if err := db.poison(dst, n); err != nil {
		return err
	}
	s := db.streams[0]
	if err := b.MemcpyPeerAsync(dst, b, src, a, n, s); err != nil {
		return err
	}
	if corrupt >= 0 {
		if err := b.MemsetD32Async(dst+cuda.DevicePtr(corrupt), 0, 1, s); err != nil {
			return err
		}
	}
	if err := b.StreamSynchronize(s); err != nil {
		return err
	}
	return db.check(dst, n, seed)
}
