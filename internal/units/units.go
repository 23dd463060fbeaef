// Package units reads what people type for sizes and device lists: byte
// counts with units ("512MiB"), size lists and ranges ("4B:1GiB"), device
// lists ("0-3,6"); and the one way counts are written back ("1 pair",
// "3 pairs": Plural). It is the command line's parsing, kept apart from the
// measuring packages; it imports nothing of the project.
package units

import (
	"errors"
	"fmt"
	"math/bits"
	"strconv"
	"strings"
)

var sizeUnits = []struct {
	suffix string
	mult   uint64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// SizeUnits says what ParseSize reads, for messages and help.
const SizeUnits = "B; KiB, MiB, GiB, TiB or K, M, G, T (powers of 1024, as nvbandwidth and nccl-tests count); KB, MB, GB, TB (powers of 1000: 4MB is 4,000,000 bytes, 4MiB 4,194,304)"

// ParseSize reads a byte count such as 4B, 64KiB, 512MiB, 1GiB or 4096 (see
// SizeUnits; case does not matter).
func ParseSize(s string) (uint64, error) {
	t := strings.TrimSpace(s)
	mult := uint64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(strings.ToUpper(t), strings.ToUpper(u.suffix)) {
			t = strings.TrimSpace(t[:len(t)-len(u.suffix)])
			mult = u.mult
			break
		}
	}
	n, err := strconv.ParseUint(t, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("bad size %s: want a whole number with an optional unit, e.g. 512MiB; the units: %s", quote(s), SizeUnits)
	}
	if n == 0 {
		return 0, fmt.Errorf("bad size %s: a transfer must move at least 4 bytes", quote(s))
	}
	hi, v := bits.Mul64(n, mult)
	if hi != 0 {
		return 0, fmt.Errorf("bad size %s: too large", quote(s))
	}
	return v, nil
}

// ParseSizes reads a size list: "4B:1GiB" (every power of two from the first
// to the last), "4B:1GiB:4" (multiplying by 4 each step), or a comma list
// "4KiB,1MiB,3MiB"; parts can be mixed with commas.
func ParseSizes(s string) ([]uint64, error) {
	var out []uint64
	seen := map[uint64]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		fields := strings.Split(part, ":")
		switch len(fields) {
		case 1:
			n, err := ParseSize(fields[0])
			if err != nil {
				return nil, err
			}
			if !seen[n] {
				out, seen[n] = append(out, n), true
			}
		case 2, 3:
			lo, err := ParseSize(fields[0])
			if err != nil {
				return nil, err
			}
			hi, err := ParseSize(fields[1])
			if err != nil {
				return nil, err
			}
			if hi < lo {
				return nil, fmt.Errorf("bad size range %s: %s is smaller than %s", quote(part), quote(strings.TrimSpace(fields[1])), quote(strings.TrimSpace(fields[0])))
			}
			step := uint64(2)
			if len(fields) == 3 {
				step, err = strconv.ParseUint(strings.TrimSpace(fields[2]), 10, 64)
				if err != nil || step < 2 {
					return nil, fmt.Errorf("bad size range %s: the factor must be a whole number ≥ 2", quote(part))
				}
			}
			for n := lo; n <= hi; n *= step {
				if !seen[n] {
					out, seen[n] = append(out, n), true
				}
				if n > hi/step {
					break
				}
			}
		default:
			return nil, fmt.Errorf("bad size list %s: use e.g. 4B:1GiB or 4KiB,1MiB", quote(s))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bad size list %s: no sizes", quote(s))
	}
	return out, nil
}

// MaxDevices bounds device lists: indices run from 0 to MaxDevices-1, and a
// list names at most MaxDevices devices. CUDA documents no limit of its own;
// 1024 is far above any machine one operating system runs (the largest
// hosts have 16 GPUs; a 72-GPU NVLink domain spans 18 hosts), and small
// enough that a list is checked before it is expanded and costs nothing to
// expand: "0-99999999" is refused, not spelled out.
const MaxDevices = 1024

// ParseDeviceList parses "0,2,3" or "0-3" or "0-1,4" into indices; "" and
// "all" give nil (every device). Indices above MaxDevices-1, and lists of
// more than MaxDevices entries, are refused before anything is expanded.
func ParseDeviceList(s string) ([]int, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "all" {
		return nil, nil
	}
	var out []int
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := deviceIndex(lo)
		b := a
		if err == nil && isRange {
			if b, err = deviceIndex(hi); err == nil && b < a {
				err = errors.New("not a range")
			}
		}
		switch {
		case errors.Is(err, errIndexTooLarge) && part == s:
			return nil, fmt.Errorf("bad device list %s: device indices go from 0 to %d", quote(s), MaxDevices-1)
		case errors.Is(err, errIndexTooLarge):
			return nil, fmt.Errorf("bad device list %s: %s: device indices go from 0 to %d", quote(s), quote(part), MaxDevices-1)
		case err != nil && isRange:
			return nil, fmt.Errorf("bad device list %s: %s is not a range like 0-3", quote(s), quote(part))
		case err != nil:
			return nil, fmt.Errorf("bad device list %s: %s is not a device index (use e.g. 0,2 or 0-3)", quote(s), quote(part))
		case len(out)+b-a+1 > MaxDevices:
			return nil, fmt.Errorf("bad device list %s: more than %d devices, so some are listed twice", quote(s), MaxDevices)
		}
		for d := a; d <= b; d++ {
			out = append(out, d)
		}
	}
	return out, nil
}

var errIndexTooLarge = errors.New("device index too large")

// deviceIndex reads one device index, 0 to MaxDevices-1.
func deviceIndex(s string) (int, error) {
	n, err := strconv.ParseUint(strings.TrimSpace(s), 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange) || err == nil && n >= MaxDevices:
		return 0, errIndexTooLarge
	case err != nil:
		return 0, err
	}
	return int(n), nil
}

// quote shows what the user typed in an error: quoted, so that the message
// stays one line, and cut to a few dozen bytes.
func quote(s string) string {
	const n = 32
	if len(s) <= n {
		return strconv.Quote(s)
	}
	return strconv.Quote(strings.ToValidUTF8(s[:n], "")) + "…"
}

// Plural is one or many: one when n is 1, else many, as in
// fmt.Sprintf("%d pair%s", n, Plural(n, "", "s")).
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
