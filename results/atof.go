package results

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"sync"
)

// parseFloat converts the text of a JSON number to the float64
// strconv.ParseFloat returns, bit for bit; ok is false where ParseFloat
// fails (out of range) or the text is not one JSON number.
func parseFloat(text []byte) (f float64, ok bool) {
	f, end, ok := scanFloat(text, 0)
	return f, ok && end == len(text)
}

// scanFloat reads the JSON number at data[pos:] and converts it as
// strconv.ParseFloat would, returning where the number ends. Reading a
// results file converts millions of numbers, and ParseFloat spends most of
// its time re-scanning text for syntax JSON does not have (underscores,
// hexadecimal, infinities); scanFloat checks the JSON grammar and gathers
// the digits in one pass, then takes ParseFloat's own fast paths: exact
// float64 arithmetic when the digits fit, else the Eisel–Lemire algorithm.
// What neither decides goes to ParseFloat itself. ok is false for text that
// is not a JSON number and where ParseFloat fails (out of range).
func scanFloat(data []byte, pos int) (f float64, end int, ok bool) {
	if f, end, ok := scanShortFloat(data, pos); ok {
		return f, end, true
	}
	i, neg := pos, false
	if i < len(data) && data[i] == '-' {
		neg = true
		i++
	}
	// Up to 19 significant digits fit in a uint64.
	const maxMantDigits = 19
	var mantissa uint64
	nd, ndMant, dp := 0, 0, 0
	trunc := false
	digit := func(c byte) {
		if c == '0' && nd == 0 { // leading zeros
			dp--
			return
		}
		nd++
		if ndMant < maxMantDigits {
			mantissa = mantissa*10 + uint64(c-'0')
			ndMant++
		} else if c != '0' {
			trunc = true
		}
	}
	switch {
	case i < len(data) && data[i] == '0':
		digit('0')
		i++
	case i < len(data) && data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			digit(data[i])
			i++
		}
	default:
		return 0, pos, false
	}
	// The decimal point sits after the significant digits read so far;
	// leading zeros after it move it left (strconv's readFloat).
	dp = nd
	if i < len(data) && data[i] == '.' {
		i++
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return 0, pos, false
		}
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			digit(data[i])
			i++
		}
	}
	if i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		i++
		esign := 1
		if i < len(data) && (data[i] == '+' || data[i] == '-') {
			if data[i] == '-' {
				esign = -1
			}
			i++
		}
		if i >= len(data) || data[i] < '0' || data[i] > '9' {
			return 0, pos, false
		}
		e := 0
		for ; i < len(data) && data[i] >= '0' && data[i] <= '9'; i++ {
			if e < 10000 {
				e = e*10 + int(data[i]-'0')
			}
		}
		dp += e * esign
	}
	exp := 0
	if mantissa != 0 {
		exp = dp - ndMant
	}
	if !trunc {
		if f, ok := exactFloat(mantissa, exp, neg); ok {
			return f, i, true
		}
	}
	if f, ok := eiselLemire(mantissa, exp, neg); ok {
		if !trunc {
			return f, i, true
		}
		// Truncated digits: the result holds if the next mantissa up
		// rounds to the same float.
		if up, ok := eiselLemire(mantissa+1, exp, neg); ok && up == f {
			return f, i, true
		}
	}
	v, err := strconv.ParseFloat(string(data[pos:i]), 64)
	return v, i, err == nil
}

// scanShortFloat is scanFloat for the numbers results files are mostly
// made of: no exponent and at most 15 digits, whose value as an integer
// (below 2^53) and power of ten are both exact, so that exactFloat rounds
// correctly. ok is false for anything else, which scanFloat then reads.
func scanShortFloat(data []byte, pos int) (f float64, end int, ok bool) {
	i, neg := pos, false
	if i < len(data) && data[i] == '-' {
		neg = true
		i++
	}
	var mantissa uint64
	start := i
	for i < len(data) && data[i]-'0' <= 9 {
		mantissa = mantissa*10 + uint64(data[i]-'0')
		i++
	}
	digits := i - start
	if digits == 0 || digits > 1 && data[start] == '0' {
		return 0, pos, false
	}
	frac := 0
	if i < len(data) && data[i] == '.' {
		i++
		start = i
		for i < len(data) && data[i]-'0' <= 9 {
			mantissa = mantissa*10 + uint64(data[i]-'0')
			i++
		}
		frac = i - start
		if frac == 0 {
			return 0, pos, false
		}
	}
	if digits+frac > 15 || i < len(data) && (data[i] == 'e' || data[i] == 'E') {
		return 0, pos, false
	}
	f, ok = exactFloat(mantissa, -frac, neg)
	return f, i, ok
}

