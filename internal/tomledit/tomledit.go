// Package tomledit changes single values in a TOML document in place: every
// byte it does not need to change (comments, order, spacing, quoting) is kept.
// It reads the document with go-toml's parser, which reports where each key
// and value sits, and checks that every result still parses.
package tomledit

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Path names a value: its table's keys, then its own key.
type Path []string

func (p Path) String() string {
	parts := make([]string, len(p))
	for i, k := range p {
		parts[i] = Key(k)
	}
	return strings.Join(parts, ".")
}

// Key writes k as a TOML key: bare when it can be, quoted otherwise.
func Key(k string) string {
	if k != "" && strings.IndexFunc(k, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
	}) < 0 {
		return k
	}
	return String(k)
}

// String writes s as a TOML basic string.
func String(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// Bool writes a TOML boolean.
func Bool(v bool) string { return strconv.FormatBool(v) }

// Get decodes doc and returns the value at p, if any.
func Get(doc []byte, p Path) (any, bool, error) {
	var m map[string]any
	if err := toml.Unmarshal(doc, &m); err != nil {
		return nil, false, err
	}
	var cur any = m
	for _, k := range p {
		t, ok := cur.(map[string]any)
		if !ok {
			return nil, false, nil
		}
		if cur, ok = t[k]; !ok {
			return nil, false, nil
		}
	}
	return cur, true, nil
}

// keyValue is one key = value line of the document.
type keyValue struct {
	table    Path // the [table] it sits under
	key      Path // its own (possibly dotted) key
	start    int  // first byte of the key
	keyEnd   int  // byte after the last key part
	end      int  // byte after the value
	lineEnd  int  // byte after the line's newline (or len(doc))
	inArray  bool // under an [[array]] table: never edited
	tableIdx int  // index into header, -1 for the root
}

// header is one [table] or [[array]] line.
type header struct {
	path    Path
	array   bool
	lineEnd int // byte after the header line
	last    int // byte after the last line that belongs to it
}

type scan struct {
	kvs     []keyValue
	headers []header
}

func parse(doc []byte) (scan, error) {
	var s scan
	p := unstable.Parser{KeepComments: true}
	p.Reset(doc)
	var table Path
	inArray := false
	cur := -1
	for p.NextExpression() {
		e := p.Expression()
		switch e.Kind {
		case unstable.Table, unstable.ArrayTable:
			keys, _, end := keyParts(e)
			table, inArray = keys, e.Kind == unstable.ArrayTable
			le := lineEnd(doc, end)
			s.headers = append(s.headers, header{path: keys, array: inArray, lineEnd: le, last: le})
			cur = len(s.headers) - 1
		case unstable.KeyValue:
			keys, start, kend := keyParts(e)
			end := int(e.Raw.Offset + e.Raw.Length)
			kv := keyValue{table: table, key: keys, start: start, keyEnd: kend, end: end,
				lineEnd: lineEnd(doc, end), inArray: inArray, tableIdx: cur}
			s.kvs = append(s.kvs, kv)
			if cur >= 0 {
				s.headers[cur].last = kv.lineEnd
			}
		}
	}
	if err := p.Error(); err != nil {
		return scan{}, err
	}
	return s, nil
}

// keyParts returns an expression's key parts and the span they cover.
func keyParts(e *unstable.Node) (Path, int, int) {
	var keys Path
	start, end := -1, 0
	it := e.Key()
	for it.Next() {
		n := it.Node()
		keys = append(keys, string(n.Data))
		off, l := int(n.Raw.Offset), int(n.Raw.Length)
		if start < 0 {
			start = off
		}
		end = off + l
	}
	return keys, start, end
}

// lineEnd is the byte after the newline that ends the line holding doc[i-1]
// (comments after the value included), or len(doc).
func lineEnd(doc []byte, i int) int {
	if j := bytes.IndexByte(doc[i:], '\n'); j >= 0 {
		return i + j + 1
	}
	return len(doc)
}

// Set makes the value at p the TOML value text v (written with String, Bool,
// or any TOML literal). An existing value is replaced where it stands, its key
// spelled as before; a new one joins its table, or a new [table] at the end.
// A value inside an [[array]] table, an inline table or an array is not
// reachable this way and is refused.
func Set(doc []byte, p Path, v string) ([]byte, error) {
	if len(p) == 0 {
		return nil, fmt.Errorf("empty key path")
	}
	s, err := parse(doc)
	if err != nil {
		return nil, err
	}
	if kv, ok := s.find(p); ok {
		if kv.inArray {
			return nil, fmt.Errorf("%s is in an array of tables", p)
		}
		out := splice(doc, kv.keyEnd, kv.end, " = "+v)
		return checked(out, p)
	}
	tbl, key := p[:len(p)-1], p[len(p)-1]
	// Beside a dotted key that already defines the table at a shallower level.
	for i := len(s.kvs) - 1; i >= 0; i-- {
		kv := s.kvs[i]
		if kv.inArray || len(kv.key) < 2 {
			continue
		}
		full := append(slices.Clone(kv.table), kv.key[:len(kv.key)-1]...)
		if slices.Equal(full, tbl) {
			line := append(slices.Clone(kv.key[:len(kv.key)-1]), key).String() + " = " + v + "\n"
			return checked(insertLine(doc, kv.lineEnd, line), p)
		}
	}
	for i := len(s.headers) - 1; i >= 0; i-- {
		h := s.headers[i]
		if !h.array && slices.Equal(h.path, tbl) {
			return checked(insertLine(doc, h.last, Key(key)+" = "+v+"\n"), p)
		}
	}
	if len(tbl) == 0 {
		// A root key goes before the first table.
		at := len(doc)
		if len(s.headers) > 0 {
			at = lineStart(doc, s.headerStart(doc, 0))
		}
		return checked(insertLine(doc, at, Key(key)+" = "+v+"\n"), p)
	}
	var b bytes.Buffer
	b.Write(doc)
	if len(doc) > 0 && doc[len(doc)-1] != '\n' {
		b.WriteByte('\n')
	}
	if len(doc) > 0 {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "[%s]\n%s = %s\n", tbl, Key(key), v)
	return checked(b.Bytes(), p)
}

// Delete removes the key = value line at p (with its trailing comment) and
// reports whether there was one.
func Delete(doc []byte, p Path) ([]byte, bool, error) {
	s, err := parse(doc)
	if err != nil {
		return nil, false, err
	}
	kv, ok := s.find(p)
	if !ok {
		return doc, false, nil
	}
	if kv.inArray {
		return nil, false, fmt.Errorf("%s is in an array of tables", p)
	}
	start := lineStart(doc, kv.start)
	if strings.TrimSpace(string(doc[start:kv.start])) != "" {
		return nil, false, fmt.Errorf("%s shares its line with other text", p)
	}
	out := splice(doc, start, kv.lineEnd, "")
	out, err = checked(out, nil)
	return out, err == nil, err
}

// DeleteTable removes a [table] header that has no keys left under it (and the
// blank line before it, if any). It reports whether it removed one.
func DeleteTable(doc []byte, p Path) ([]byte, bool, error) {
	s, err := parse(doc)
	if err != nil {
		return nil, false, err
	}
	for i, h := range s.headers {
		if h.array || !slices.Equal(h.path, p) || h.last != h.lineEnd {
			continue
		}
		start := lineStart(doc, s.headerStart(doc, i))
		if start >= 2 && doc[start-1] == '\n' && doc[start-2] == '\n' {
			start--
		}
		out, err := checked(splice(doc, start, h.lineEnd, ""), nil)
		return out, err == nil, err
	}
	return doc, false, nil
}

// headerStart finds the '[' of header i: the line before its key.
func (s scan) headerStart(doc []byte, i int) int {
	// The header line ends at lineEnd; its start is the line start of lineEnd-1.
	end := s.headers[i].lineEnd
	if end > 0 && doc[end-1] == '\n' {
		end--
	}
	return lineStart(doc, end)
}

func (s scan) find(p Path) (keyValue, bool) {
	for _, kv := range s.kvs {
		if len(kv.table)+len(kv.key) != len(p) {
			continue
		}
		if slices.Equal(kv.table, p[:len(kv.table)]) && slices.Equal(kv.key, p[len(kv.table):]) {
			return kv, true
		}
	}
	return keyValue{}, false
}

func lineStart(doc []byte, i int) int {
	return bytes.LastIndexByte(doc[:i], '\n') + 1
}

func splice(doc []byte, from, to int, with string) []byte {
	out := make([]byte, 0, len(doc)+len(with))
	out = append(out, doc[:from]...)
	out = append(out, with...)
	return append(out, doc[to:]...)
}

// insertLine puts line at offset at (a line start), adding the newline the
// line before it may lack.
func insertLine(doc []byte, at int, line string) []byte {
	if at > 0 && doc[at-1] != '\n' {
		line = "\n" + line
	}
	return splice(doc, at, at, line)
}

// checked refuses an edit whose result no longer parses (or, when p is set,
// whose value at p cannot be read back).
func checked(out []byte, p Path) ([]byte, error) {
	if _, ok, err := Get(out, p); err != nil {
		return nil, fmt.Errorf("the edit would leave invalid TOML: %w", err)
	} else if p != nil && !ok {
		return nil, fmt.Errorf("the edit did not take: %s is not set", p)
	}
	return out, nil
}
