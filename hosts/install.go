package hosts

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/internal/shellword"
)

// Binary is one local program to copy to a host, under its installed name.
type Binary struct {
	Name string `json:"name"`
	Path string `json:"from"`
	Size int64  `json:"bytes"`
}

// CodeNoBinary is a platform this machine has no binaries for.
const CodeNoBinary = "host_binary_missing"

// Binaries finds the programs to install on a host of platform
// (GOOS/GOARCH): from dir, `make dist`'s NAME-OS-ARCH files, or NAME
// itself when the platform is this machine's; dir "" looks beside exe
// (this binary) and then in dist/ below root. story-automator itself is
// required; the hook is sent when found.
func Binaries(platform, dir, exe, root string) ([]Binary, error) {
	dirs := []string{dir}
	if dir == "" {
		dirs = []string{filepath.Dir(exe), filepath.Join(root, "dist")}
	}
	suffix := "-" + strings.ReplaceAll(platform, "/", "-")
	native := platform == runtime.GOOS+"/"+runtime.GOARCH
	var out []Binary
	for _, name := range Programs {
		var found string
		for _, d := range dirs {
			candidates := []string{filepath.Join(d, name+suffix)}
			if native {
				candidates = append(candidates, filepath.Join(d, name))
			}
			for _, c := range candidates {
				if found == "" && isFile(c) {
					found = c
				}
			}
		}
		if found == "" && name == Programs[0] && native && dir == "" {
			found = exe
		}
		if found == "" {
			if name == Programs[0] {
				return nil, coded.Fail(CodeNoBinary, "no story-automator binary for %s in %s", platform, strings.Join(dirs, " or ")).
					WithAction("build every platform's binaries with `make dist`, then pass --from dist")
			}
			continue
		}
		fi, _ := os.Stat(found)
		out = append(out, Binary{Name: name, Path: found, Size: fi.Size()})
	}
	return out, nil
}

func isFile(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Install copies bins into the host's BinDir over its connection, in one
// command (a tar stream on stdin, each file moved into place whole), and
// returns the version the installed story-automator reports.
func (h *Host) Install(ctx context.Context, bins []Binary) (string, error) {
	q := shellword.MustQuote
	names := make([]string, len(bins))
	for i, b := range bins {
		names[i] = q(b.Name)
	}
	script := `set -e
bin=` + q(h.BinDir()) + `
mkdir -p "$bin"
t=$(mktemp -d "$bin/.install.XXXXXX")
trap 'rm -rf "$t"' EXIT
tar -xf - -C "$t"
for f in ` + strings.Join(names, " ") + `; do chmod 755 "$t/$f"; mv -f "$t/$f" "$bin/$f"; done
"$bin/story-automator" --version
`
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(writeTar(pw, bins)) }()
	res, err := h.Script(ctx, script, pr)
	pr.Close()
	if err != nil {
		return "", fmt.Errorf("install on host %s: %w", h.Name, err)
	}
	return VersionOf(string(res.Stdout)), nil
}

// writeTar writes bins as a tar stream of executables.
func writeTar(w io.Writer, bins []Binary) error {
	tw := tar.NewWriter(w)
	for _, b := range bins {
		if err := addFile(tw, b); err != nil {
			return err
		}
	}
	return tw.Close()
}

func addFile(tw *tar.Writer, b Binary) error {
	f, err := os.Open(b.Path)
	if err != nil {
		return err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if err := tw.WriteHeader(&tar.Header{Name: b.Name, Mode: 0o755, Size: fi.Size(), Typeflag: tar.TypeReg, Format: tar.FormatUSTAR}); err != nil {
		return err
	}
	_, err = io.Copy(tw, f)
	return err
}

// Codes of an install's refusals.
const (
	CodePlatform        = "host_platform_unsupported"
	CodeVersionMismatch = "host_version_mismatch"
)

// Installed is what `hosts install` did on a host.
type Installed struct {
	Host     string   `json:"host"`
	Platform string   `json:"platform"`
	BinDir   string   `json:"binDir"`
	Version  string   `json:"version"`
	Copied   []Binary `json:"copied"`
	// Current is true when the host already had this version and nothing was copied.
	Current    bool  `json:"current"`
	RoundTrips int64 `json:"roundTrips"`
}

// InstallVersion makes the host's story-automator the version want: it
// learns the host's platform, copies the binaries find gives for it
// (unless the host already has want and force is false) and checks the
// version the copy reports.
func (h *Host) InstallVersion(ctx context.Context, want string, force bool, find func(platform string) ([]Binary, error)) (out Installed, err error) {
	out = Installed{Host: h.Name, BinDir: h.BinDir(), Copied: []Binary{}}
	defer func() { out.RoundTrips = h.Stats().RoundTrips() }()
	facts, err := h.Facts(ctx)
	if err != nil {
		return out, err
	}
	if out.Platform = facts.Platform(); out.Platform == "" {
		return out, coded.Fail(CodePlatform, "%s runs %q: story-automator is built for linux and darwin on amd64 and arm64", h.Name, facts.Uname.Output)
	}
	if !force && facts.InstalledVersion() == want && facts.HasPrograms() {
		out.Version, out.Current = want, true
		return out, nil
	}
	bins, err := find(out.Platform)
	if err != nil {
		return out, err
	}
	if out.Version, err = h.Install(ctx, bins); err != nil {
		return out, err
	}
	out.Copied = bins
	if out.Version != want {
		return out, coded.Fail(CodeVersionMismatch, "the story-automator copied to %s reports %s, this machine is %s", h.Name, orNone(out.Version), want).
			WithAction("build the binaries from this same source (make dist), then story-automator hosts install %s --from dist", h.Name)
	}
	return out, nil
}

func orNone(s string) string {
	if s == "" {
		return "no version"
	}
	return s
}