// float64pow10 are the powers of ten float64 holds exactly.
var float64pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// exactFloat computes mantissa × 10^exp with one correctly rounded float64
// operation on exact operands, when they are exact (strconv's atof64exact).
func exactFloat(mantissa uint64, exp int, neg bool) (f float64, ok bool) {
	if mantissa>>52 != 0 {
		return 0, false
	}
	f = float64(mantissa)
	if neg {
		f = -f
	}
	switch {
	case exp == 0:
		return f, true
	case exp > 0 && exp <= 15+22:
		// An exponent above 22 can move its excess into a mantissa that
		// stays exact (below 1e15).
		if exp > 22 {
			f *= float64pow10[exp-22]
			exp = 22
		}
		if f > 1e15 || f < -1e15 {
			return 0, false
		}
		return f * float64pow10[exp], true
	case exp < 0 && exp >= -22:
		return f / float64pow10[-exp], true
	}
	return 0, false
}

// Powers of ten for Eisel–Lemire: 128-bit mantissas of 10^e for e in
// [pow10Min, pow10Max], scaled into [2^127, 2^128) and truncated, as
// strconv's table.
const (
	pow10Min = -348
	pow10Max = 347
)

// pow10Table is computed once, on first use, from exact integer arithmetic
// (a few milliseconds); nil when the result failed its own check, which
// turns Eisel–Lemire off.
var pow10Table = sync.OnceValue(func() *[pow10Max - pow10Min + 1][2]uint64 {
	var t [pow10Max - pow10Min + 1][2]uint64
	one, ten := big.NewInt(1), big.NewInt(10)
	lo64 := new(big.Int).Sub(new(big.Int).Lsh(one, 64), one)
	for e := pow10Min; e <= pow10Max; e++ {
		var d *big.Int
		var be int // 10^e × 2^be = d (truncated), d in [2^127, 2^128)
		if e >= 0 {
			p := new(big.Int).Exp(ten, big.NewInt(int64(e)), nil)
			be = 128 - p.BitLen()
			if be >= 0 {
				d = new(big.Int).Lsh(p, uint(be))
			} else {
				d = new(big.Int).Rsh(p, uint(-be))
			}
		} else {
			q := new(big.Int).Exp(ten, big.NewInt(int64(-e)), nil)
			// 2^k / q lies in [2^127, 2^128) for k = 127 + bitlen(q)
			// or one less.
			be = 127 + q.BitLen()
			d = new(big.Int).Quo(new(big.Int).Lsh(one, uint(be)), q)
			if d.BitLen() > 128 {
				be--
				d = new(big.Int).Quo(new(big.Int).Lsh(one, uint(be)), q)
			}
		}
		if d.BitLen() != 128 || 128-be != 1+mulLog2of10(e) {
			return nil
		}
		t[e-pow10Min][0] = new(big.Int).Rsh(d, 64).Uint64()
		t[e-pow10Min][1] = new(big.Int).And(d, lo64).Uint64()
	}
	return &t
})

// mulLog2of10 is floor(x × log2(10)) for -500 ≤ x ≤ 500.
func mulLog2of10(x int) int {
	// log(10)/log(2) ≈ 3.32192809489 ≈ 108853 / 2^15
	return (x * 108853) >> 15
}

// eiselLemire converts mantissa × 10^exp10 to float64 when it can tell the
// correctly rounded result (https://nigeltao.github.io/blog/2020/eisel-lemire.html).
func eiselLemire(man uint64, exp10 int, neg bool) (f float64, ok bool) {
	if man == 0 {
		if neg {
			f = math.Copysign(0, -1)
		}
		return f, true
	}
	table := pow10Table()
	if table == nil || exp10 < pow10Min || exp10 > pow10Max {
		return 0, false
	}
	pow := table[exp10-pow10Min]
	exp2 := 1 + mulLog2of10(exp10)
	const float64Bias = -1023
	// Normalization.
	clz := bits.LeadingZeros64(man)
	man <<= uint(clz)
	retExp2 := uint64(exp2+63-float64Bias) - uint64(clz)
	// Multiplication.
	xHi, xLo := bits.Mul64(man, pow[0])
	// Wider approximation.
	if xHi&0x1FF == 0x1FF && xLo+man < man {
		yHi, yLo := bits.Mul64(man, pow[1])
		mergedHi, mergedLo := xHi, xLo+yHi
		if mergedLo < xLo {
			mergedHi++
		}
		if mergedHi&0x1FF == 0x1FF && mergedLo+1 == 0 && yLo+man < man {
			return 0, false
		}
		xHi, xLo = mergedHi, mergedLo
	}
	// Shifting to 54 bits.
	msb := xHi >> 63
	retMantissa := xHi >> (msb + 9)
	retExp2 -= 1 ^ msb
	// Half-way ambiguity.
	if xLo == 0 && xHi&0x1FF == 0 && retMantissa&3 == 1 {
		return 0, false
	}
	// From 54 to 53 bits.
	retMantissa += retMantissa & 1
	retMantissa >>= 1
	if retMantissa>>53 > 0 {
		retMantissa >>= 1
		retExp2++
	}
	// Subnormal, infinite or NaN results are left to strconv.
	if retExp2-1 >= 0x7FF-1 {
		return 0, false
	}
	retBits := retExp2<<52 | retMantissa&(1<<52-1)
	if neg {
		retBits |= 1 << 63
	}
	return math.Float64frombits(retBits), true
}
