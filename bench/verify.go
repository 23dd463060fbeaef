package bench

import (
	"encoding/binary"
	"fmt"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// Poison is written over a destination before a test, so a copy that never
// happened cannot pass verification.
const Poison = 0xDEADBEEF

// launchGrid is the grid of the fill and check kernels on dv.
func (dv *device) launchGrid() [3]uint32 {
	return [3]uint32{uint32(max(1, dv.info.SMCount) * 4), 1, 1}
}

// fill writes the verification pattern over bytes of p (on dv) and waits.
func (dv *device) fill(p cuda.DevicePtr, bytes uint64, seed uint32) error {
	f, err := dv.function(kernels.Fill)
	if err != nil {
		return err
	}
	s := dv.streams[0]
	args := kernels.FillArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed}
	if err := dv.ctx.Launch(f, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the fill kernel: %w", dv.idx, err)
	}
	if err := dv.ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: fill kernel: %w", dv.idx, err)
	}
	return nil
}

// poison overwrites bytes of p with Poison and waits.
func (dv *device) poison(p cuda.DevicePtr, bytes uint64) error {
	s := dv.streams[0]
	if err := dv.ctx.MemsetD32Async(p, Poison, bytes/4, s); err != nil {
		return fmt.Errorf("device %d: clearing the destination: %w", dv.idx, err)
	}
	return dv.ctx.StreamSynchronize(s)
}

// Mismatch describes data that failed verification.
type Mismatch struct {
	FirstBadByte uint64
	BadWords     uint64
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("data mismatch: first bad byte at offset %d, %d bad 4-byte word(s)", m.FirstBadByte, m.BadWords)
}

// check verifies bytes of p (on dv) against the pattern of seed; it returns a
// *Mismatch when the data is wrong.
func (dv *device) check(p cuda.DevicePtr, bytes uint64, seed uint32) error {
	f, err := dv.function(kernels.Check)
	if err != nil {
		return err
	}
	s := dv.streams[0]
	if err := dv.ctx.MemsetD32Async(dv.result, 0xFFFFFFFF, 2, s); err != nil {
		return fmt.Errorf("device %d: %w", dv.idx, err)
	}
	if err := dv.ctx.MemsetD32Async(dv.result+8, 0, 2, s); err != nil {
		return fmt.Errorf("device %d: %w", dv.idx, err)
	}
	args := kernels.CheckArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed, Result: uint64(dv.result)}
	if err := dv.ctx.Launch(f, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the check kernel: %w", dv.idx, err)
	}
	if err := dv.ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: check kernel: %w", dv.idx, err)
	}
	var res [16]byte
	if err := dv.ctx.MemcpyDtoH(res[:], dv.result); err != nil {
		return fmt.Errorf("device %d: reading the check result: %w", dv.idx, err)
	}
	first := binary.LittleEndian.Uint64(res[0:])
	bad := binary.LittleEndian.Uint64(res[8:])
	if bad != 0 {
		return &Mismatch{FirstBadByte: first * 4, BadWords: bad}
	}
	return nil
}
