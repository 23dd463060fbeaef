package kernels

import (
	"math"
	"reflect"
)

func float32bits(f float32) uint32 { return math.Float32bits(f) }

// asUint64 accepts named 64-bit unsigned types such as cuda.DevicePtr
// without importing cuda.
func asUint64(v any) (uint64, bool) {
	r := reflect.ValueOf(v)
	if r.Kind() == reflect.Uint64 {
		return r.Uint(), true
	}
	return 0, false
}
