package kernels

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Module is what a PTX module declares: its PTX ISA version, its target and
// its entry points. ParsePTX reads it; the tests check every Go argument list
// against it, and the simulator loads modules through it (one PTX parser).
type Module struct {
	// Version is the .version directive: major*10+minor (8.0 is 80).
	Version int
	// Target is the .target's SM version (sm_90a is 90) and TargetSuffix
	// its "a" or "f" ("" for none).
	Target       int
	TargetSuffix string
	Entries      []Entry
}

// Entry is one .entry: its name, parameters and body (between its braces).
type Entry struct {
	Name   string
	Params []Param
	Body   string
}

// Param is one declared kernel parameter: its PTX type (".u64", ".u32", ...)
// and name.
type Param struct{ Type, Name string }

// Size is the parameter's size in bytes, from its type (".u64" is 8), or 0
// for a type without a size in its name.
func (p Param) Size() int {
	t := strings.TrimLeft(p.Type, ".usbf")
	var bits int
	if _, err := fmt.Sscan(t, &bits); err != nil {
		return 0
	}
	return bits / 8
}

// ErrNotPTX is ParsePTX's error for text without a .version or a .target
// directive.
var ErrNotPTX = errors.New("no .version or .target directive: not PTX")

var (
	versionDirective = regexp.MustCompile(`(?m)^\s*\.version\s+(\d+)\.(\d+)`)
	targetDirective  = regexp.MustCompile(`(?m)^\s*\.target\s+sm_(\d+)([af]?)`)
)

// ParsePTX reads a module's text (comments and a trailing NUL allowed).
func ParsePTX(text string) (*Module, error) {
	text = stripPTXComments(strings.TrimRight(text, "\x00"))
	v := versionDirective.FindStringSubmatch(text)
	t := targetDirective.FindStringSubmatch(text)
	if v == nil || t == nil {
		return nil, ErrNotPTX
	}
	m := &Module{TargetSuffix: t[2]}
	var major, minor int
	fmt.Sscan(v[1], &major)
	fmt.Sscan(v[2], &minor)
	m.Version = major*10 + minor
	fmt.Sscan(t[1], &m.Target)
	entries, err := parseEntries(text)
	if err != nil {
		return nil, err
	}
	m.Entries = entries
	return m, nil
}

var (
	entryHead = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(`)
	paramDecl = regexp.MustCompile(`^\.param\s+(\.[a-z0-9]+)\s+([A-Za-z_$][A-Za-z0-9_$]*)$`)
)

// parseEntries finds every .entry of a module whose comments were stripped.
func parseEntries(text string) ([]Entry, error) {
	var out []Entry
	for _, m := range entryHead.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		rest := text[m[1]:]
		closeParen := strings.IndexByte(rest, ')')
		if closeParen < 0 {
			return nil, fmt.Errorf("entry %s: unterminated parameter list", name)
		}
		e := Entry{Name: name}
		if list := strings.TrimSpace(rest[:closeParen]); list != "" {
			for _, decl := range strings.Split(list, ",") {
				decl = strings.Join(strings.Fields(decl), " ")
				pm := paramDecl.FindStringSubmatch(decl)
				if pm == nil {
					return nil, fmt.Errorf("entry %s: cannot read parameter %q", name, decl)
				}
				e.Params = append(e.Params, Param{Type: pm[1], Name: pm[2]})
			}
		}
		body, err := braceBlock(rest[closeParen+1:])
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		e.Body = body
		out = append(out, e)
	}
	return out, nil
}

// braceBlock returns the text inside the first balanced {...} of s, which may
// start only with white space and performance directives (.maxntid and the like).
func braceBlock(s string) (string, error) {
	open := strings.IndexByte(s, '{')
	if open < 0 {
		return "", fmt.Errorf("no body")
	}
	depth := 0
	for i := open; i < len(s); i++ {
		switch s[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return s[open+1 : i], nil
			}
		}
	}
	return "", fmt.Errorf("unbalanced braces")
}

// stripPTXComments removes // and /* */ comments (PTX has no string literals
// that could hold them).
func stripPTXComments(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		switch {
		case strings.HasPrefix(s[i:], "//"):
			j := strings.IndexByte(s[i:], '\n')
			if j < 0 {
				return b.String()
			}
			i += j
		case strings.HasPrefix(s[i:], "/*"):
			j := strings.Index(s[i+2:], "*/")
			if j < 0 {
				return b.String()
			}
			i += j + 4
			b.WriteByte(' ')
		default:
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String()
}
