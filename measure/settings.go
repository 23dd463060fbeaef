package measure

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/p2pbench/p2pbench/cuda"
	"github.com/p2pbench/p2pbench/gpu"
	"github.com/p2pbench/p2pbench/internal/units"
	"github.com/p2pbench/p2pbench/kernels"
	"github.com/p2pbench/p2pbench/results"
)

// defaultLatchTimeout is how long a latch holds a stream at most by default.
const defaultLatchTimeout = 5 * time.Second

// Settings are what a run in one process (bench) and a run across
// processes (ipc) share.
type Settings struct {
	// Devices are the selected device indices (already checked).
	Devices []int
	// Tests are the tests to measure; each run measures those it knows.
	Tests []results.Test
	// Size is the transfer size of the bandwidth tests (default
	// results.DefaultSize).
	Size uint64
	// Samples per bandwidth figure (default results.DefaultSamples), taken
	// in Rounds rounds (default results.DefaultRounds; at most Samples),
	// each a pass over every
	// test, so the rounds of one figure are spread over the run.
	Samples int
	Rounds  int
	// Renew is what is made afresh on every device between two rounds
	// (the zero value: nothing; DefaultRenewal is what the command line
	// renews).
	Renew Renewal
	// Verify checks the data of every test and pair once.
	Verify bool
	// LatchTimeout bounds how long a latch may hold a stream (default 5 s).
	LatchTimeout time.Duration
	// SM is the SM copy kernel and its grid: a variant of "" is the one best
	// suited to the devices, a grid of 0 the variant's own (see ResolveSM).
	SM SMConfig
	// SMSmall, when its variant is set, is the kernel of transfers below
	// kernels.LargeCopyBytes: ResolveSM sets it where it chose SM itself
	// (no variant asked for) and the devices have a faster kernel for
	// small transfers than for large ones.
	SMSmall SMConfig
	// Tuned holds tuned SM configurations per pair and direction (from a
	// --tune run); pairs not in it use SM.
	Tuned map[TuneKey]SMConfig
	// Progress, when set, is told about each step.
	Progress func(done, total int, step string)
	// Monitor, when set, gives the NVLink counters that bandwidth figures
	// between two devices record (results.Figure.Traffic).
	Monitor gpu.Monitor
	// Watch, when set, looks for other programs on the GPUs and reads
	// their throttle reasons before measuring and after every test (see
	// Watch); one Watch serves the in-process and the IPC tests of a run.
	Watch *Watch
}

// MaxTransferSize bounds the size of one transfer: 1 TiB, more than any
// GPU's memory (the largest hold 288 GB), so a size no device could hold is
// refused before anything is allocated, and every product of a size that
// the tests form (two buffers and a margin, a buffer rounded up) stays far
// inside 64 bits.
const MaxTransferSize = 1 << 40

// CheckTransferSize checks a size the copy tests can move and verify:
// whole 4-byte words, at most MaxTransferSize.
func CheckTransferSize(n uint64) error {
	switch {
	case n > MaxTransferSize:
		return fmt.Errorf("bad size %d bytes (%s): larger than any GPU's memory (at most %s)", n, results.FormatBytes(n), results.FormatBytes(MaxTransferSize))
	case n < 4 || n%4 != 0:
		return fmt.Errorf("bad size %s: transfers are verified in 4-byte words, so the size must be a multiple of 4 bytes", results.FormatBytes(n))
	}
	return nil
}

// ParseTransferSize reads a transfer size (units.ParseSize: 512MiB, 4KB)
// and checks that it can be measured (CheckTransferSize).
func ParseTransferSize(s string) (uint64, error) {
	n, err := units.ParseSize(s)
	if err == nil {
		err = CheckTransferSize(n)
	}
	return n, err
}

// ParseSweep reads the sizes of a size sweep (units.ParseSizes: 4B:1GiB
// in powers of two, 4B:1GiB:4 in powers of four, or 4KiB,1MiB), each
// checked by CheckTransferSize; "" and "none" are no sweep.
func ParseSweep(s string) ([]uint64, error) {
	if s == "" || s == "none" {
		return nil, nil
	}
	sizes, err := units.ParseSizes(s)
	if err != nil {
		return nil, err
	}
	for _, z := range sizes {
		if err := CheckTransferSize(z); err != nil {
			return nil, err
		}
	}
	return sizes, nil
}

