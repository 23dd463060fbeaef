package bench

import (
	"encoding/binary"
	"runtime"
	"sync"

	"github.com/p2pbench/p2pbench/kernels"
)

// parallelWords runs fn over [0, words) split across the CPUs.
func parallelWords(words uint64, fn func(lo, hi uint64)) {
	n := uint64(runtime.GOMAXPROCS(0))
	if words < 1<<16 || n < 2 {
		fn(0, words)
		return
	}
	chunk := (words + n - 1) / n
	var wg sync.WaitGroup
	for lo := uint64(0); lo < words; lo += chunk {
		hi := min(lo+chunk, words)
		wg.Add(1)
		go func() {
			defer wg.Done()
			fn(lo, hi)
		}()
	}
	wg.Wait()
}

// fillHost writes the verification pattern into host memory.
func fillHost(b []byte, seed uint32) {
	parallelWords(uint64(len(b)/4), func(lo, hi uint64) {
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], kernels.Pattern(seed, i))
		}
	})
}

func poisonHost(b []byte) {
	parallelWords(uint64(len(b)/4), func(lo, hi uint64) {
		for i := lo; i < hi; i++ {
			binary.LittleEndian.PutUint32(b[4*i:], Poison)
		}
	})
}

// checkHost verifies host memory against the pattern, like the check kernel.
func checkHost(b []byte, seed uint32) error {
	var mu sync.Mutex
	var first, bad uint64 = ^uint64(0), 0
	parallelWords(uint64(len(b)/4), func(lo, hi uint64) {
		var f, n uint64 = ^uint64(0), 0
		for i := lo; i < hi; i++ {
			if binary.LittleEndian.Uint32(b[4*i:]) != kernels.Pattern(seed, i) {
				if i < f {
					f = i
				}
				n++
			}
		}
		mu.Lock()
		first, bad = min(first, f), bad+n
		mu.Unlock()
	})
	if bad != 0 {
		return &Mismatch{FirstBadByte: first * 4, BadWords: bad}
	}
	return nil
}
