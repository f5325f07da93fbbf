package workflows

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// DeferredWorkFile is the ledger BMAD 6.12's skills append deferred findings
// to, in the implementation artifacts folder.
const DeferredWorkFile = "deferred-work.md"

// The keys of an entry of deferred-work.md. BMAD's build skills write the
// first three; a run adds location and severity from the spec; done is the
// one mark of a closed item (BMAD's format has none, and no skill reads it).
const (
	keySourceSpec = "source_spec"
	keySummary    = "summary"
	keyEvidence   = "evidence"
	keyLocation   = "location"
	keySeverity   = "severity"
	keyDone       = "done"
)

// entryKeys are the keys written, in order.
var entryKeys = []string{keySourceSpec, keySummary, keyEvidence, keyLocation, keySeverity, keyDone}

// The severities a finding can carry, lowest first; a finding without one
// ranks below low.
var severities = []string{"low", "medium", "high"}

// SeverityRank is where s ("medium", "high (unverified)") stands: 1 low,
// 2 medium, 3 high, 0 for none or a word BMAD does not use.
func SeverityRank(s string) int {
	word, _, _ := strings.Cut(strings.ToLower(strings.TrimSpace(s)), " ")
	for i, v := range severities {
		if word == v {
			return i + 1
		}
	}
	return 0
}

// ParseMinSeverity checks a --min-severity value: low, medium or high.
func ParseMinSeverity(s string) (int, error) {
	if r := SeverityRank(s); r > 0 && !strings.Contains(strings.TrimSpace(s), " ") {
		return r, nil
	}
	return 0, fmt.Errorf("severity %q: one of %s", s, strings.Join(severities, ", "))
}

// DeferredEntry is one item of deferred-work.md.
type DeferredEntry struct {
	// ID names the item for people and commands: "dw-" and eight hex
	// digits of its source, summary and location, so it stays the same
	// whatever is added, removed or reordered around it.
	ID string `json:"id"`
	// SourceSpec is the spec the finding came from, as written (backticks
	// removed); "none" or a heading's words for items without one.
	SourceSpec string `json:"sourceSpec"`
	Summary    string `json:"summary"`
	Evidence   string `json:"evidence,omitempty"`
	Location   string `json:"location,omitempty"`
	Severity   string `json:"severity,omitempty"`
	// Done is the item's done mark (a commit id, or any words a person
	// wrote); "" while the item is open.
	Done string `json:"done,omitempty"`
	// Line is where the item starts in the file (1-based).
	Line int `json:"line"`
	// end is the item's last line that is not blank; free tells a
	// free-form bullet from a build skill's entry.
	end  int
	free bool
}

// Open reports whether the item has no done mark.
func (e DeferredEntry) Open() bool { return e.Done == "" }

var (
	bulletRE = lazyre.New(`^[-*+] (.*)$`)
	fieldRE  = lazyre.New(`^([a-z][a-z0-9_]*):(?:[ \t]+(.*))?$`)
	checkRE  = lazyre.New(`^\[([ xX])\] (.*)$`)
)

// parseDeferredWork reads deferred-work.md. Items are its top-level list
// items outside fenced code and HTML comments: an item led by `source_spec:` is the build
// skills' entry, its other keys on lines indented two spaces, a value's
// further lines indented deeper; any other item (the code-review skill's
// bullets under "## Deferred from: …") is an item whose summary is its text,
// done when it is a checked box. root makes absolute source paths
// project-relative for the items' ids. What cannot be read is an error
// naming its line.
func parseDeferredWork(path, root, text string) ([]DeferredEntry, error) {
	p := &ledgerParse{path: path, root: root}
	for i, l := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		if err := p.line(i+1, l); err != nil {
			return nil, err
		}
	}
	bad := func(n int, what string) error {
		return fmt.Errorf("%w: %s line %d: %s that never closes", ErrDeferredWorkInvalid, path, n, what)
	}
	if p.fence != 0 {
		return nil, bad(p.fence, "a fenced block (```)")
	}
	if p.comment != 0 {
		return nil, bad(p.comment, "an HTML comment (<!--)")
	}
	if err := p.flush(); err != nil {
		return nil, err
	}
	return p.out, nil
}

