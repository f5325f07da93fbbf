package workflows

import (
	"fmt"
	"strconv"
	"strings"
	"unicode"
)

// StoryKey identifies a story by its epic and its number within that epic,
// whatever form the user wrote it in (1.2, 1-2, 1-2-user-login, auth.3,
// auth-3-slug). Num 0 names the epic itself, for epic-level steps (retro).
type StoryKey struct {
	Epic string
	Num  int
}

// String is the canonical hyphen form, e.g. "1-2" (or "1" for an epic key).
func (k StoryKey) String() string {
	if k.Num == 0 {
		return k.Epic
	}
	return k.Epic + "-" + strconv.Itoa(k.Num)
}

// Dotted is the form used in epics and by people, e.g. "1.2".
func (k StoryKey) Dotted() string {
	if k.Num == 0 {
		return k.Epic
	}
	return k.Epic + "." + strconv.Itoa(k.Num)
}

// IsEpic reports whether the key names a whole epic rather than one story.
func (k StoryKey) IsEpic() bool { return k.Num == 0 }

// Compare orders keys by epic (numeric epics numerically and first, then
// named epics alphabetically) and then by story number.
func (k StoryKey) Compare(o StoryKey) int {
	if c := compareEpics(k.Epic, o.Epic); c != 0 {
		return c
	}
	return k.Num - o.Num
}

func compareEpics(a, b string) int {
	an, aerr := strconv.Atoi(a)
	bn, berr := strconv.Atoi(b)
	switch {
	case aerr == nil && berr == nil:
		return an - bn
	case aerr == nil:
		return -1
	case berr == nil:
		return 1
	}
	return strings.Compare(a, b)
}

// ParseStoryKey reads a story key in any of the forms users write: "1.2",
// "1-2", "1-2-user-login", "1-2-user-login.md", "Story 1.2", "auth.3",
// "auth-3-slug". Epic ids are lower-cased and numeric ones lose leading zeros.
func ParseStoryKey(s string) (StoryKey, error) {
	k, _, err := splitStoryKey(s)
	return k, err
}

// splitStoryKey is ParseStoryKey that also returns the slug after the number
// ("user-login" for "1-2-user-login"), or "".
func splitStoryKey(s string) (StoryKey, string, error) {
	in := s
	s = strings.ToLower(strings.TrimSpace(s))
	s = strings.TrimSuffix(s, ".md")
	for _, p := range []string{"story ", "story-", "story"} {
		if rest, ok := strings.CutPrefix(s, p); ok && rest != "" && isDigit(rest[0]) {
			s = rest
			break
		}
	}
	epic, num, slug, ok := splitHyphenated(s)
	if !ok {
		i := strings.LastIndexByte(s, '.')
		if i < 0 {
			return StoryKey{}, "", fmt.Errorf("%w %q: want EPIC.N, EPIC-N or EPIC-N-slug", ErrInvalidKey, in)
		}
		epic, num = s[:i], s[i+1:]
	}
	epic, err := normalEpic(epic)
	if err != nil {
		return StoryKey{}, "", fmt.Errorf("%w %q: %v", ErrInvalidKey, in, err)
	}
	n, err := strconv.Atoi(num)
	if err != nil || n <= 0 || !allDigits(num) {
		return StoryKey{}, "", fmt.Errorf("%w %q: story number %q is not a positive integer", ErrInvalidKey, in, num)
	}
	return StoryKey{Epic: epic, Num: n}, slug, nil
}

// splitHyphenated splits "1-2-user-login" into epic, number and slug: the
// number is the first all-digit segment after the first one, so named epics
// may hold hyphens ("user-mgmt-3-slug").
func splitHyphenated(s string) (epic, num, slug string, ok bool) {
	segs := strings.Split(s, "-")
	for i := 1; i < len(segs); i++ {
		if allDigits(segs[i]) {
			return strings.Join(segs[:i], "-"), segs[i], strings.Join(segs[i+1:], "-"), true
		}
	}
	return "", "", "", false
}

// ParseEpicID reads an epic id as users write it: "1", "01", "epic-1",
// "Epic 1", "auth".
func ParseEpicID(s string) (string, error) {
	e := strings.ToLower(strings.TrimSpace(s))
	for _, p := range []string{"epic-", "epic "} {
		if rest, ok := strings.CutPrefix(e, p); ok {
			e = strings.TrimSpace(rest)
			break
		}
	}
	id, err := normalEpic(e)
	if err != nil {
		return "", fmt.Errorf("%w: epic %q: %v", ErrInvalidKey, s, err)
	}
	return id, nil
}

// normalEpic validates a lower-cased epic id and strips a numeric one's leading zeros.
func normalEpic(e string) (string, error) {
	if e == "" {
		return "", fmt.Errorf("empty epic")
	}
	if e == "epic" {
		return "", fmt.Errorf("an epic entry, not a story")
	}
	for i, r := range e {
		ok := r == '_' || (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || (r == '-' && i > 0 && i < len(e)-1)
		if !ok {
			return "", fmt.Errorf("epic id %q may hold only letters, digits, '_' and inner '-'", e)
		}
	}
	if allDigits(e) {
		n, err := strconv.Atoi(e)
		if err != nil {
			return "", fmt.Errorf("epic number %q is too large", e)
		}
		return strconv.Itoa(n), nil
	}
	return e, nil
}

// Slugify turns a story title into the slug BMAD puts in file names and
// sprint-status keys: "User Login (OAuth)" → "user-login-oauth".
func Slugify(title string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(title) {
		switch {
		case r == '\'' || r == '’':
			continue
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			dash = false
			b.WriteRune(r)
		default:
			dash = true
		}
	}
	return b.String()
}

func allDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }
