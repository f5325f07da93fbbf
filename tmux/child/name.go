package child

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/lazyre"
)

// NamePrefix starts every session name this tool creates.
const NamePrefix = "sa-"

const (
	maxSlug = 24
	maxPart = 24
)

var unsafeRun = lazyre.New(`[^A-Za-z0-9_]+`)

// Sanitize turns s into a name part of [A-Za-z0-9_-] only: every run of
// other characters becomes one "-" ("1.2" → "1-2"), cut to max bytes.
func Sanitize(s string, max int) string {
	out := strings.Trim(unsafeRun().ReplaceAllString(s, "-"), "-")
	if len(out) > max {
		out = strings.TrimRight(out[:max], "-")
	}
	return out
}

// ProjectSlug is the readable part of a project's session names.
func ProjectSlug(projectRoot string) string {
	s := strings.ToLower(Sanitize(filepath.Base(filepath.Clean(projectRoot)), maxSlug))
	if s == "" {
		return "project"
	}
	return s
}

// ProjectHash is four hex digits of the project root's SHA-256, so two
// projects with the same directory name get different prefixes.
func ProjectHash(projectRoot string) string {
	sum := sha256.Sum256([]byte(filepath.Clean(projectRoot)))
	return hex.EncodeToString(sum[:])[:4]
}

// ProjectPrefix is what every session name of one project starts with.
func ProjectPrefix(projectRoot string) string {
	return NamePrefix + ProjectSlug(projectRoot) + "-" + ProjectHash(projectRoot) + "-"
}

// NameParts are the fields a session name is built from.
type NameParts struct {
	ProjectRoot string
	Epic, Story string
	Step        string
	Cycle       int
}

// NewName builds sa-<slug>-<hash4>-e<epic>-s<story>-<step>[-r<cycle>]-<4 random>,
// reading the random suffix from rnd (crypto/rand when nil).
func NewName(p NameParts, rnd io.Reader) (string, error) {
	epic := p.Epic
	if epic == "" {
		epic = epicOf(p.Story)
	}
	story, step := Sanitize(p.Story, maxPart), Sanitize(p.Step, maxPart)
	if story == "" || step == "" {
		return "", fmt.Errorf("session name needs a story and a step (got %q, %q)", p.Story, p.Step)
	}
	e := Sanitize(epic, maxPart)
	if e == "" {
		e = "x"
	}
	suffix, err := randomSuffix(rnd)
	if err != nil {
		return "", err
	}
	name := ProjectPrefix(p.ProjectRoot) + "e" + e + "-s" + story + "-" + step
	if p.Cycle > 0 {
		name += "-r" + strconv.Itoa(p.Cycle)
	}
	return name + "-" + suffix, nil
}

// epicOf reads the epic from a story key such as "1.2" or "1-2-login".
func epicOf(story string) string {
	if i := strings.IndexAny(story, ".-"); i > 0 {
		return story[:i]
	}
	return ""
}

const suffixAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"

func randomSuffix(rnd io.Reader) (string, error) {
	if rnd == nil {
		rnd = rand.Reader
	}
	var b [4]byte
	if _, err := io.ReadFull(rnd, b[:]); err != nil {
		return "", fmt.Errorf("random session suffix: %w", err)
	}
	for i := range b {
		b[i] = suffixAlphabet[int(b[i])%len(suffixAlphabet)]
	}
	return string(b[:]), nil
}
