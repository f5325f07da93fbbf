package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

var (
	mdLink      = regexp.MustCompile(`\]\(([^)\s]+)\)`)
	mdHeading   = regexp.MustCompile(`(?m)^#{1,6} +(.+?) *#*$`)
	fence       = regexp.MustCompile("(?ms)^```.*?^```")
	bareURL     = regexp.MustCompile(`https?://[^\s)>\]"'` + "`" + `]+`)
	deadPointer = regexp.MustCompile(`SPEC ?§|\b[Ii]ssues? \d+|\b[Ss]top \d+\b`)
)

// Every link in the README and docs/ stays inside a clone and resolves: a
// relative link names a file that exists (and a heading in it, when it has
// an anchor); there are no links out of the repository, no URLs but example
// and loopback ones, and no pointers (a spec section, an issue number) a
// reader of the repository cannot follow.
func TestDocsLinks(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append(files, filepath.Join(repo, "README.md"))
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		name, _ := filepath.Rel(repo, f)
		for _, u := range bareURL.FindAllString(text, -1) {
			if !exampleURL(u) {
				t.Errorf("%s: %s points outside the repository", name, u)
			}
		}
		for _, p := range deadPointer.FindAllString(text, -1) {
			t.Errorf("%s: %q points at something a reader of the repository cannot follow", name, p)
		}
		for _, m := range mdLink.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
			checkLink(t, repo, f, m[1], anchors)
		}
	}
}

func checkLink(t *testing.T, repo, from, link string, anchors map[string]map[string]bool) {
	t.Helper()
	name, _ := filepath.Rel(repo, from)
	if strings.Contains(link, "://") || strings.HasPrefix(link, "mailto:") {
		if !exampleURL(link) {
			t.Errorf("%s: link %s leaves the repository", name, link)
		}
		return
	}
	path, anchor, _ := strings.Cut(link, "#")
	target := from
	if path != "" {
		target = filepath.Join(filepath.Dir(from), path)
	}
	if rel, err := filepath.Rel(repo, target); err != nil || strings.HasPrefix(rel, "..") {
		t.Errorf("%s: link %s leaves the repository", name, link)
		return
	}
	info, err := os.Stat(target)
	if err != nil {
		t.Errorf("%s: link %s does not resolve", name, link)
		return
	}
	if anchor == "" {
		return
	}
	if info.IsDir() || !strings.HasSuffix(target, ".md") {
		t.Errorf("%s: link %s has an anchor into a file that has no headings", name, link)
		return
	}
	if anchors[target] == nil {
		data, err := os.ReadFile(target)
		if err != nil {
			t.Fatal(err)
		}
		anchors[target] = headingAnchors(string(data))
	}
	if !anchors[target][anchor] {
		t.Errorf("%s: link %s names no heading of %s", name, link, filepath.Base(target))
	}
}

// exampleURL is a URL that only stands for a value: a reserved example
// domain or the loopback address.
func exampleURL(u string) bool {
	host := u[strings.Index(u, "://")+3:]
	host, _, _ = strings.Cut(host, "/")
	host, _, _ = strings.Cut(host, ":")
	return strings.HasSuffix(host, ".invalid") || strings.HasSuffix(host, "example.com") ||
		host == "localhost" || host == "127.0.0.1"
}

// headingAnchors are the anchors of a markdown file's headings, as a
// markdown renderer makes them (GitHub's way: lower case, punctuation
// dropped, spaces to hyphens, a repeated one numbered).
func headingAnchors(text string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, m := range mdHeading.FindAllStringSubmatch(fence.ReplaceAllString(text, ""), -1) {
		a := headingAnchor(m[1])
		if n := seen[a]; n > 0 {
			out[a+"-"+strconv.Itoa(n)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

func headingAnchor(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// The README is the front page: at most 200 lines, the rest in the guides
// under docs/; its first commands are `make demo` and `make test`.
func TestTheReadmeStaysShort(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > 200 {
		t.Errorf("README.md has %d lines; move what is past the front page into docs/ (200 at most)", len(lines))
	}
	var cmds []string
	for _, l := range lines {
		if strings.HasPrefix(l, "make ") && len(cmds) < 2 {
			cmds = append(cmds, strings.Fields(l)[1])
		}
	}
	if strings.Join(cmds, " ") != "demo test" {
		t.Errorf("the README's first commands are %q, want make demo and make test", cmds)
	}
}
