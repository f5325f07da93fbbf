package child

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
)

func TestSanitize(t *testing.T) {
	for in, want := range map[string]string{
		"1.2":                   "1-2",
		"1-2-login":             "1-2-login",
		"dev; rm -rf /":         "dev-rm-rf",
		"create story":          "create-story",
		"  ..x..  ":             "x",
		"ünïcode":               "n-code",
		"a_b":                   "a_b",
		"$(whoami)`id`":         "whoami-id",
		strings.Repeat("a", 40): strings.Repeat("a", 24),
	} {
		if got := Sanitize(in, 24); got != want {
			t.Errorf("Sanitize(%q) = %q, want %q", in, got, want)
		}
	}
}

var nameRE = regexp.MustCompile(`^sa-[a-z0-9_-]+-[0-9a-f]{4}-e[A-Za-z0-9_-]+-s[A-Za-z0-9_-]+-[A-Za-z0-9_-]+-[a-z0-9]{4}$`)

func TestNewNameFollowsTheScheme(t *testing.T) {
	rnd := bytes.NewReader([]byte{0, 1, 2, 3, 4, 5, 6, 7})
	name, err := NewName(NameParts{ProjectRoot: "/home/dev/My Shop!", Story: "1.2", Step: "dev"}, rnd)
	if err != nil {
		t.Fatal(err)
	}
	want := "sa-my-shop-" + ProjectHash("/home/dev/My Shop!") + "-e1-s1-2-dev-abcd"
	if name != want {
		t.Fatalf("got %q, want %q", name, want)
	}
	if !nameRE.MatchString(name) {
		t.Fatalf("%q does not match the scheme", name)
	}
	name, err = NewName(NameParts{ProjectRoot: "/p/x", Epic: "3", Story: "3.4", Step: "review", Cycle: 2}, rnd)
	if err != nil || !strings.HasPrefix(name, ProjectPrefix("/p/x")+"e3-s3-4-review-r2-") {
		t.Fatalf("cycle name %q %v", name, err)
	}
}

func TestNewNameNeedsStoryAndStep(t *testing.T) {
	if _, err := NewName(NameParts{ProjectRoot: "/p", Story: "..", Step: "dev"}, nil); err == nil {
		t.Fatal("empty story accepted")
	}
}

func TestProjectsWithTheSameNameGetDifferentPrefixes(t *testing.T) {
	a, b := ProjectPrefix("/home/a/shop"), ProjectPrefix("/home/b/shop")
	if a == b || !strings.HasPrefix(a, "sa-shop-") || !strings.HasPrefix(b, "sa-shop-") {
		t.Fatalf("%q %q", a, b)
	}
}
