package workflows

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

const storyWithList = `# Story 1.2: Login

Status: review

## Dev Agent Record

### File List

- ` + "`src/login.go`" + ` (new)
- ` + "`src/login_test.go`" + `

Notes: the agent kept this line.

### Change Log

- 2026-11-25: done
`

func TestAddToFileListAddsWhatIsMissingInTheListsStyleAndKeepsTheRest(t *testing.T) {
	out, added := addToFileList(storyWithList, []string{"src/login.go", "src/session.go", "./src/util.go", "src/session.go"})
	if !reflect.DeepEqual(added, []string{"src/session.go", "src/util.go"}) {
		t.Fatalf("added %v", added)
	}
	want := `# Story 1.2: Login

Status: review

## Dev Agent Record

### File List

- ` + "`src/login.go`" + ` (new)
- ` + "`src/login_test.go`" + `
- ` + "`src/session.go`" + `
- ` + "`src/util.go`" + `

Notes: the agent kept this line.

### Change Log

- 2026-11-25: done
`
	if out != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	if again, added := addToFileList(out, []string{"src/session.go"}); len(added) != 0 || again != out {
		t.Fatalf("a second pass changed the file: %v", added)
	}
}

func TestAddToFileListWithoutASectionOrWithAnEmptyOne(t *testing.T) {
	out, _ := addToFileList("# Story 1.1: X\n\nStatus: done\n", []string{"a.go"})
	if out != "# Story 1.1: X\n\nStatus: done\n\n### File List\n\n- a.go\n" {
		t.Fatalf("no section: %q", out)
	}
	out, _ = addToFileList("### File List\n\n### Change Log\n", []string{"a.go", "b.go"})
	if out != "### File List\n\n- a.go\n- b.go\n\n### Change Log\n" {
		t.Fatalf("empty section: %q", out)
	}
	out, _ = addToFileList("### File List\n_(to be filled in)_\n", []string{"a.go"})
	if out != "### File List\n\n- a.go\n_(to be filled in)_\n" {
		t.Fatalf("placeholder: %q", out)
	}
}

func TestAddToFileListWritesTheFileOnlyWhenSomethingIsMissing(t *testing.T) {
	f := filepath.Join(t.TempDir(), "1-2-login.md")
	if err := os.WriteFile(f, []byte(storyWithList), 0o640); err != nil {
		t.Fatal(err)
	}
	if added, err := AddToFileList(f, []string{"src/login.go"}); err != nil || added != nil {
		t.Fatalf("%v %v", added, err)
	}
	if added, err := AddToFileList(f, []string{"src/new.go"}); err != nil || len(added) != 1 {
		t.Fatalf("%v %v", added, err)
	}
	fi, _ := os.Stat(f)
	if fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
}
