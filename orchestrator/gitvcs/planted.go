package gitvcs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// plantedHeader opens the lines of .git/info/exclude that keep out what an
// agent CLI's sandbox plants in the project: Claude Code mounts /dev/null
// over absent .bashrc, .gitconfig, .mcp.json… (so an agent's own `git add
// -A` fails on them), Gemini CLI leaves an empty .geminiignore. Only names
// absent when a run starts are listed, so no file of the user's is hidden;
// a listed name stays listed while the file is untracked (the placeholder
// a sandbox left behind); `git add -f` or a commit of the file makes it the
// user's again. Each run start writes the block anew. The repository's own
// exclude file is the one place both this tool's commits and an agent's own
// git commands read, worktrees included (a per-child git setting would
// reach only the agents).
const plantedHeader = "# story-automator: absent files agent sandboxes may plant (never committed)"

// excludePlanted rewrites the planted block for the names of g.Planted
// that are absent from the project now.
func (g *Git) excludePlanted(ctx context.Context) error {
	path, err := g.excludeFile(ctx)
	if err != nil {
		return err
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("read %s: %w", path, err)
	}
	kept, listed := dropBlock(data, plantedHeader)
	tracked, err := g.tracked(ctx, g.Planted)
	if err != nil {
		return err
	}
	var lines []string
	for _, name := range g.Planted {
		line := "/" + g.prefix + name
		_, err := os.Lstat(filepath.Join(g.Root, name))
		if errors.Is(err, os.ErrNotExist) || listed[line] && !tracked[name] {
			lines = append(lines, line)
		}
	}
	var b bytes.Buffer
	b.Write(kept)
	if len(lines) > 0 {
		if b.Len() > 0 && !bytes.HasSuffix(kept, []byte("\n")) {
			b.WriteByte('\n')
		}
		b.WriteString(plantedHeader + "\n" + strings.Join(lines, "\n") + "\n")
	}
	if bytes.Equal(b.Bytes(), data) {
		return nil
	}
	if err := atomicfile.EnsureDir(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, b.Bytes(), 0o644)
}

// excludeFile is the repository's .git/info/exclude, absolute.
func (g *Git) excludeFile(ctx context.Context) (string, error) {
	rel, err := g.git(ctx, nil, "rev-parse", "--git-path", "info/exclude")
	if err != nil {
		return "", err
	}
	path := strings.TrimSpace(rel)
	if !filepath.IsAbs(path) {
		path = filepath.Join(g.Root, path)
	}
	return path, nil
}

// dropBlock removes the block that header opens (up to a blank line or
// another comment) from an exclude file's text; listed are its lines.
func dropBlock(data []byte, header string) ([]byte, map[string]bool) {
	var kept []string
	listed := map[string]bool{}
	in := false
	for _, l := range strings.SplitAfter(string(data), "\n") {
		t := strings.TrimSpace(l)
		switch {
		case t == header:
			in = true
			continue
		case in && (t == "" || strings.HasPrefix(t, "#")):
			in = false
		case in:
			listed[t] = true
			continue
		}
		kept = append(kept, l)
	}
	return []byte(strings.Join(kept, "")), listed
}

// tracked reports which of names (relative to Root, files or folders)
// git tracks.
func (g *Git) tracked(ctx context.Context, names []string) (map[string]bool, error) {
	out := map[string]bool{}
	if len(names) == 0 {
		return out, nil
	}
	files, err := g.git(ctx, nil, append([]string{"ls-files", "--"}, names...)...)
	if err != nil {
		return nil, err
	}
	for _, f := range strings.Split(files, "\n") {
		for _, name := range names {
			if f == name || strings.HasPrefix(f, name+"/") {
				out[name] = true
			}
		}
	}
	return out, nil
}
