package sim

import "math"

// Jitter is a pure function of the seed and of where an operation sits (its
// device, its stream's ordinal in the context, its ordinal in the stream), so
// a run is reproducible whatever order goroutines happen to enqueue in.

// splitmix is the SplitMix64 finaliser: a cheap, well-mixed 64-bit hash step.
func splitmix(x uint64) uint64 {
	x += 0x9E3779B97F4A7C15
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9
	x = (x ^ (x >> 27)) * 0x94D049BB133111EB
	return x ^ (x >> 31)
}

// hashKeys folds keys into one 64-bit hash, starting from seed.
func hashKeys(seed uint64, keys ...uint64) uint64 {
	h := splitmix(seed ^ 0x70327062656e6368) // "p2pbench"
	for _, k := range keys {
		h = splitmix(h ^ k)
	}
	return h
}

// unitFloat maps a hash to [0, 1).
func unitFloat(h uint64) float64 { return float64(h>>11) / (1 << 53) }

// normal returns a standard normal deviate determined by the seed and keys,
// clamped to ±3 so one unlucky draw cannot distort a figure.
func (d *Driver) normal(keys ...uint64) float64 {
	h := hashKeys(uint64(d.seed), keys...)
	u1 := 1 - unitFloat(h) // (0, 1]
	u2 := unitFloat(splitmix(h))
	z := math.Sqrt(-2*math.Log(u1)) * math.Cos(2*math.Pi*u2)
	return math.Max(-3, math.Min(3, z))
}

// jitter returns a multiplicative factor near 1 with the machine's relative
// standard deviation (sigma scales it; 1 is the model's default).
func (d *Driver) jitter(sigma float64, keys ...uint64) float64 {
	return 1 + sigma*d.m.m.jitter*d.normal(keys...)
}

// Purposes of noise draws, so two draws for one operation differ.
const (
	noiseSpeed uint64 = iota + 1
	noiseSetup
	noiseChunk
	noiseAtomic
	noisePing
)
