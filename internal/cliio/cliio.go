// Package cliio is the command line's input and output: the injected streams,
// failures (coded errors) and results printed as JSON or, on a person's
// terminal, as text.
package cliio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode"

	"golang.org/x/term"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/textline"
)

// Streams is everything a command touches outside itself, injected so tests run
// commands in-process with captured output, a fixed environment and a fake clock.
type Streams struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	Getenv  func(string) string
	Environ func() []string
	Now     func() time.Time
	// Getwd returns the working directory (the default project root).
	Getwd func() (string, error)
	// Exe is the path of this binary, for hooks and child commands.
	Exe func() (string, error)
	// OutTerminal reports whether Out is a terminal (and its fd); nil = never.
	// A terminal gets text, anything else JSON (see HumanStreams).
	OutTerminal func() (int, bool)
}

// SystemStreams binds Streams to the real process.
func SystemStreams() *Streams {
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Now: time.Now,
		Getwd: os.Getwd, Exe: os.Executable, OutTerminal: StdoutTerminal,
	}
}

// ExitStatus is returned by commands that printed their own output and only
// need the process to end with a particular code.
type ExitStatus int

func (e ExitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// WriteJSON prints one JSON object on its own line — or, when w is a person's
// terminal (see TerminalOut), the same value as text. Every command's result
// goes through here, so every command gets both forms.
func WriteJSON(w io.Writer, v any) error {
	if t, ok := w.(*TerminalOut); ok {
		return t.render(v)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// OKJSON prints {"ok":true, ...fields}.
func OKJSON(w io.Writer, fields map[string]any) error {
	return WriteJSON(w, OK(fields))
}

// OK is fields with "ok": true, a success's JSON.
func OK(fields map[string]any) map[string]any {
	out := map[string]any{"ok": true}
	for k, v := range fields {
		out[k] = v
	}
	return out
}

// Emit prints a result: JSON for machines, or human's own rendering of it on a
// terminal. Commands with a better text form than the generic one use this.
func Emit(w io.Writer, v any, human func(io.Writer)) error {
	if t, ok := w.(*TerminalOut); ok && human != nil {
		human(t.Writer)
		return nil
	}
	return WriteJSON(w, v)
}

// FailureFields renders a failure as {"ok":false,"error":code,"message":...}.
func FailureFields(f *coded.Error) map[string]any {
	out := map[string]any{"ok": false, "error": f.Code, "message": f.Message}
	if f.Action != "" {
		out["action"] = f.Action
	}
	for k, v := range f.Fields {
		out[k] = v
	}
	return out
}

// FailureJSON prints a failure's JSON on w (always JSON: scripts read it).
func FailureJSON(w io.Writer, f *coded.Error) {
	if t, ok := w.(*TerminalOut); ok {
		w = t.Writer
	}
	_ = WriteJSON(w, FailureFields(f))
}

// TerminalOut is stdout when a person reads it: a terminal, and no --json.
// WriteJSON renders results on it as text instead of JSON.
type TerminalOut struct {
	io.Writer
	fd int
}

// HumanStreams returns s with Out marked as a person's terminal when stdout is
// one and args do not ask for JSON; otherwise s itself (JSON, as scripts expect).
func HumanStreams(s *Streams, args []string) *Streams {
	if s.OutTerminal == nil || WantsJSON(args) {
		return s
	}
	fd, ok := s.OutTerminal()
	if !ok {
		return s
	}
	h := *s
	h.Out = &TerminalOut{Writer: s.Out, fd: fd}
	return &h
}

// StdoutTerminal reports whether the process's stdout is a terminal, and its fd.
func StdoutTerminal() (int, bool) {
	fd := int(os.Stdout.Fd())
	return fd, term.IsTerminal(fd)
}

// WantsJSON reports whether the command line asks for JSON (--json anywhere
// before a "--"); every command accepts the flag.
func WantsJSON(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if name != "json" || !strings.HasPrefix(a, "-") {
			continue
		}
		if !hasVal {
			return true
		}
		if on, err := strconv.ParseBool(val); err == nil && on {
			return true
		}
	}
	return false
}

// IsTerminal reports whether w is a person's terminal.
func IsTerminal(w io.Writer) bool {
	switch t := w.(type) {
	case *TerminalOut:
		return true
	case *os.File:
		return term.IsTerminal(int(t.Fd()))
	}
	return false
}

// TerminalWidth is the usable width of w's terminal, 0 when unknown.
func TerminalWidth(w io.Writer) int {
	fd := -1
	switch t := w.(type) {
	case *TerminalOut:
		fd = t.fd
	case *os.File:
		fd = int(t.Fd())
	}
	if fd < 0 {
		return 0
	}
	if cols, _, err := term.GetSize(fd); err == nil && cols > 10 {
		return cols - 1
	}
	return 0
}

// PrintFailure tells a person what went wrong on stderr: one line with the
// code, then the action when there is one.
func PrintFailure(w io.Writer, f *coded.Error) {
	fmt.Fprintf(w, "story-automator: %s (%s)\n", f.Message, f.Code)
	switch {
	case f.Action != "":
		fmt.Fprintf(w, "  → %s\n", f.Action)
	case f.Exit == coded.ExitUsage:
		fmt.Fprintln(w, "  → see story-automator --help")
	}
}

// render prints any JSON-shaped value as text: "Key: value" lines, nested
// objects indented, lists of objects as tables. Key order follows the JSON.
func (t *TerminalOut) render(v any) error {
	data, err := json.Marshal(v)
	if err != nil {
		return err
	}
	val, err := decodeOrdered(json.NewDecoder(bytes.NewReader(data)))
	if err != nil {
		return err
	}
	obj, ok := val.(orderedObject)
	if !ok {
		fmt.Fprintln(t.Writer, scalarText(val))
		return nil
	}
	obj = obj.without("ok")
	if len(obj) == 0 {
		fmt.Fprintln(t.Writer, "Done.")
		return nil
	}
	writeObject(t.Writer, obj, "")
	return nil
}

type field struct {
	key string
	val any
}

// orderedObject is a JSON object with its keys in document order.
type orderedObject []field

func (o orderedObject) without(key string) orderedObject {
	out := o[:0:0]
	for _, f := range o {
		if f.key != key {
			out = append(out, f)
		}
	}
	return out
}

func decodeOrdered(d *json.Decoder) (any, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok {
	case json.Delim('{'):
		var o orderedObject
		for d.More() {
			k, err := d.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			o = append(o, field{k.(string), v})
		}
		_, err := d.Token()
		return o, err
	case json.Delim('['):
		var a []any
		for d.More() {
			v, err := decodeOrdered(d)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := d.Token()
		return a, err
	}
	return tok, nil
}

func writeObject(w io.Writer, o orderedObject, indent string) {
	width := 0
	for _, f := range o {
		width = max(width, textline.Width(label(f.key)))
	}
	for _, f := range o {
		name := label(f.key) + ":"
		switch v := f.val.(type) {
		case orderedObject:
			if len(v) == 0 {
				fmt.Fprintf(w, "%s%s none\n", indent, name)
				continue
			}
			fmt.Fprintf(w, "%s%s\n", indent, name)
			writeObject(w, v, indent+"  ")
		case []any:
			if len(v) == 0 {
				fmt.Fprintf(w, "%s%s none\n", indent, name)
				continue
			}
			fmt.Fprintf(w, "%s%s\n", indent, name)
			writeList(w, v, indent+"  ")
		default:
			fmt.Fprintf(w, "%s%s %s\n", indent, textline.PadRight(name, width+1), scalarText(v))
		}
	}
}

// writeList prints a list: a table when every item is a flat object, else one item a line.
func writeList(w io.Writer, items []any, indent string) {
	if cols, ok := tableColumns(items); ok {
		writeTable(w, items, cols, indent)
		return
	}
	for _, it := range items {
		if o, ok := it.(orderedObject); ok {
			fmt.Fprintf(w, "%s-\n", indent)
			writeObject(w, o, indent+"  ")
			continue
		}
		fmt.Fprintf(w, "%s- %s\n", indent, scalarText(it))
	}
}

func tableColumns(items []any) ([]string, bool) {
	seen := map[string]int{}
	var cols []string
	for _, it := range items {
		o, ok := it.(orderedObject)
		if !ok {
			return nil, false
		}
		for _, f := range o {
			switch f.val.(type) {
			case orderedObject, []any:
				return nil, false
			}
			if _, ok := seen[f.key]; !ok {
				seen[f.key] = len(cols)
				cols = append(cols, f.key)
			}
		}
	}
	return cols, len(cols) > 0
}

func writeTable(w io.Writer, items []any, cols []string, indent string) {
	rows := [][]string{make([]string, len(cols))}
	for i, c := range cols {
		rows[0][i] = strings.ToUpper(label(c))
	}
	for _, it := range items {
		row := make([]string, len(cols))
		for _, f := range it.(orderedObject) {
			row[indexOf(cols, f.key)] = scalarText(f.val)
		}
		rows = append(rows, row)
	}
	widths := make([]int, len(cols))
	for _, r := range rows {
		for i, cell := range r {
			widths[i] = max(widths[i], textline.Width(cell))
		}
	}
	for _, r := range rows {
		var b strings.Builder
		b.WriteString(indent)
		for i, cell := range r {
			if i == len(r)-1 {
				b.WriteString(cell)
				break
			}
			b.WriteString(textline.PadRight(cell, widths[i]+2))
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
}

func indexOf(list []string, s string) int {
	for j, v := range list {
		if v == s {
			return j
		}
	}
	return 0
}

func scalarText(v any) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case bool:
		if x {
			return "yes"
		}
		return "no"
	case string:
		if x == "" {
			return `""`
		}
		return x
	case json.Number:
		return x.String()
	case float64:
		return fmt.Sprint(x)
	}
	return fmt.Sprint(v)
}

// label turns a camelCase JSON key into words: "storiesRemaining" → "Stories remaining".
func label(key string) string {
	var b strings.Builder
	for i, r := range key {
		if i > 0 && unicode.IsUpper(r) {
			b.WriteByte(' ')
			r = unicode.ToLower(r)
		}
		if i == 0 {
			r = unicode.ToUpper(r)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RawOut is the writer under w: the real stdout, for handing to a child
// process (a wrapped writer would make exec give the child a pipe instead of
// the terminal).
func RawOut(w io.Writer) io.Writer {
	if t, ok := w.(*TerminalOut); ok {
		return t.Writer
	}
	return w
}

// ExitCode prints err for the user (text on a terminal, JSON otherwise) and
// returns the process exit status. This is the one place an error becomes a
// code and a status: a *coded.Error anywhere in err's chain keeps its own,
// any other error is internal_error (exit 1).
func ExitCode(s *Streams, err error) int {
	if err == nil {
		return 0
	}
	var st ExitStatus
	if errors.As(err, &st) {
		return int(st)
	}
	var f *coded.Error
	if !errors.As(err, &f) {
		f = coded.Fail("internal_error", "%v", err)
	}
	if _, human := s.Out.(*TerminalOut); human {
		PrintFailure(s.Err, f)
	} else {
		if f.Exit == coded.ExitUsage {
			fmt.Fprintf(s.Err, "story-automator: %s\n", f.Message)
		}
		FailureJSON(s.Out, f)
	}
	if f.Exit == 0 {
		return coded.ExitFailed
	}
	return f.Exit
}
