package results

import (
	"io"
	"os"
)

// ReadBounded is readBoundedInto reading a regular file the quick way
// where it can, as Read does, for tests of its bound below MaxFileBytes;
// a file it maps stays mapped.
func ReadBounded(file string, r io.Reader, limit int64) ([]byte, error) {
	return readBoundedInto(file, r, limit, fileBounds, new(readBuffers))
}

// ReadSqueezed is readBounded reading every input through the squeezer,
// never the quick way; Plain is plainJSON with the files' bounds.
func ReadSqueezed(file string, r io.Reader, limit int64) ([]byte, error) {
	return readBoundedInto(file, r, limit, fileBounds, nil)
}

func Plain(data []byte) bool { return plainJSON(data, fileBounds) }

// Bounds are the bounds of JSON values that reading holds an input to:
// MaxObjects, MaxValues and MaxStringBytes for every input read; the
// functions ending in Within take others, lower.
type Bounds = valueBounds

func NewBounds(objects, values int64, str int) Bounds {
	return valueBounds{objects: objects, values: values, str: str}
}

// ReadBoundedWithin, ReadSqueezedWithin and PlainWithin are ReadBounded,
// ReadSqueezed and Plain holding the values to b.
func ReadBoundedWithin(file string, r io.Reader, limit int64, b Bounds) ([]byte, error) {
	return readBoundedInto(file, r, limit, b, new(readBuffers))
}

func ReadSqueezedWithin(file string, r io.Reader, limit int64, b Bounds) ([]byte, error) {
	return readBoundedInto(file, r, limit, b, nil)
}

func PlainWithin(data []byte, b Bounds) bool { return plainJSON(data, b) }

// MaxHint is the largest size that sizes a buffer before reading.
const MaxHint = maxHint

// ReadWithin and DecodeWithin are Read and Decode holding the JSON to
// limit bytes and its values to b, where those hold it to MaxFileBytes
// and the files' bounds (TestFileLimits).
func ReadWithin(path string, limit int64, b Bounds) (*Run, error) {
	return readWithin(path, readLimits{bytes: limit, values: b})
}

func DecodeWithin(r io.Reader, limit int64, b Bounds) (*Run, error) {
	return readGuarded("", r, readLimits{bytes: limit, values: b}, new(readBuffers), func(data []byte) (*Run, error) {
		return decode("", data, true)
	})
}

// DecodeWhole decodes data as Decode does without decoding its figures line
// by line; ByLines reports whether decodeLines decodes data.
func DecodeWhole(data []byte) (*Run, error) { return decode("", data, false) }

func ByLines(data []byte) bool {
	_, ok := decodeLines(data)
	return ok
}

// SummaryKeys are the keys of a figure's line, its stats and their rounds
// that the summary's fast path reads.
var SummaryKeys, SummaryStatsKeys, SummaryRoundsKeys = summaryKeys, summaryStatsKeys, summaryRoundsKeys

// FigureKey, StatsKey and RoundsKey index those keys.
func FigureKey(k string) int { return figureKey([]byte(k)) }
func StatsKey(k string) int  { return statsKey([]byte(k)) }
func RoundsKey(k string) int { return roundsKey([]byte(k)) }

// DecodeSummary decodes the summary of data; Fast reports whether its
// figures' lines are read by the fast path (every one of them).
func DecodeSummary(data []byte) (*Run, error) { return new(figureReader).decodeSummary("", data) }

func SummaryFast(data []byte) bool {
	_, ok := new(figureReader).summaryLines(data)
	return ok
}

// ReadCut reads path as Read does, the file cut to cut bytes once it is
// read the quick way and before it is decoded; mapped reports whether it
// was mapped.
func ReadCut(path string, cut int64) (run *Run, mapped bool, err error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	bufs := new(readBuffers)
	run, err = readGuarded(path, f, fileLimits, bufs, func(data []byte) (*Run, error) {
		mapped = bufs.mapped != nil
		if err := os.Truncate(path, cut); err != nil {
			return nil, err
		}
		return decode(path, data, true)
	})
	return run, mapped, err
}

// WithoutSamples is withoutSamples: a figure line without its samples' and
// rounds' numbers, as a summary reads it.
var WithoutSamples = withoutSamples
