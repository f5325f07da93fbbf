package lazyre

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// The binary starts a process on every stop of every agent session (the Stop
// hook), and every package of the module is linked into it. So no package may
// compile a regular expression when it initialises: package-level patterns go
// through New, which compiles on first use.
func TestNoRegexpCompiledAtStartAnywhereInTheModule(t *testing.T) {
	root := filepath.Join("..", "..")
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") || strings.Contains(path, "internal/lazyre") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		checked++
		for _, decl := range f.Decls {
			if !startUpCode(decl) {
				continue
			}
			ast.Inspect(decl, func(n ast.Node) bool {
				if name, ok := regexpCompileCall(n); ok {
					t.Errorf("%s: regexp.%s runs at start-up; use lazyre.New", fset.Position(n.Pos()), name)
				}
				return true
			})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 50 {
		t.Fatalf("checked only %d files: wrong directory?", checked)
	}
}

// startUpCode reports whether decl runs when its package initialises: a
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
