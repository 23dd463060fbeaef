package termsafe

// String is s with its control characters made visible, as Writer makes
// them.
func String(s string) string {
	var b stringBuilder
	w := Writer{W: &b}
	w.Write([]byte(s))
	b = append(b, w.pending...)
	return string(b)
}

type stringBuilder []byte

func (b *stringBuilder) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}
