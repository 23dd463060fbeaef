package results

// ReadBounded is readBounded, for tests of its bound below MaxFileBytes.
var ReadBounded = readBounded

// DecodeWhole decodes data as Decode does without decoding its figures line
// by line; ByLines reports whether decodeLines decodes data.
func DecodeWhole(data []byte) (*Run, error) { return decode("", data, false) }

func ByLines(data []byte) bool {
	_, ok := decodeLines(data)
	return ok
}
