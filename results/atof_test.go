package results

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func checkParseFloat(t testing.TB, s string) {
	want, werr := strconv.ParseFloat(s, 64)
	got, ok := parseFloat([]byte(s))
	if ok != (werr == nil) || ok && math.Float64bits(got) != math.Float64bits(want) {
		t.Fatalf("parseFloat(%q) = %v (%#x), %v; strconv says %v (%#x), %v", s, got, math.Float64bits(got), ok, want, math.Float64bits(want), werr)
	}
}

func TestPow10Table(t *testing.T) {
	if pow10Table() == nil {
		t.Fatal("the powers-of-ten table failed its check")
	}
	// Spot values from strconv's table.
	for _, c := range []struct {
		e      int
		hi, lo uint64
	}{
		{-348, 0xfa8fd5a0081c0288, 0x1732c869cd60e453},
		{-347, 0x9c99e58405118195, 0x0e7fbd42205c8eb4},
		{0, 0x8000000000000000, 0},
		{1, 0xa000000000000000, 0},
	} {
		got := pow10Table()[c.e-pow10Min]
		if got[0] != c.hi || got[1] != c.lo {
			t.Errorf("10^%d: %#x %#x, want %#x %#x", c.e, got[0], got[1], c.hi, c.lo)
		}
	}
}

func TestParseFloatMatchesStrconv(t *testing.T) {
	for _, s := range []string{"0", "-0", "1", "-1", "0.1", "1e-7", "1.5e-6", "1e21", "1e22", "1e23", "123456789012345678901234",
		"9007199254740993", "9007199254740992", "0.30000000000000004", "2.2250738585072011e-308", "2.2250738585072014e-308",
		"4.9e-324", "5e-324", "1e-400", "1e400", "1.7976931348623157e308", "1.7976931348623159e308", "0.000001", "100000000000000000000000",
		"740.4487516914447", "0.0029150817357696244", "12345678901234567890123e-10", "1E+2", "1e-0", "0e5", "0.0000"} {
		checkParseFloat(t, s)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < 300000; i++ {
		var s string
		switch i % 4 {
		case 0: // shortest forms of random doubles, as results files hold
			f := math.Float64frombits(rng.Uint64())
			if math.IsNaN(f) || math.IsInf(f, 0) {
				continue
			}
			s = strconv.FormatFloat(f, 'g', -1, 64)
		case 1: // plausible measurements
			s = strconv.FormatFloat(rng.Float64()*math.Pow(10, float64(rng.IntN(12)-4)), 'f', -1, 64)
		case 2: // long digit strings with exponents
			digits := make([]byte, 1+rng.IntN(30))
			for j := range digits {
				digits[j] = byte('0' + rng.IntN(10))
			}
			if digits[0] == '0' && len(digits) > 1 {
				digits[0] = '1'
			}
			s = string(digits) + "e" + strconv.Itoa(rng.IntN(700)-350)
		case 3: // fixed-point with a few decimals
			s = strconv.FormatFloat(rng.NormFloat64()*1e3, 'f', rng.IntN(18), 64)
		}
		checkParseFloat(t, s)
	}
}

func FuzzParseFloat(f *testing.F) {
	f.Add("740.4487516914447")
	f.Add("1e-7")
	f.Fuzz(func(t *testing.T, s string) {
		// Only JSON numbers reach parseFloat.
		d := &scanner{data: []byte(s)}
		text, _, ok := d.number()
		if !ok || d.pos != len(s) {
			return
		}
		checkParseFloat(t, string(text))
	})
}
