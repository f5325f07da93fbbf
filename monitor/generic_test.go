package monitor

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseVerifySpecContractErrors(t *testing.T) {
	for _, spec := range []string{"bogus", "cmd:", "cmd:   ", "glob:", "glob:[", "glob:x=-1", "file:x", "none:x"} {
		if _, err := ParseVerifySpec(spec, "/tmp", 0); !errors.Is(err, ErrContract) {
			t.Errorf("%q: %v, want a contract error", spec, err)
		}
	}
}

func TestNoneVerifierAlwaysPasses(t *testing.T) {
	for _, spec := range []string{"", "none"} {
		v, err := ParseVerifySpec(spec, "/tmp", 0)
		if err != nil || v.Name() != "none" || !v.Verify(context.Background()).Verified {
			t.Fatalf("%q: %v", spec, err)
		}
	}
}

func TestCommandVerifierRunsInTheProjectWithABound(t *testing.T) {
	root := t.TempDir()
	v, err := ParseVerifySpec("cmd:test -f marker.txt && echo yes", root, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Verify(context.Background()); got.Verified || !strings.Contains(got.Detail, "exit status 1") {
		t.Fatalf("before: %+v", got)
	}
	if err := os.WriteFile(filepath.Join(root, "marker.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if got := v.Verify(context.Background()); !got.Verified {
		t.Fatalf("after: %+v", got)
	}
	slow, _ := ParseVerifySpec("cmd:sleep 30", root, 200*time.Millisecond)
	if got := slow.Verify(context.Background()); got.Verified || !strings.Contains(got.Detail, "no answer within") {
		t.Fatalf("slow: %+v", got)
	}
}

func TestGlobVerifierCounts(t *testing.T) {
	root := t.TempDir()
	for _, n := range []string{"a.md", "b.md"} {
		if err := os.WriteFile(filepath.Join(root, n), nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	for spec, want := range map[string]bool{
		"glob:*.md": true, "glob:*.md=2": true, "glob:*.md=1": false, "glob:*.txt": false, "glob:*.txt=0": true,
	} {
		v, err := ParseVerifySpec(spec, root, 0)
		if err != nil {
			t.Fatal(err)
		}
		if got := v.Verify(context.Background()); got.Verified != want {
			t.Errorf("%s: %+v, want %v", spec, got, want)
		}
		if v.Name() != spec && !(spec == "glob:*.md" && v.Name() == "glob:*.md") {
			t.Errorf("name %q for %q", v.Name(), spec)
		}
	}
}

func TestContractFailureVerifier(t *testing.T) {
	v := ContractFailure("workflow:dev", errors.New("no such story"))
	got := v.Verify(context.Background())
	if got.Verified || got.ContractErr == nil || v.Name() != "workflow:dev" {
		t.Fatalf("%+v", got)
	}
}
