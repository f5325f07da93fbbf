package stophook

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseFixPlan(t *testing.T) {
	plan := "# Fix plan\n\n" +
		"- [x] reproduce the crash\n" +
		"* [X] add a failing test\n" +
		"  - [ ] fix the parser (attempts: 1/3)\n" +
		"1. [ ] migrate the schema (Attempts: 3/3)\n" +
		"2) [ ] update the docs (attempts: 4/3)\n" +
		"- [ ] no attempts note\n" +
		"- [ ] unlimited (attempts: 9/0)\n" +
		"```\n- [ ] inside a fence is not a step\n```\n" +
		"- not a checkbox\n" +
		"-[ ] no space after the bullet\n"
	got := ParseFixPlan(plan)
	want := FixPlanStatus{Steps: 7, Done: 2, Exhausted: 2, Open: 3}
	if got != want {
		t.Fatalf("ParseFixPlan = %+v, want %+v", got, want)
	}
	if got.Finished() {
		t.Error("a plan with open steps is not finished")
	}
}

func TestFixPlanFinished(t *testing.T) {
	cases := map[string]bool{
		"":                                   false, // no steps: nothing says it is done
		"just prose":                         false,
		"- [x] a\r\n- [x] b\r\n":             true,
		"- [x] a\n- [ ] b (attempts: 2/2)\n": true,
		"- [ ] b (attempts: 2/2)\n":          true,
		"- [x] a\n- [ ] b (attempts: 1/2)\n": false,
	}
	for plan, want := range cases {
		if got := ParseFixPlan(plan).Finished(); got != want {
			t.Errorf("%q: Finished = %v, want %v", plan, got, want)
		}
	}
}

// The Stop hook starts a process on every stop of every session, so no
// regular expression of the loop code may compile at start-up: package-level
// patterns go through internal/lazyre, which compiles on first use.
func TestNoRegexpCompiledAtStart(t *testing.T) {
	var files []string
	for _, glob := range []string{"*.go", "../marker/*.go", "../cmd/story-automator/loop_*.go"} {
		m, err := filepath.Glob(glob)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, m...)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, decl := range f.Decls {
			if startUpCode(decl) {
				ast.Inspect(decl, func(n ast.Node) bool {
					if name, ok := regexpCompileCall(n); ok {
						t.Errorf("%s: regexp.%s runs at start-up or by hand; use lazyre.New", fset.Position(n.Pos()), name)
					}
					return true
				})
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked only %d files: wrong directory?", checked)
	}
}

// startUpCode reports whether decl runs when the package initialises: a
// package-level var or an init function.
func startUpCode(decl ast.Decl) bool {
	switch d := decl.(type) {
	case *ast.GenDecl:
		return d.Tok == token.VAR
	case *ast.FuncDecl:
		return d.Recv == nil && d.Name.Name == "init"
	}
	return false
}

func regexpCompileCall(n ast.Node) (string, bool) {
	call, ok := n.(*ast.CallExpr)
	if !ok {
		return "", false
	}
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok {
		return "", false
	}
	pkg, ok := sel.X.(*ast.Ident)
	return sel.Sel.Name, ok && pkg.Name == "regexp" && strings.Contains(sel.Sel.Name, "Compile")
}