// BufferBytes is the size of a buffer that holds transfers of n bytes: n
// rounded up to 256 bytes. n must have passed CheckTransferSize.
func BufferBytes(n uint64) uint64 { return (n + 255) &^ 255 }

// MaxSamples is the most samples a figure may take.
const MaxSamples = 100000

// Validate checks the numbers of settings as a command line gives them,
// before the defaults fill them: Samples from 1 to MaxSamples, Rounds from
// 1 to Samples, a positive LatchTimeout. Its messages name the command
// line's flags (--samples, --rounds, --latch-timeout).
func (s *Settings) Validate() error {
	switch {
	case s.Samples < 1 || s.Samples > MaxSamples:
		return fmt.Errorf("--samples must be between 1 and %d (got %d)", MaxSamples, s.Samples)
	case s.LatchTimeout <= 0:
		return errors.New("--latch-timeout must be positive")
	case s.Rounds < 1 || s.Rounds > s.Samples:
		return fmt.Errorf("--rounds must be between 1 and --samples (%d), got %d", s.Samples, s.Rounds)
	}
	return nil
}

// SetDefaults fills the settings left at zero.
func (s *Settings) SetDefaults() {
	if s.Samples <= 0 {
		s.Samples = results.DefaultSamples
	}
	if s.Rounds <= 0 {
		s.Rounds = results.DefaultRounds
	}
	s.Rounds = min(s.Rounds, s.Samples)
	if s.Size == 0 {
		s.Size = results.DefaultSize
	}
	if s.LatchTimeout <= 0 {
		s.LatchTimeout = defaultLatchTimeout
	}
}

// Selected reports whether test t is to be measured.
func (s *Settings) Selected(t results.Test) bool { return slices.Contains(s.Tests, t) }

// ResolveSM fills the SM copy settings left open: the variant best suited
// to the devices (the lowest compute capability among them decides) and
// that variant's own grid.
func (s *Settings) ResolveSM(devs []cuda.DeviceInfo) {
	if s.SM.Variant == "" {
		cc := 0
		for _, d := range devs {
			if c := d.ComputeMajor*10 + d.ComputeMinor; cc == 0 || c < cc {
				cc = c
			}
		}
		s.SM.Variant = kernels.CopyVariantFor(cc)
		if v := kernels.SmallCopyVariantFor(cc); v != s.SM.Variant && s.SM.BlocksPerSM <= 0 && s.SM.BlockSize <= 0 {
			s.SMSmall = SMConfig{Variant: v}
			s.SMSmall.BlocksPerSM, s.SMSmall.BlockSize = defaultGrid(v)
		}
	}
	b, t := defaultGrid(s.SM.Variant)
	if s.SM.BlocksPerSM <= 0 {
		s.SM.BlocksPerSM = b
	}
	if s.SM.BlockSize <= 0 {
		s.SM.BlockSize = t
	}
}

// defaultGrid is a variant's own grid (2 blocks of 512 threads per SM for
// one the catalogue does not know).
func defaultGrid(variant string) (blocksPerSM, blockSize int) {
	if k, ok := kernels.CopyKernelByVariant(variant); ok {
		return k.DefaultGrid()
	}
	return 2, 512
}

// SMFor is the SM copy configuration for transfers of size bytes src → dst
// in a tuning direction (TuneDirections): the tuned one when there is one,
// else SMSmall below kernels.LargeCopyBytes where it is set, else SM.
func (s *Settings) SMFor(src, dst int, direction string, size uint64) SMConfig {
	if c, ok := s.Tuned[TuneKey{src, dst, direction}]; ok {
		return c
	}
	if s.SMSmall.Variant != "" && size < kernels.LargeCopyBytes {
		return s.SMSmall
	}
	return s.SM
}

// SMForTest is SMFor for a figure of test: the variant its catalogue shape
// names (Shape.Kernel) at that variant's own grid, when it names one.
func (s *Settings) SMForTest(test results.Test, src, dst int, direction string, size uint64) SMConfig {
	info := test.Info()
	if twin := info.SameProcess; twin != "" {
		info = twin.Info()
	}
	if k := info.Shape.Kernel; k != "" {
		c := SMConfig{Variant: k}
		c.BlocksPerSM, c.BlockSize = defaultGrid(k)
		return c
	}
	return s.SMFor(src, dst, direction, size)
}

