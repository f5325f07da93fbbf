// Package hooks installs, removes and reports this tool's Stop hook in the agents' settings files, keeping every other key, hook and key order.
package hooks

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// Object is a JSON object whose members keep the order they had in the file.
// Values are *Object, []any, string, json.Number, bool or nil.
type Object struct {
	Members []Member
}

// Member is one key of an Object with its value.
type Member struct {
	Key   string
	Value any
}

// Get returns the value of key; with duplicate keys the last one wins, as in
// the JavaScript parser the agents use.
func (o *Object) Get(key string) (any, bool) {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Key == key {
			return o.Members[i].Value, true
		}
	}
	return nil, false
}

// Set replaces the value of key in place (the last occurrence) or appends it.
func (o *Object) Set(key string, v any) {
	for i := len(o.Members) - 1; i >= 0; i-- {
		if o.Members[i].Key == key {
			o.Members[i].Value = v
			return
		}
	}
	o.Members = append(o.Members, Member{Key: key, Value: v})
}

// Delete removes every member named key.
func (o *Object) Delete(key string) {
	kept := o.Members[:0]
	for _, m := range o.Members {
		if m.Key != key {
			kept = append(kept, m)
		}
	}
	o.Members = kept
}

// maxDepth bounds nesting so a hostile file cannot exhaust the stack.
const maxDepth = 512

// errNotObject says the document parsed but its top level is not an object.
var errNotObject = errors.New("top level is not a JSON object")

// Parse decodes a JSON document whose top level is an object, keeping member
// order, duplicate keys and number literals exactly as written.
func Parse(data []byte) (*Object, error) {
	if !utf8.Valid(data) {
		return nil, errors.New("not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec, 0)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("unexpected data after the top-level value")
	}
	obj, ok := v.(*Object)
	if !ok {
		return nil, errNotObject
	}
	return obj, nil
}

func decodeValue(dec *json.Decoder, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", maxDepth)
	}
	tok, err := dec.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			return decodeObject(dec, depth)
		case '[':
			return decodeArray(dec, depth)
		}
		return nil, fmt.Errorf("unexpected %q", rune(t))
	default:
		return t, nil
	}
}

func decodeObject(dec *json.Decoder, depth int) (*Object, error) {
	obj := &Object{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, ok := tok.(string)
		if !ok {
			return nil, fmt.Errorf("object key is %v, not a string", tok)
		}
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		obj.Members = append(obj.Members, Member{Key: key, Value: v})
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, err
	}
	return obj, nil
}

func decodeArray(dec *json.Decoder, depth int) ([]any, error) {
	arr := []any{}
	for dec.More() {
		v, err := decodeValue(dec, depth+1)
		if err != nil {
			return nil, err
		}
		arr = append(arr, v)
	}
	if _, err := dec.Token(); err != nil { // the closing ']'
		return nil, err
	}
	return arr, nil
}

// Encode renders the document with two-space indentation and a final newline,
// the layout the agents themselves write.
func Encode(o *Object) []byte { return EncodeIndent(o, "  ") }

// EncodeIndent renders the document with indent per level and a final newline.
func EncodeIndent(o *Object, indent string) []byte {
	var b bytes.Buffer
	encodeValue(&b, o, 0, indent)
	b.WriteByte('\n')
	return b.Bytes()
}

// DetectIndent returns the indentation one level of data uses: its first
// indented line's leading whitespace, or two spaces when nothing is indented.
func DetectIndent(data []byte) string {
	for _, line := range bytes.Split(data, []byte("\n"))[1:] {
		ws := line[:len(line)-len(bytes.TrimLeft(line, " \t"))]
		if len(ws) > 0 && len(ws) < len(line) {
			return string(ws)
		}
	}
	return "  "
}

func encodeValue(b *bytes.Buffer, v any, depth int, ind string) {
	switch t := v.(type) {
	case *Object:
		encodeObject(b, t, depth, ind)
	case []any:
		encodeArray(b, t, depth, ind)
	case string:
		encodeString(b, t)
	case json.Number:
		b.WriteString(t.String())
	case bool:
		if t {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case int:
		fmt.Fprintf(b, "%d", t)
	case nil:
		b.WriteString("null")
	default:
		panic(fmt.Sprintf("settings: cannot encode %T", v))
	}
}

func encodeObject(b *bytes.Buffer, o *Object, depth int, ind string) {
	if len(o.Members) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteByte('{')
	for i, m := range o.Members {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1, ind)
		encodeString(b, m.Key)
		b.WriteString(": ")
		encodeValue(b, m.Value, depth+1, ind)
	}
	newline(b, depth, ind)
	b.WriteByte('}')
}

func encodeArray(b *bytes.Buffer, a []any, depth int, ind string) {
	if len(a) == 0 {
		b.WriteString("[]")
		return
	}
	b.WriteByte('[')
	for i, v := range a {
		if i > 0 {
			b.WriteByte(',')
		}
		newline(b, depth+1, ind)
		encodeValue(b, v, depth+1, ind)
	}
	newline(b, depth, ind)
	b.WriteByte(']')
}

func newline(b *bytes.Buffer, depth int, ind string) {
	b.WriteByte('\n')
	for range depth {
		b.WriteString(ind)
	}
}

func encodeString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)       // a Go string always encodes
	b.Truncate(b.Len() - 1) // Encode appends a newline
}
