package kernels

import (
	"fmt"
	"regexp"
	"strings"
)

// entryParams returns the PTX types of an entry point's parameters, in order
// (".u64", ".u32", ...), read from the embedded module text; the tests check
// every Go argument list against it.
func entryParams(module, entry string) ([]string, error) {
	text, err := PTX(module)
	if err != nil {
		return nil, err
	}
	entries, err := parseEntries(stripPTXComments(text))
	if err != nil {
		return nil, fmt.Errorf("kernels: module %q: %w", module, err)
	}
	for _, e := range entries {
		if e.name == entry {
			types := make([]string, len(e.params))
			for i, p := range e.params {
				types[i] = p.typ
			}
			return types, nil
		}
	}
	return nil, fmt.Errorf("kernels: module %q has no entry %q", module, entry)
}

// ptxParam is one declared kernel parameter.
type ptxParam struct{ typ, name string }

// ptxEntry is one .entry: its name, parameters and body (between its braces).
type ptxEntry struct {
	name   string
	params []ptxParam
	body   string
}

var (
	entryHead = regexp.MustCompile(`\.entry\s+([A-Za-z_$][A-Za-z0-9_$]*)\s*\(`)
	paramDecl = regexp.MustCompile(`^\.param\s+(\.[a-z0-9]+)\s+([A-Za-z_$][A-Za-z0-9_$]*)$`)
)

// parseEntries finds every .entry of a module whose comments were stripped.
func parseEntries(text string) ([]ptxEntry, error) {
	var out []ptxEntry
	for _, m := range entryHead.FindAllStringSubmatchIndex(text, -1) {
		name := text[m[2]:m[3]]
		rest := text[m[1]:]
		closeParen := strings.IndexByte(rest, ')')
		if closeParen < 0 {
			return nil, fmt.Errorf("entry %s: unterminated parameter list", name)
		}
		e := ptxEntry{name: name}
		if list := strings.TrimSpace(rest[:closeParen]); list != "" {
			for _, decl := range strings.Split(list, ",") {
				decl = strings.Join(strings.Fields(decl), " ")
				pm := paramDecl.FindStringSubmatch(decl)
				if pm == nil {
					return nil, fmt.Errorf("entry %s: cannot read parameter %q", name, decl)
				}
				e.params = append(e.params, ptxParam{typ: pm[1], name: pm[2]})
			}
		}
		body, err := braceBlock(rest[closeParen+1:])
		if err != nil {
			return nil, fmt.Errorf("entry %s: %w", name, err)
		}
		e.body = body
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
