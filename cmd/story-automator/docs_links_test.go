package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// Every relative link in the README and docs/ resolves inside a clone: the
// reference lives in the repository, not beside it.
func TestRelativeDocLinksResolveInTheRepository(t *testing.T) {
	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(repo, "docs", "*.md"))
	files = append(files, filepath.Join(repo, "README.md"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			link := m[1]
			if strings.Contains(link, "://") || strings.HasPrefix(link, "#") || strings.HasPrefix(link, "mailto:") {
				continue
			}
			link, _, _ = strings.Cut(link, "#")
			target := filepath.Join(filepath.Dir(f), link)
			if rel, err := filepath.Rel(repo, target); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s: link %s leaves the repository", filepath.Base(f), m[1])
				continue
			}
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s: link %s does not resolve", filepath.Base(f), m[1])
			}
		}
	}
}
