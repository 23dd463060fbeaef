package cuda

import (
	"testing"
	"unsafe"
)

func TestIPCHandleLayout(t *testing.T) {
	// purego passes ipcHandle the way C passes a 64-byte struct only if
	// the layouts agree exactly.
	if s, a := unsafe.Sizeof(ipcHandle{}), unsafe.Alignof(ipcHandle{}); s != 64 || a != 1 {
		t.Errorf("ipcHandle: size %d, alignment %d; want 64 and 1 like CUipcMemHandle", s, a)
	}
}

func TestVMMStructLayout(t *testing.T) {
	// The driver reads these through pointers with the C layouts of cuda.h.
	var p allocationProp
	if s, off := unsafe.Sizeof(p), unsafe.Offsetof(p.Win32HandleMetaData); s != 32 || off != 16 {
		t.Errorf("allocationProp: size %d, win32HandleMetaData at %d; want 32 and 16 like CUmemAllocationProp", s, off)
	}
	var descs [2]accessDesc
	if s := unsafe.Sizeof(descs); s != 24 {
		t.Errorf("two accessDesc take %d bytes, want 24 like CUmemAccessDesc[2]", s)
	}
}

func TestCUDAVersionString(t *testing.T) {
	for _, tc := range []struct {
		v    int
		want string
	}{
		{13000, "13.0"},
		{12080, "12.8"},
		{12090, "12.9"},
		{11040, "11.4"},
		{13010, "13.1"},
	} {
		if got := CUDAVersionString(tc.v); got != tc.want {
			t.Errorf("CUDAVersionString(%d) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestFormatUUID(t *testing.T) {
	u := [16]byte{0xde, 0xad, 0xbe, 0xef, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xa, 0xb}
	if got, want := formatUUID(u), "GPU-deadbeef-0001-0203-0405-060708090a0b"; got != want {
		t.Errorf("formatUUID = %q, want %q", got, want)
	}
}

func TestPackParams(t *testing.T) {
	type lanes uint32
	type ptr uint64
	type scale float32
	type delta int32
	values, err := packParams([]any{lanes(7), ptr(1 << 40), scale(0.5), delta(-1), DevicePtr(9)})
	if err != nil {
		t.Fatal(err)
	}
	// 4-byte values occupy the first four bytes of their slot.
	want := []uint64{7, 1 << 40, 0x3f000000, 0xffffffff, 9}
	for i := range want {
		if values[i] != want[i] {
			t.Errorf("slot %d = %#x, want %#x", i, values[i], want[i])
		}
	}
	for _, bad := range []any{int(1), int64(1), uint8(1), uintptr(1), Stream(1), nil, struct{}{}} {
		if _, err := packParams([]any{bad}); err == nil {
			t.Errorf("packParams accepted a %T", bad)
		}
	}
}
