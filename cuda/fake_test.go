//go:build linux

package cuda_test

import (
	"os"
	"testing"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/internal/dl"
	"github.com/p2pbench/p2pbench/internal/fakelib"
)

// The fake libcuda (testdata/fakecuda.c) is built once per test binary, in
// one variant per set of -D flags.
const (
	variantDefault      = ""
	variantNoAtomicCaps = "NO_ATOMIC_CAPS"
	variantOldDriver    = "OLD_DRIVER"
	variantNoLaunch     = "NO_LAUNCH"
)

var fakes = &fakelib.Set{Src: "testdata/fakecuda.c", LibName: "libcuda.so.1"}

func TestMain(m *testing.M) {
	code := m.Run()
	fakes.Remove()
	os.Exit(code)
}

// skipFakes, when set, is why the tests that load the fake library are
// skipped in this build.
var skipFakes string

// fakePath returns the path of a variant of the fake library. Without gcc the
// test is skipped, except on CI, where gcc must be there.
func fakePath(t *testing.T, variant string) string {
	t.Helper()
	if skipFakes != "" {
		t.Skip(skipFakes)
	}
	return fakes.Path(t, variant)
}

// hooks are the fake library's test entry points and a few of its driver
// entry points called directly.
type hooks struct {
	reset               func()
	setInitResult       func(r int32)
	lastCtxDevice       func() int32
	currentDevice       func() int32
	lastCtxTid          func() int64
	callsWithoutContext func() int32
	primaryRefs         func(dev int32) int32
	peerEnabled         func(dev, peer int32) int32
	lastLaunch          func(args *[11]uint64, params *uint64, max int32, dev *int32) int32
	lastIPC             func(out *[64]byte) uint32
	lastModuleLen       func() uint64
	lastFuncAttr        func(value *int32) int32
	lastHostAllocFlags  func() uint32
	lastRegisterFlags   func() uint32
	greenCounts         func(made, live *int32)
	hostRegistered      func() int32
	streamFlags         func(s cuda.Stream) uint32
	eventFlags          func(e cuda.Event) uint32
	advanceClockMs      func(ms float64)
	vmmLive             func(handles, ranges, maps *int32)
	lastProp            func(out *[5]int32)
	lastAccess          func(out *[12]int32) int32

	cuMemAlloc func(p *uint64, bytes uint64) int32
}

// loadHooks binds the hooks of the library at path. dlopen of a path already
// loaded returns the same library, so the hooks see the state the Driver uses.
func loadHooks(t *testing.T, path string) *hooks {
	t.Helper()
	var k hooks
	if _, err := dl.Load(dl.Library{Name: path}, []dl.Entry{
		{Fn: &k.reset, Name: "fake_reset"},
		{Fn: &k.setInitResult, Name: "fake_set_init_result"},
		{Fn: &k.lastCtxDevice, Name: "fake_last_ctx_device"},
		{Fn: &k.currentDevice, Name: "fake_current_device"},
		{Fn: &k.lastCtxTid, Name: "fake_last_ctx_tid"},
		{Fn: &k.callsWithoutContext, Name: "fake_calls_without_context"},
		{Fn: &k.primaryRefs, Name: "fake_primary_refs"},
		{Fn: &k.peerEnabled, Name: "fake_peer_enabled"},
		{Fn: &k.lastLaunch, Name: "fake_last_launch"},
		{Fn: &k.lastIPC, Name: "fake_last_ipc"},
		{Fn: &k.lastModuleLen, Name: "fake_last_module_len"},
		{Fn: &k.lastFuncAttr, Name: "fake_last_func_attr"},
		{Fn: &k.lastHostAllocFlags, Name: "fake_last_hostalloc_flags"},
		{Fn: &k.lastRegisterFlags, Name: "fake_last_hostregister_flags"},
		{Fn: &k.greenCounts, Name: "fake_green_counts"},
		{Fn: &k.hostRegistered, Name: "fake_host_registered"},
		{Fn: &k.streamFlags, Name: "fake_stream_flags"},
		{Fn: &k.eventFlags, Name: "fake_event_flags"},
		{Fn: &k.advanceClockMs, Name: "fake_advance_clock_ms"},
		{Fn: &k.vmmLive, Name: "fake_vmm_live"},
		{Fn: &k.lastProp, Name: "fake_last_prop"},
		{Fn: &k.lastAccess, Name: "fake_last_access"},
		{Fn: &k.cuMemAlloc, Name: "cuMemAlloc_v2"},
	}); err != nil {
		t.Fatalf("binding the fake's hooks: %v", err)
	}
	k.reset()
	return &k
}

// openFake opens a Driver on a variant of the fake library, with its state
// reset, and closes it at the end of the test.
func openFake(t *testing.T, variant string) (*cuda.Driver, *hooks) {
	t.Helper()
	path := fakePath(t, variant)
	k := loadHooks(t, path)
	t.Setenv(cuda.LibraryEnv, path)
	d, err := cuda.Open()
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() {
		if err := d.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return d, k
}

// contexts returns the contexts of devices 0 and 1.
func contexts(t *testing.T, d *cuda.Driver) (*cuda.Context, *cuda.Context) {
	t.Helper()
	c0, err := d.Context(0)
	if err != nil {
		t.Fatalf("Context(0): %v", err)
	}
	c1, err := d.Context(1)
	if err != nil {
		t.Fatalf("Context(1): %v", err)
	}
	return c0, c1
}

// must turns a (value, error) result into the value, failing the test on
// the error: p := must(c.MemAlloc(64))(t).
func must[T any](v T, err error) func(testing.TB) T {
	return func(t testing.TB) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// ok fails the test on err.
func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
