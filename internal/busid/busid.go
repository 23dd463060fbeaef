// Package busid holds the one rule for PCI bus ids: CUDA and NVML spell
// them differently, and everything that matches devices by bus id (the
// NVML binding, the topology) compares them in Normalize's form. It
// imports nothing of the project.
package busid

import (
	"fmt"
	"strconv"
	"strings"
)

// Normalize returns a PCI bus id in one form, "dddd:bb:dd.f" in lower
// case, so that CUDA's "0000:2A:00.0" and NVML's "00000000:2a:00.0" compare
// equal. An id without a domain gets domain 0; text that is no bus id is
// returned trimmed and in lower case.
func Normalize(id string) string {
	s := strings.ToLower(strings.TrimSpace(id))
	parts := strings.Split(s, ":")
	if len(parts) == 2 {
		parts = append([]string{"0"}, parts...)
	}
	if len(parts) != 3 {
		return s
	}
	dev, fn, ok := strings.Cut(parts[2], ".")
	if !ok {
		return s
	}
	var n [4]uint64
	for i, p := range []string{parts[0], parts[1], dev, fn} {
		v, err := strconv.ParseUint(p, 16, 32)
		if err != nil {
			return s
		}
		n[i] = v
	}
	return fmt.Sprintf("%04x:%02x:%02x.%x", n[0], n[1], n[2], n[3])
}