// ledgerParse is deferred-work.md being read, line by line.
type ledgerParse struct {
	path, root string
	out        []DeferredEntry
	cur        *entryParse
	heading    string
	fence      int // the line of an open fence, 0 when none
	comment    int // the line of an open HTML comment, 0 when none
}

// flush ends the item being read.
func (p *ledgerParse) flush() error {
	if p.cur == nil {
		return nil
	}
	e, err := p.cur.entry(p.root)
	p.cur = nil
	if err != nil {
		return err
	}
	p.out = append(p.out, e)
	return nil
}

// line reads line n.
func (p *ledgerParse) line(n int, l string) error {
	t := strings.TrimSpace(l)
	indent := len(l) - len(strings.TrimLeft(l, " "))
	if p.cur != nil && p.cur.structured && indent >= 4 && p.fence == 0 && p.comment == 0 {
		return p.cur.more(n, indent, l) // a value's next line, whatever it holds (a fence too)
	}
	switch {
	case strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
		if p.fence != 0 {
			p.fence = 0
			return nil
		}
		p.fence = n
		return p.flush()
	case p.fence != 0:
		return nil
	case p.comment != 0 || strings.HasPrefix(t, "<!--"):
		if p.comment == 0 {
			p.comment = n
		}
		if strings.Contains(t, "-->") {
			p.comment = 0
		}
		return nil
	}
	switch {
	case t == "":
		if p.cur != nil {
			p.cur.blank()
		}
	case indent == 0:
		if err := p.flush(); err != nil {
			return err
		}
		if h, ok := strings.CutPrefix(t, "#"); ok {
			h = strings.TrimSpace(strings.TrimLeft(h, "#"))
			h, _ = strings.CutPrefix(h, "Deferred from:")
			p.heading = strings.TrimSpace(h)
		}
		if m := bulletRE().FindStringSubmatch(l); m != nil {
			p.cur = newEntryParse(p.path, n, m[1], p.heading)
			return p.cur.err
		}
	case p.cur != nil:
		return p.cur.more(n, indent, l)
	}
	return nil
}

// entryParse is one item being read.
type entryParse struct {
	path       string
	line, end  int
	structured bool
	fields     map[string]*strings.Builder
	last       string
	blanks     int
	free       strings.Builder
	freeDone   bool
	heading    string
	err        error
}

func newEntryParse(path string, line int, first, heading string) *entryParse {
	p := &entryParse{path: path, line: line, end: line, heading: heading, fields: map[string]*strings.Builder{}}
	if m := fieldRE().FindStringSubmatch(first); m != nil && m[1] == keySourceSpec {
		p.structured = true
		p.err = p.set(line, m[1], m[2])
		return p
	}
	if m := checkRE().FindStringSubmatch(first); m != nil {
		p.freeDone, first = m[1] != " ", m[2]
	}
	p.free.WriteString(strings.TrimSpace(first))
	return p
}

func (p *entryParse) set(n int, key, value string) error {
	if _, dup := p.fields[key]; dup {
		return fmt.Errorf("%w: %s line %d: a second %s: in the item of line %d", ErrDeferredWorkInvalid, p.path, n, key, p.line)
	}
	b := &strings.Builder{}
	b.WriteString(strings.TrimSpace(value))
	p.fields[key], p.last, p.blanks = b, key, 0
	return nil
}

func (p *entryParse) blank() { p.blanks++ }

