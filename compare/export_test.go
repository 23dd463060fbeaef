package compare

// ReadShared is readShared, for the tests of package compare_test.
var ReadShared = readShared

// Prepare prepares the comparison of inputs at opt's alpha and confidence
// and returns what judges it as Compare does with other options (their
// alpha and confidence the prepared ones): a comparison judged several ways
// is made once.
func Prepare(inputs []Input, opt Options) (func(Options) *Result, error) {
	opt, err := opt.withDefaults()
	if err != nil {
		return nil, err
	}
	p, err := prepareMemo(inputs, opt, nil)
	if err != nil {
		return nil, err
	}
	return func(o Options) *Result { return p.judged(o, true) }, nil
}
