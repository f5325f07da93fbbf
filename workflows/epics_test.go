package workflows

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// describeEpics renders epics compactly for comparisons.
func describeEpics(epics []Epic) string {
	var b strings.Builder
	for _, e := range epics {
		fmt.Fprintf(&b, "E%s %q:", e.ID, e.Title)
		for _, s := range e.Stories {
			fmt.Fprintf(&b, " %s %q", s.Key.Dotted(), s.Title)
			if len(s.DependsOn) > 0 {
				var deps []string
				for _, d := range s.DependsOn {
					deps = append(deps, d.Dotted())
				}
				fmt.Fprintf(&b, "<-[%s]", strings.Join(deps, ","))
			}
		}
		b.WriteString("\n")
	}
	return b.String()
}

func TestEpicsFromPlanningArtifacts(t *testing.T) {
	p := openProject(t)
	epics, err := p.Epics()
	if err != nil {
		t.Fatal(err)
	}
	want := `E1 "Accounts": 1.1 "User Registration" 1.2 "User Login"<-[1.1] 1.3 "Password Reset"<-[1.1,1.2]
E2 "Catalogue": 2.1 "Product List" 2.2 "Product Search"<-[2.1]
`
	if got := describeEpics(epics); got != want {
		t.Errorf("epics:\n%s\nwant:\n%s", got, want)
	}
	s := epics[0].Stories[1]
	if !strings.HasPrefix(s.Text, "### Story 1.2: User Login\n") || !strings.Contains(s.Text, "they are logged in") || strings.Contains(s.Text, "Story 1.3") {
		t.Errorf("story 1.2 section:\n%s", s.Text)
	}
	if filepath.Base(epics[0].File) != "epics.md" {
		t.Errorf("epic file = %s", epics[0].File)
	}
}

func TestEpicsFromShardedFilesInBothDirectories(t *testing.T) {
	p := openProject(t)
	for _, name := range []string{"epic-3-payments.md", "epic-auth.md"} {
		data, err := os.ReadFile(filepath.Join("testdata/epics", name))
		if err != nil {
			t.Fatal(err)
		}
		// One in the artifacts directory, one in the planning directory.
		dir := p.ArtifactsDir
		if name == "epic-auth.md" {
			dir = filepath.Join(p.Root, "_bmad-output/planning-artifacts/epics")
		}
		writeFiles(t, dir, map[string]string{name: string(data)})
	}
	// A retrospective note must not be read as an epic.
	writeFiles(t, p.ArtifactsDir, map[string]string{"epic-1-retro-2025-11-20.md": "## Epic 7: Not real\n### Story 7.1: Nope\n"})
	epics, err := p.Epics()
	if err != nil {
		t.Fatal(err)
	}
	want := `E1 "Accounts": 1.1 "User Registration" 1.2 "User Login"<-[1.1] 1.3 "Password Reset"<-[1.1,1.2]
E2 "Catalogue": 2.1 "Product List" 2.2 "Product Search"<-[2.1]
E3 "Payments": 3.1 "Card Checkout"<-[1.2,2.2] 3.2 "Refunds"<-[3.1]
Eauth "Single Sign-On": auth.1 "SAML Login"<-[1.2] auth.2 "SCIM Provisioning"<-[auth.1]
`
	if got := describeEpics(epics); got != want {
		t.Errorf("epics:\n%s\nwant:\n%s", got, want)
	}
}

func TestParseEpicsMergesRepeatedEpicsAndIgnoresSections(t *testing.T) {
	text := "## Epic List\n\n### Epic 1: First\n\n## Epic 1: First\n\n### Story 1.2: Two\n\n### Story 1.1: One\n\n" +
		"## Epic 2\n\n### Story 2.1: Lone\n\nDependencies: none\n\n### Story 1.1: Duplicate\n"
	epics := ParseEpics("x.md", text)
	want := `E1 "First": 1.2 "Two" 1.1 "One"
E2 "": 2.1 "Lone"
`
	if got := describeEpics(epics); got != want {
		t.Errorf("epics:\n%s\nwant:\n%s", got, want)
	}
}
