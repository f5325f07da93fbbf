package testbin

import (
	"debug/elf"
	"os"
	"strings"
	"testing"
)

// The tests build the binary as the Makefile does, so what they measure is
// what users run.
func TestBuildFlagsAreTheMakefiles(t *testing.T) {
	raw, err := os.ReadFile("../../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	vars := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, ":="); ok && !strings.ContainsAny(k, "\t#") {
			vars[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	if vars["BUILD_ENV"] != "CGO_ENABLED=0" {
		t.Errorf("Makefile BUILD_ENV = %q; testbin builds with CGO_ENABLED=0", vars["BUILD_ENV"])
	}
	want := strings.ReplaceAll(vars["BUILD_FLAGS"], "$(TAGS)", vars["TAGS"])
	got := strings.Join([]string{"-tags", Tags, "-trimpath", "-ldflags", "'-s -w'"}, " ")
	if want != got || strings.Join(BuildFlags[:4], " ") != "-tags "+Tags+" -trimpath -ldflags" || BuildFlags[4] != "-s -w" {
		t.Errorf("Makefile BUILD_FLAGS = %q, testbin builds with %q", want, BuildFlags)
	}
}

// The binaries are static: no dynamic loader runs at every start.
func TestTheBinariesAreStatic(t *testing.T) {
	for _, bin := range []string{Path(t), HookPath(t)} {
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Errorf("%s asks for a dynamic loader (PT_INTERP): built with cgo", bin)
			}
		}
		f.Close()
	}
}

func TestMain(m *testing.M) {
	code := m.Run()
	Cleanup()
	os.Exit(code)
}