// CopyOf says how a bandwidth test copies, as its catalogue shape
// (results.Shape) says: sm is true for the SM copy kernel (else the copy
// engine, with or without peer access); for a test between two devices, dir
// is the issuing side of a one-way test ("" for both ways at once). A test
// across processes copies as the test it repeats.
func CopyOf(t results.Test) (sm bool, dir results.Direction) {
	info := t.Info()
	if twin := info.SameProcess; twin != "" {
		info = twin.Info()
	}
	dir = info.Shape.Direction
	if dir == "" && !info.BothWays {
		dir = results.DirRead
	}
	return info.Shape.Engine == results.EngineSM, dir
}

// SMConfig is an SM copy kernel variant and its grid. It travels to the
// children of an IPC run as it is (JSON field names are the Go names).
type SMConfig struct {
	Variant     string
	BlocksPerSM int
	BlockSize   int
	// Share is how many SM copies run at once on the issuing device (0 or
	// 1: this one alone). They split its SMs: each launches one block per
	// SM of its 1/Share, whatever BlocksPerSM says, so that they run side by
	// side. Measured on an H200 with host copies both ways: with more blocks
	// (two per SM of the half) the block scheduler let one direction take
	// SMs from the other, and each direction's samples swung by 4–22%; with
	// one per SM of the half, 0.3–0.7%.
	Share int
}

// Engine is the figure engine of the configuration's kernel.
func (c SMConfig) Engine() results.Engine { return results.SMCopyEngine(c.Variant) }

// Params are the figure params that name the configuration.
func (c SMConfig) Params() map[string]string {
	p := map[string]string{
		"variant":       c.Variant,
		"blocks_per_sm": strconv.Itoa(c.BlocksPerSM),
		"block_size":    strconv.Itoa(c.BlockSize),
	}
	if c.Share > 1 {
		p["blocks_per_sm"] = "1"
		p[ParamSMShare] = "1/" + strconv.Itoa(c.Share)
	}
	return p
}

// FigureParams are the params of a figure of SM copies of size bytes with
// the configuration: Params, and results.ParamInKernelReps where its
// windows are one launch each (InKernelReps).
func (c SMConfig) FigureParams(size uint64) map[string]string {
	p := c.Params()
	if InKernelReps(size) {
		p[results.ParamInKernelReps] = "true"
	}
	return p
}

// ParamSMShare is the param of an SM copy that shared its device's SMs
// with other SM copies running at once ("1/2": half of them).
const ParamSMShare = "sm_share"

// Grid is the number of blocks of the configuration's launch on a device of
// sms multiprocessors: BlocksPerSM per SM, or when Share ways shared one per
// SM of its share; at least one.
func (c SMConfig) Grid(sms int) int {
	if c.Share > 1 {
		return max(1, sms/c.Share)
	}
	return max(1, max(1, sms)*c.BlocksPerSM)
}

// TuneKey names what a tuned SM configuration is for: an ordered pair and a
// direction (one of TuneDirections).
type TuneKey struct {
	Src, Dst  int
	Direction string
}

// TuneDirections are the directions a tuning run searches: read or write
// alone ("read", "write"), and with the reverse copy at the same time
// ("bidir_read", "bidir_write").
var TuneDirections = []string{
	TuneDirection(results.DirRead, false), TuneDirection(results.DirWrite, false),
	TuneDirection(results.DirRead, true), TuneDirection(results.DirWrite, true),
}

const bothWaysPrefix = "bidir_"

// TuneDirection is the tuning direction of an SM copy in direction dir,
// alone or with the reverse copy at the same time (bothWays).
func TuneDirection(dir results.Direction, bothWays bool) string {
	if bothWays {
		return bothWaysPrefix + string(dir)
	}
	return string(dir)
}

// SplitTuneDirection is the inverse of TuneDirection.
func SplitTuneDirection(s string) (dir results.Direction, bothWays bool) {
	d, both := strings.CutPrefix(s, bothWaysPrefix)
	return results.Direction(d), both
}

// TunedFrom turns the tuning records of a results file into configurations.
func TunedFrom(ts []results.Tuning) map[TuneKey]SMConfig {
	out := map[TuneKey]SMConfig{}
	for _, t := range ts {
		if t.Winner.Variant == "" {
			continue
		}
		out[TuneKey{t.Src, t.Dst, t.Direction}] = SMConfig{Variant: t.Winner.Variant, BlocksPerSM: t.Winner.BlocksPerSM, BlockSize: t.Winner.BlockSize}
	}
	return out
}
