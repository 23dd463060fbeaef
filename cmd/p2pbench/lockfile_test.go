package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLockFileLinksAreRefused: a symbolic or hard link planted at a
// measuring run's lock file (.NAME.lock beside -o or in --dir) is refused,
// exit 2, before any measuring, and the file it leads to keeps its bytes.
func TestLockFileLinksAreRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	const precious = "precious data line\n"
	victim := filepath.Join(dir, "victim.txt")
	for _, c := range []struct {
		name  string
		lock  string
		plant func(victim, lock string) error
		args  []string
	}{
		{"a symbolic link beside -o", ".x.json.lock", os.Symlink,
			[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read", "--samples", "2", "--size", "4KiB", "-o", filepath.Join(dir, "x.json")}},
		{"a hard link beside -o", ".y.json.lock", os.Link,
			[]string{"bw", "--simulate", "h200x2", "--tests", "ce_read", "--samples", "2", "--size", "4KiB", "-o", filepath.Join(dir, "y.json")}},
		{"a symbolic link in --dir", filepath.Join("d", ".results.json.lock"), os.Symlink,
			[]string{"all", "--simulate", "h200x2", "--tests", "ce_read", "--samples", "2", "--sizes", "none", "--dir", filepath.Join(dir, "d")}},
	} {
		if err := os.WriteFile(victim, []byte(precious), 0o600); err != nil {
			t.Fatal(err)
		}
		lock := filepath.Join(dir, c.lock)
		os.MkdirAll(filepath.Dir(lock), 0o755)
		if err := c.plant(victim, lock); err != nil {
			t.Fatal(err)
		}
		_, stderr, status := p2pbench(t, c.args...)
		oneLine(t, c.name, stderr, status, exitUsage, "its lock file cannot be used: "+lock)
		if got, _ := os.ReadFile(victim); string(got) != precious {
			t.Errorf("%s: the file it leads to now holds %q", c.name, got)
		}
		if _, err := os.Lstat(lock); err != nil {
			t.Errorf("%s: the planted link was removed: %v", c.name, err)
		}
		os.Remove(lock)
	}
}
