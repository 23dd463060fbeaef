package sim

import "math"

// What a launch of an SM copy kernel costs beyond its bytes, learnt from
// the 2× H100 NV18 (steady-state samples of a launch per copy, pulls:
// docs/methods.md): 512 MiB copies read smPerLaunchGBps (373.5–374.0 over the runs)
// where nvbandwidth's kernel, which repeats its copy inside one launch, read
// smInKernelGBps; 64 MiB copies read smPerLaunchGBps64 (363.0–365.6 across
// the copy variants, kernels.SmallCopyVariantFor). Each launch's grid drains
// its last wave while the next launch waits, then ramps up: 10.1 µs at 512
// MiB, 5.9 µs at 64 MiB.
const (
	smLaunchBytes     = 512 << 20
	smPerLaunchGBps   = 373.75
	smInKernelGBps    = 376.4
	smLaunchBytes64   = 64 << 20
	smPerLaunchGBps64 = 364.3
)

// launchCost is the cost of a launch of copies of n bytes, in ns: at512 at
// 512 MiB, as n to the power growth from 64 MiB up, and scaled down with n
// below 64 MiB as a copy's drain is (drainBytes), so that a small copy
// keeps the floor of its setup alone.
type launchCost struct{ at512, growth float64 }

// at is the cost of a launch whose copy is n bytes.
func (c launchCost) at(n uint64) float64 {
	if n < drainBytes {
		return c.at(drainBytes) * float64(n) / drainBytes
	}
	return c.at512 * math.Pow(float64(n)/smLaunchBytes, c.growth)
}

// costOfLaunch is one copy's time at the figure of a launch per copy less
// its time in one launch of many, for copies of bytes.
func costOfLaunch(bytes, perLaunch, inKernel float64) float64 {
	return bytes/perLaunch - bytes/inKernel
}

// h100Launch is the launch cost the two sizes give: 10.1 µs at 512 MiB,
// growing as the 0.26th power of the size. It also meets the H200's fit of
// 512 MiB and 2 GiB copies, 16 µs a launch (kernels/NOTES.md), within 10%.
var h100Launch = func() launchCost {
	at512 := costOfLaunch(smLaunchBytes, smPerLaunchGBps, smInKernelGBps)
	at64 := costOfLaunch(smLaunchBytes64, smPerLaunchGBps64, smInKernelGBps)
	return launchCost{at512: at512, growth: math.Log(at512/at64) / math.Log(smLaunchBytes/smLaunchBytes64)}
}()

// sustained is the rate of SM copies of 512 MiB that moved gbps launched
// one per copy, with a launch's cost taken out of each: what they move
// inside one launch.
func sustained(gbps float64) float64 {
	return smLaunchBytes / (smLaunchBytes/gbps - h100Launch.at512)
}
