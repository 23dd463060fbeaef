package measure

import (
	"encoding/binary"
	"fmt"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/kernels"
)

// poison is written over a destination before a test, so a copy that never
// happened cannot pass verification.
const poison = 0xDEADBEEF

// Fill writes the verification pattern of seed over bytes of p (on dv) and waits.
func (dv *Device) Fill(p cuda.DevicePtr, bytes uint64, seed uint32) error {
	f, err := dv.Function(kernels.Fill)
	if err != nil {
		return err
	}
	s := dv.streams[0]
	args := kernels.FillArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed}
	if err := dv.Ctx.Launch(f, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the fill kernel: %w", dv.Index, err)
	}
	if err := dv.Ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: fill kernel: %w", dv.Index, err)
	}
	return nil
}

// Poison overwrites bytes of p (memory dv reaches: its own, a peer's, mapped
// host memory) with a value no pattern starts from, and waits.
func (dv *Device) Poison(p cuda.DevicePtr, bytes uint64) error {
	s := dv.streams[0]
	if err := dv.Ctx.MemsetD32Async(p, poison, bytes/4, s); err != nil {
		return fmt.Errorf("device %d: clearing the destination: %w", dv.Index, err)
	}
	return dv.Ctx.StreamSynchronize(s)
}

// Mismatch describes data that failed verification.
type Mismatch struct {
	FirstBadByte uint64
	BadWords     uint64
}

func (m *Mismatch) Error() string {
	return fmt.Sprintf("data mismatch: first bad byte at offset %d, %d bad 4-byte word(s)", m.FirstBadByte, m.BadWords)
}

// Check verifies bytes of p (on dv) against the pattern of seed on the GPU;
// it returns a *Mismatch when the data is wrong.
func (dv *Device) Check(p cuda.DevicePtr, bytes uint64, seed uint32) error {
	f, err := dv.Function(kernels.Check)
	if err != nil {
		return err
	}
	s := dv.streams[0]
	if err := dv.Ctx.MemsetD32Async(dv.result, 0xFFFFFFFF, 2, s); err != nil {
		return fmt.Errorf("device %d: %w", dv.Index, err)
	}
	if err := dv.Ctx.MemsetD32Async(dv.result+8, 0, 2, s); err != nil {
		return fmt.Errorf("device %d: %w", dv.Index, err)
	}
	args := kernels.CheckArgs{Buf: uint64(p), Words: bytes / 4, Seed: seed, Result: uint64(dv.result)}
	if err := dv.Ctx.Launch(f, dv.launchGrid(), [3]uint32{256, 1, 1}, 0, s, args.Params()...); err != nil {
		return fmt.Errorf("device %d: launching the check kernel: %w", dv.Index, err)
	}
	if err := dv.Ctx.StreamSynchronize(s); err != nil {
		return fmt.Errorf("device %d: check kernel: %w", dv.Index, err)
	}
	var res [16]byte
	if err := dv.Ctx.MemcpyDtoH(res[:], dv.result); err != nil {
		return fmt.Errorf("device %d: reading the check result: %w", dv.Index, err)
	}
	if bad := binary.LittleEndian.Uint64(res[8:]); bad != 0 {
		return &Mismatch{FirstBadByte: binary.LittleEndian.Uint64(res[0:]) * 4, BadWords: bad}
	}
	return nil
}
