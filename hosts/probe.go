package hosts

import (
	"context"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/story-automator/story-automator/internal/shellword"
)

// Programs are the binaries a host needs, as `make dist` and `go install` name them.
var Programs = []string{"story-automator", "story-automator-hook"}

// BinDir is where `hosts install` puts the programs on the host.
func (h *Host) BinDir() string { return path.Join(h.Dir, "bin") }

// Program is the path of story-automator on the host.
func (h *Host) Program() string { return path.Join(h.BinDir(), Programs[0]) }

// Probe is one command's outcome on the host.
type Probe struct {
	Exit   int
	Output string
}

// OK reports whether the command ran and exited 0.
func (p Probe) OK() bool { return p.Exit == 0 }

// Facts are what one round trip learns about a host.
type Facts struct {
	Uname, Tmux, Git, Disk, Version, Files Probe
}

// Platform is the host's GOOS/GOARCH from `uname -sm`, "" when unknown.
func (f Facts) Platform() string { return Platform(f.Uname.Output) }

// Platform maps `uname -sm` output to GOOS/GOARCH ("" when not supported).
func Platform(uname string) string {
	fields := strings.Fields(uname)
	if len(fields) != 2 {
		return ""
	}
	goos := map[string]string{"Linux": "linux", "Darwin": "darwin"}[fields[0]]
	arch := map[string]string{"x86_64": "amd64", "amd64": "amd64", "aarch64": "arm64", "arm64": "arm64"}[fields[1]]
	if goos == "" || arch == "" {
		return ""
	}
	return goos + "/" + arch
}

// InstalledVersion is the version the host's story-automator reports, ""
// when it is not there or does not run.
func (f Facts) InstalledVersion() string {
	if !f.Version.OK() {
		return ""
	}
	return VersionOf(f.Version.Output)
}

// VersionOf reads `story-automator --version` output ("story-automator VERSION").
func VersionOf(out string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	v := strings.TrimPrefix(strings.TrimSpace(line), Programs[0]+" ")
	return strings.TrimSpace(strings.TrimPrefix(v, "version "))
}

// FreeKiB is the space left in the work directory (or the nearest
// directory above it that exists), -1 when df did not say.
func (f Facts) FreeKiB() int64 {
	lines := strings.Split(strings.TrimSpace(f.Disk.Output), "\n")
	if !f.Disk.OK() || len(lines) < 2 {
		return -1
	}
	fields := strings.Fields(lines[len(lines)-1])
	if len(fields) < 4 {
		return -1
	}
	n, err := strconv.ParseInt(fields[3], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// HasPrograms reports whether every one of Programs is in the host's BinDir.
func (f Facts) HasPrograms() bool {
	have := strings.Fields(f.Files.Output)
	for _, p := range Programs {
		found := false
		for _, h := range have {
			found = found || h == p
		}
		if !found {
			return false
		}
	}
	return true
}

const probeMark = "@@story-automator-probe "

// Facts learns the host's platform, tmux, git, free disk and installed
// story-automator in one command.
func (h *Host) Facts(ctx context.Context) (Facts, error) {
	q := shellword.MustQuote
	script := `probe() { n=$1; shift; out=$("$@" 2>&1); printf '` + probeMark + `%s %d\n%s\n' "$n" $? "$out"; }
probe uname uname -sm
probe tmux tmux -V
probe git git --version
d=` + q(h.Dir) + `; while [ ! -d "$d" ]; do d=$(dirname "$d"); done
probe disk df -Pk "$d"
probe version ` + q(h.Program()) + ` --version
probe files ls ` + q(h.BinDir()) + `
`
	res, err := h.Script(ctx, script, nil)
	if err != nil {
		return Facts{}, err
	}
	probes := parseProbes(string(res.Stdout))
	f := Facts{Uname: probes["uname"], Tmux: probes["tmux"], Git: probes["git"], Disk: probes["disk"],
		Version: probes["version"], Files: probes["files"]}
	if _, ok := probes["files"]; !ok {
		return f, fmt.Errorf("host %s: the probe printed %q", h.Name, lastLines(string(res.Stdout), 3))
	}
	return f, nil
}

// parseProbes splits the probe script's output into its commands' outcomes.
func parseProbes(out string) map[string]Probe {
	probes := map[string]Probe{}
	var name string
	var cur Probe
	var body []string
	flush := func() {
		if name != "" {
			cur.Output = strings.TrimSpace(strings.Join(body, "\n"))
			probes[name] = cur
		}
	}
	for _, line := range strings.Split(out, "\n") {
		head, ok := strings.CutPrefix(line, probeMark)
		if !ok {
			body = append(body, line)
			continue
		}
		flush()
		n, code, _ := strings.Cut(head, " ")
		exit, err := strconv.Atoi(strings.TrimSpace(code))
		if err != nil {
			exit = -1
		}
		name, cur, body = n, Probe{Exit: exit}, nil
	}
	flush()
	return probes
}
