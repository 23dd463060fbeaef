package results

import "reflect"

// JSONKind names, in JSON's words, the values a Go type decodes from ("an
// object", "a number", "a whole number ≥ 0 of at most 64 bits"): for
// messages about other JSON inputs (specs) worded as the results reader
// words its own.
func JSONKind(t reflect.Type) string { return jsonKind(t) }
