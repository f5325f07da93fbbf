package agent

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// agentNameHomes may name an agent: the profile table itself, and the
// simulators of the agents and of their vendors' APIs.
var agentNameHomes = []string{
	"agent/profile.go",
	"agent/session.go", // which variables each CLI's session sets
	"agent/dialogs.go", // the table's dialogs: what each CLI shows
	"agent/sandbox.go", // the table's sandboxes: how each CLI confines its tools
	"agentsim/",
	"modelsim/",
	"internal/testing/chaos/", // kills runs of the simulated agent, and only of it
}

// notAgentName marks a literal that only looks like an agent's name (a
// record's field value, a model), on the literal's line.
const notAgentName = "not an agent name"

// Issue 15: adding an agent is adding a profile table entry, so no package
// outside the table names one.
func TestOnlyTheProfileTableNamesAnAgent(t *testing.T) {
	root, err := filepath.Abs(filepath.Join(".."))
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, n := range AgentNames() {
		if n != AgentCustom { // "custom" is an ordinary word too
			names[n] = true
		}
	}
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "node_modules" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(rel, ".go") || strings.HasSuffix(rel, "_test.go") || matchesAny(rel, agentNameHomes) {
			return nil
		}
		for _, hit := range agentLiterals(t, path, names) {
			t.Errorf("%s:%s names an agent outside the profile table (agent/profile.go)", rel, hit)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// matchesAny reports whether rel is one of entries or lies in one of them
// (an entry ending in "/" is a folder).
func matchesAny(rel string, entries []string) bool {
	for _, p := range entries {
		if rel == p || (strings.HasSuffix(p, "/") && strings.HasPrefix(rel, p)) {
			return true
		}
	}
	return false
}

// agentLiterals are the positions ("line: literal") of string literals in
// the Go file at path that are an agent's name.
func agentLiterals(t *testing.T, path string, names map[string]bool) []string {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	excused := map[int]bool{}
	for _, cg := range f.Comments {
		if strings.Contains(cg.Text(), notAgentName) {
			excused[fset.Position(cg.Pos()).Line] = true
		}
	}
	var hits []string
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.BasicLit:
			s, err := strconv.Unquote(n.Value)
			line := fset.Position(n.Pos()).Line
			if n.Kind == token.STRING && err == nil && namesAgent(s, names) && !excused[line] {
				hits = append(hits, strconv.Itoa(line)+": "+n.Value)
			}
		case *ast.SelectorExpr:
			// agent.AgentClaude and the like name one agent as surely as "claude".
			if a, ok := strings.CutPrefix(n.Sel.Name, "Agent"); ok && names[strings.ToLower(a)] {
				hits = append(hits, strconv.Itoa(fset.Position(n.Pos()).Line)+": "+n.Sel.Name)
			}
		}
		return true
	})
	return hits
}

// namesAgent says whether a literal is an agent's name or one of its
// variables ("CODEX_HOME": the agent's name in capitals, then "_").
func namesAgent(s string, names map[string]bool) bool {
	if names[strings.ToLower(s)] {
		return true
	}
	for n := range names {
		if strings.HasPrefix(s, strings.ToUpper(n)+"_") {
			return true
		}
	}
	return false
}
