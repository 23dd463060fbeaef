package mem

import "testing"

func TestPopulateKeepsContents(t *testing.T) {
	type pair struct {
		s string
		n int
	}
	s := make([]pair, 1<<16, 1<<17)
	s[0], s[len(s)-1] = pair{"first", 1}, pair{"last", 2}
	Populate(s)
	Populate(s[:cap(s)])
	Populate(s[10:20])
	Populate([]pair(nil))
	if s[0] != (pair{"first", 1}) || s[len(s)-1] != (pair{"last", 2}) || s[1] != (pair{}) {
		t.Error("Populate changed the slice's contents")
	}
}
