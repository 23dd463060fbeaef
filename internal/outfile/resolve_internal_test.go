package outfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestResolveForAnotherUser: a link is followed for its owner and refused
// for any other user but root.
func TestResolveForAnotherUser(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "real.json")
	link := filepath.Join(dir, "link.json")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got, err := resolveFor(link, os.Geteuid()); err != nil || got != target {
		t.Errorf("for the link's owner: %q, %v; want %q", got, err, target)
	}
	other := os.Geteuid() + 4242
	if os.Geteuid() == 0 {
		// Root owns the link: every user may follow it. Give it to another
		// user to see the refusal.
		if err := os.Lchown(link, 4242, 4242); err != nil {
			t.Fatal(err)
		}
		other = 0 + 1 // neither root nor 4242
	}
	_, err := resolveFor(link, other)
	if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link owned by user") {
		t.Errorf("for another user: %v", err)
	}
}