// more reads one indented line of the item: a key two spaces in, else the
// last value's next line (a model that wraps a value at two spaces is read,
// not refused).
func (p *entryParse) more(n, indent int, l string) error {
	t := strings.TrimSpace(l)
	p.end = n
	if !p.structured {
		p.free.WriteString(" " + t)
		return nil
	}
	if m := fieldRE().FindStringSubmatch(t); m != nil && indent < 4 {
		return p.set(n, m[1], m[2])
	}
	b := p.fields[p.last]
	for ; p.blanks > 0; p.blanks-- {
		b.WriteString("\n")
	}
	if b.Len() > 0 {
		b.WriteString("\n")
	}
	b.WriteString(t)
	return nil
}

func (p *entryParse) entry(root string) (DeferredEntry, error) {
	e := DeferredEntry{Line: p.line, end: p.end, free: !p.structured}
	if !p.structured {
		e.SourceSpec, e.Summary = p.heading, p.free.String()
		if p.freeDone {
			e.Done = "x"
		}
		e.ID = deferredID(root, e.SourceSpec, e.Summary, "")
		return e, nil
	}
	get := func(k string) string {
		b := p.fields[k]
		if b == nil {
			return ""
		}
		v := strings.TrimSpace(b.String())
		// A model used to YAML may lead a value with a block indicator.
		if first, rest, ok := strings.Cut(v, "\n"); ok && slices.Contains([]string{"|", "|-", "|+", ">", ">-", ">+"}, first) {
			v = strings.TrimSpace(rest)
		}
		return v
	}
	e.SourceSpec = strings.Trim(get(keySourceSpec), "`")
	e.Summary, e.Evidence, e.Location = get(keySummary), get(keyEvidence), get(keyLocation)
	e.Severity, e.Done = get(keySeverity), get(keyDone)
	if e.Summary == "" {
		return e, fmt.Errorf("%w: %s line %d: the item has no summary", ErrDeferredWorkInvalid, p.path, p.line)
	}
	e.ID = deferredID(root, e.SourceSpec, e.Summary, e.Location)
	return e, nil
}

// deferredID is an item's id: the same finding from the same spec has the
// same one, however its path or its spaces are written.
func deferredID(root, source, summary, location string) string {
	h := sha256.Sum256([]byte(sourceKey(root, source) + "\x00" + strings.Join(strings.Fields(summary), " ") +
		"\x00" + strings.Join(strings.Fields(location), " ")))
	return "dw-" + hex.EncodeToString(h[:4])
}

// sourceKey is a source spec's path relative to root, slashed, when it is
// one; anything else as written.
func sourceKey(root, source string) string {
	s := strings.TrimSpace(strings.Trim(strings.TrimSpace(source), "`"))
	if filepath.IsAbs(s) && root != "" {
		if rel, err := filepath.Rel(root, s); err == nil && !escapes(rel) {
			s = rel
		}
	}
	return filepath.ToSlash(filepath.Clean(s))
}

// formatEntry is an item as BMAD's build skills write one, with a run's
// location and severity added when the finding has them: a list item led
// by `source_spec:`, each key two spaces in, a value's further lines four.
func formatEntry(e DeferredEntry) string {
	var b strings.Builder
	values := map[string]string{keySourceSpec: "`" + e.SourceSpec + "`", keySummary: e.Summary, keyEvidence: e.Evidence,
		keyLocation: e.Location, keySeverity: e.Severity, keyDone: e.Done}
	for i, k := range entryKeys {
		v := strings.TrimSpace(values[k])
		if v == "" && k != keySummary && k != keyEvidence {
			continue
		}
		if i == 0 {
			b.WriteString("- ")
		} else {
			b.WriteString("  ")
		}
		first, rest, _ := strings.Cut(v, "\n")
		b.WriteString(k + ":")
		if first = strings.TrimSpace(first); first != "" {
			b.WriteString(" " + first)
		}
		b.WriteString("\n")
		for _, l := range strings.Split(rest, "\n") {
			if rest == "" {
				break
			}
			if l = strings.TrimSpace(l); l != "" {
				b.WriteString("    " + l)
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}
