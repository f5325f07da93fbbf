package doctor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/tmux"
)

// Codes of a host's refusals.
const (
	CodeHostNotInstalled    = "host_not_installed"
	CodeHostVersionMismatch = "host_version_mismatch"
)

// minFreeKiB is the free space below which a host's work directory fails
// (a clone, its worktrees and builds); warnKiB warns.
const (
	minFreeKiB  = 512 * 1024
	warnFreeKiB = 4 * 1024 * 1024
)

// HostOptions say which host to check and how its own doctor runs.
type HostOptions struct {
	Host *hosts.Host
	// Version is this machine's story-automator version: the host's must equal it.
	Version string
	// Agents, Offline, NoRehearsal and Timeout are passed to the host's doctor.
	Agents      []string
	Offline     bool
	NoRehearsal bool
	Timeout     time.Duration
}

// RunHost checks a host over ssh: reachable, host key known, tmux, git,
// disk, the same story-automator as here, then the agents its own doctor
// finds ready. Each exchange is one round trip on the host's connection.
func RunHost(ctx context.Context, o HostOptions) Report {
	h := o.Host
	var checks []Check
	add := func(c Check) { c.Host = h.Name; checks = append(checks, c) }
	if err := h.Connect(ctx); err != nil {
		add(connectFailure(err))
		return hostReport(h, checks)
	}
	add(Check{Name: "ssh", Status: OK, Detail: "connected to " + h.Destination + " (one shared connection)"})
	add(hostKeyCheck(ctx, h))
	facts, err := h.Facts(ctx)
	if err != nil {
		add(Check{Name: "probe", Status: Fail, Detail: err.Error(), Code: codeOf(err)})
		return hostReport(h, checks)
	}
	add(platformCheck(facts))
	add(hostTmux(facts.Tmux))
	add(toolCheck("git", facts.Git, "install git on the host"))
	add(diskCheck(h, facts))
	installed := versionCheck(h, facts, o.Version)
	add(installed)
	if installed.Status == OK {
		for _, c := range hostAgents(ctx, o) {
			add(c)
		}
	}
	return hostReport(h, checks)
}

// hostKeyCheck reports how ssh checks the host's key, from the settings
// `ssh -G` prints for the host's own ssh command (your ssh config and
// STORY_AUTOMATOR_SSH_COMMAND included): checking on (yes, or ask, which
// BatchMode makes a refusal) with the known-hosts files it reads, trust on
// first use (accept-new), or off.
func hostKeyCheck(ctx context.Context, h *hosts.Host) Check {
	c := Check{Name: "host key"}
	s, err := h.SSHSettings(ctx)
	if err != nil {
		c.Status, c.Detail = Warn, "how ssh checks the host's key is unknown: "+err.Error()
		return c
	}
	strict := s["stricthostkeychecking"]
	var files []string
	for _, f := range strings.Fields(s["userknownhostsfile"] + " " + s["globalknownhostsfile"]) {
		if f != "/dev/null" && f != "none" {
			files = append(files, f)
		}
	}
	known := "known hosts: " + orDash(strings.Join(files, " "))
	fix := "turn host-key checking on for " + h.Destination + " in your ssh config (StrictHostKeyChecking yes, a real UserKnownHostsFile) or STORY_AUTOMATOR_SSH_COMMAND"
	switch {
	case strict == "":
		c.Status, c.Detail = Warn, "ssh -G did not say how the host's key is checked"
	case strict == "false" || strict == "no" || strict == "off":
		c.Status, c.Detail, c.Fix = Warn, "checking OFF: ssh accepts any key for "+h.Destination+" (StrictHostKeyChecking no); "+known, fix
	case len(files) == 0 && strict == "accept-new":
		c.Status, c.Detail, c.Fix = Warn, "checking OFF: no known-hosts file (/dev/null), so every key is new and StrictHostKeyChecking accept-new takes it", fix
	case len(files) == 0:
		c.Status, c.Detail, c.Fix = Warn, "no known-hosts file (/dev/null): no key of the host can be known", fix
	case strict == "accept-new":
		c.Status, c.Detail, c.Fix = Warn, "a new host's key is trusted unseen (StrictHostKeyChecking accept-new); a changed one is refused; "+known, fix
	default:
		c.Status, c.Detail = OK, "checked: StrictHostKeyChecking "+strict+" (with BatchMode an unknown or changed key is refused); "+known
	}
	return c
}

func hostReport(h *hosts.Host, checks []Check) Report {
	r := Report{OK: true, Checks: checks, Host: h.Name, RoundTrips: h.Stats().RoundTrips()}
	r.OK = r.Failed() == 0
	return r
}

func codeOf(err error) string {
	var ce *coded.Error
	if errors.As(err, &ce) {
		return ce.Code
	}
	return ""
}

// connectFailure is the check a failed connection fails: the host key, or ssh itself.
func connectFailure(err error) Check {
	c := Check{Name: "ssh", Status: Fail, Detail: err.Error(), Code: codeOf(err)}
	if errors.Is(err, hosts.ErrHostKey) {
		c.Name = "host key"
	}
	var ce *coded.Error
	if errors.As(err, &ce) {
		c.Fix = ce.Action
	}
	return c
}

func platformCheck(f hosts.Facts) Check {
	c := Check{Name: "platform"}
	if p := f.Platform(); p != "" {
		c.Status, c.Detail = OK, p
	} else {
		c.Status, c.Detail, c.Code = Fail, fmt.Sprintf("%q is not a supported system (linux or darwin, amd64 or arm64)", f.Uname.Output), "host_platform_unsupported"
	}
	return c
}

func hostTmux(p hosts.Probe) Check {
	c := Check{Name: "tmux"}
	v, err := tmux.ParseVersion(p.Output)
	switch {
	case !p.OK() || err != nil:
		c.Status, c.Detail, c.Fix = Fail, "tmux is not usable on the host: "+orDash(p.Output), "install tmux 3.0 or newer on the host"
	case !v.AtLeast(3, 0):
		c.Status, c.Detail, c.Fix = Fail, v.Raw+" is older than 3.0", "upgrade tmux on the host to 3.0 or newer"
	default:
		c.Status, c.Detail = OK, v.Raw
	}
	return c
}

func toolCheck(name string, p hosts.Probe, fix string) Check {
	if !p.OK() {
		return Check{Name: name, Status: Fail, Detail: name + " is not usable on the host: " + orDash(p.Output), Fix: fix}
	}
	return Check{Name: name, Status: OK, Detail: p.Output}
}

func diskCheck(h *hosts.Host, f hosts.Facts) Check {
	c := Check{Name: "disk"}
	free := f.FreeKiB()
	detail := fmt.Sprintf("%.1f GiB free for %s", float64(free)/(1024*1024), h.Dir)
	switch {
	case free < 0:
		c.Status, c.Detail = Warn, "could not read the free space: "+orDash(f.Disk.Output)
	case free < minFreeKiB:
		c.Status, c.Detail, c.Fix = Fail, detail, "free space on the host's disk, or choose another dir"
	case free < warnFreeKiB:
		c.Status, c.Detail, c.Fix = Warn, detail, "a story's clone and builds may need more"
	default:
		c.Status, c.Detail = OK, detail
	}
	return c
}

// versionCheck refuses a host whose story-automator is missing or not this one.
func versionCheck(h *hosts.Host, f hosts.Facts, want string) Check {
	c := Check{Name: "story-automator"}
	fix := "story-automator hosts install " + h.Name
	switch got := f.InstalledVersion(); {
	case got == "":
		c.Status, c.Code, c.Fix = Fail, CodeHostNotInstalled, fix
		c.Detail = fmt.Sprintf("story-automator is not installed in %s on %s (%s)", h.BinDir(), h.Name, orDash(f.Version.Output))
	case got != want:
		c.Status, c.Code, c.Fix = Fail, CodeHostVersionMismatch, fix
		c.Detail = fmt.Sprintf("%s has story-automator %s, this machine %s: they must be the same", h.Name, got, want)
	default:
		c.Status, c.Detail = OK, got+" in "+h.BinDir()
	}
	return c
}

// hostAgents runs the host's own doctor and reports its agent checks, then
// which agents are ready there.
func hostAgents(ctx context.Context, o HostOptions) []Check {
	h := o.Host
	args := []string{h.Program(), "--project-root", h.Dir, "doctor", "--json"}
	for _, a := range o.Agents {
		args = append(args, "--agent", a)
	}
	if o.Offline {
		args = append(args, "--offline")
	}
	if o.NoRehearsal {
		args = append(args, "--no-rehearsal")
	}
	if o.Timeout > 0 {
		args = append(args, "--timeout", o.Timeout.String())
	}
	res, err := h.Run(ctx, hosts.Request{Args: args})
	var rep Report
	if jerr := json.Unmarshal(res.Stdout, &rep); jerr != nil {
		detail := fmt.Sprintf("the host's doctor printed no report (%v)", err)
		return []Check{{Name: "agents", Status: Fail, Detail: detail, Code: codeOf(err)}}
	}
	var out []Check
	var ready, broken []string
	for _, c := range rep.Checks {
		if c.Agent == "" {
			continue
		}
		out = append(out, c)
		if c.Status == Fail && !contains(broken, c.Agent) {
			broken = append(broken, c.Agent)
		}
	}
	for _, c := range rep.Checks {
		if c.Agent != "" && !contains(broken, c.Agent) && !contains(ready, c.Agent) {
			ready = append(ready, c.Agent)
		}
	}
	sum := Check{Name: "agents", Status: OK, Detail: "ready on " + h.Name + ": " + orDash(strings.Join(ready, ", "))}
	if len(broken) > 0 {
		sum.Status, sum.Detail = Fail, "not ready on "+h.Name+": "+strings.Join(broken, ", ")
		sum.Fix = "fix the checks above on the host (its own `story-automator doctor` says the same)"
	}
	return append(out, sum)
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
