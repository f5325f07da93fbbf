package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/hosts"
	"github.com/story-automator/story-automator/internal/buildinfo"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/internal/coded"
	"github.com/story-automator/story-automator/remotesession"
	"github.com/story-automator/story-automator/workflows"
)

func hostsCommand() *cli.Command {
	return &cli.Command{
		Name:  "hosts",
		Usage: "the machines stories may run on (hosts: in workflow.yaml): list them, install story-automator on one over ssh",
		Subcommands: []*cli.Command{
			{
				Name:   "list",
				Usage:  "list the workflow's hosts: local (this machine) and each ssh host, with its destination, work directory, parallel and agents",
				Action: hostsList,
			},
			{
				Name:      "install",
				Usage:     "copy this story-automator (the static binaries for the host's system) into the host's work directory over ssh, then check its version",
				ArgsUsage: "NAME",
				Flags: []cli.Flag{
					&cli.StringFlag{Name: "from", Usage: "directory with `make dist`'s binaries (story-automator-OS-ARCH…); default: beside this binary, then dist/ in the project"},
					&cli.BoolFlag{Name: "force", Usage: "copy even when the host already has this version"},
				},
				Action: hostsInstall,
			},
		},
	}
}

// policyHost is the workflow's host named name, or a usage error naming the hosts there are.
func policyHost(e *runtimeEnv, name string) (workflows.Host, error) {
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return workflows.Host{}, coded.Fail(workflows.Code(err), "%v", err)
	}
	h, ok := pol.Host(name)
	if !ok {
		return h, coded.Usage("no host %q in %s (hosts: %s)", name, workflows.PolicyFile, strings.Join(pol.HostNames(), ", ")).
			WithAction("add it under hosts: in %s, or see story-automator hosts list", workflows.PolicyFile)
	}
	return h, nil
}

// openHost is the ssh Host for a policy host, its control socket under the project's state directory.
func openHost(e *runtimeEnv, spec workflows.Host) (*hosts.Host, error) {
	h, err := remotesession.Open(e.ProjectRoot, e.Getenv, spec, nil)
	if err != nil {
		return nil, coded.Usage("%v", err)
	}
	return h, nil
}

// closeHost ends the host's connection: a one-shot command leaves no ssh behind.
func closeHost(e *runtimeEnv, h *hosts.Host) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.Close(ctx); err != nil {
		e.Log.Debug().Err(err).Str("host", h.Name).Msg("close ssh connection")
	}
}

type hostRow struct {
	Name       string   `json:"name"`
	SSH        string   `json:"ssh"`
	Dir        string   `json:"dir"`
	Parallel   int      `json:"parallel"`
	Agents     []string `json:"agents"`
	Enabled    bool     `json:"enabled"`
	SSHCommand string   `json:"sshCommand,omitempty"`
}

func hostsList(c *cli.Context) error {
	e := envOf(c)
	pol, err := workflows.LoadPolicy(e.ProjectRoot)
	if err != nil {
		return coded.Fail(workflows.Code(err), "%v", err)
	}
	rows := make([]hostRow, 0, len(pol.Hosts))
	for _, h := range pol.Hosts {
		row := hostRow{Name: h.Name, SSH: h.SSH, Dir: h.Dir, Parallel: h.Parallel, Agents: h.Agents, Enabled: h.Enabled}
		if row.Agents == nil {
			row.Agents = []string{}
		}
		if !h.Local() {
			argv, err := hosts.SSHCommand(h.SSHCommand, e.Getenv)
			if err != nil {
				return coded.Usage("%v", err)
			}
			row.SSHCommand = strings.Join(argv, " ")
		}
		rows = append(rows, row)
	}
	return cliio.Emit(e.Out, map[string]any{"ok": true, "hosts": rows}, func(w io.Writer) { writeHosts(w, rows) })
}

func writeHosts(w io.Writer, rows []hostRow) {
	fmt.Fprintf(w, "%-12s %-28s %-10s %-8s %s\n", "HOST", "SSH", "PARALLEL", "ENABLED", "AGENTS")
	for _, r := range rows {
		ssh, par, on := r.SSH, fmt.Sprint(r.Parallel), "yes"
		if r.SSH == "" {
			ssh = "(this machine)"
		}
		if r.Parallel == 0 {
			par = "--parallel"
		}
		if !r.Enabled {
			on = "no"
		}
		agents := strings.Join(r.Agents, ", ")
		if agents == "" {
			agents = "any"
		}
		fmt.Fprintf(w, "%-12s %-28s %-10s %-8s %s\n", r.Name, ssh, par, on, agents)
		if r.Dir != "" {
			fmt.Fprintf(w, "%-12s dir %s, via %s\n", "", r.Dir, r.SSHCommand)
		}
	}
}

func hostsInstall(c *cli.Context) error {
	e := envOf(c)
	if c.NArg() != 1 {
		return coded.Usage("hosts install takes one host name")
	}
	spec, err := policyHost(e, c.Args().First())
	if err != nil {
		return err
	}
	if spec.Local() {
		return coded.Usage("%q is this machine: story-automator is already here", spec.Name)
	}
	h, err := openHost(e, spec)
	if err != nil {
		return err
	}
	defer closeHost(e, h)
	exe, err := e.Exe()
	if err != nil {
		return coded.Fail("binary_path", "cannot determine the path of this binary: %v", err)
	}
	from := c.String("from")
	if from != "" && !filepath.IsAbs(from) {
		from = filepath.Join(e.ProjectRoot, from)
	}
	find := func(platform string) ([]hosts.Binary, error) {
		return hosts.Binaries(platform, from, exe, e.ProjectRoot)
	}
	res, err := h.InstallVersion(c.Context, buildinfo.Version(version), c.Bool("force"), find)
	if err != nil {
		return err
	}
	e.Log.Info().Str("host", h.Name).Str("version", res.Version).Int("copied", len(res.Copied)).Msg("hosts install")
	fields := map[string]any{"ok": true, "host": res.Host, "platform": res.Platform, "binDir": res.BinDir,
		"version": res.Version, "current": res.Current, "copied": res.Copied, "roundTrips": res.RoundTrips}
	return cliio.Emit(e.Out, fields, func(w io.Writer) { writeInstalled(w, res) })
}

func writeInstalled(w io.Writer, r hosts.Installed) {
	if r.Current {
		fmt.Fprintf(w, "%s (%s) already has story-automator %s in %s; nothing copied (--force copies anyway).\n", r.Host, r.Platform, r.Version, r.BinDir)
		return
	}
	var names []string
	for _, b := range r.Copied {
		names = append(names, b.Name)
	}
	fmt.Fprintf(w, "Installed %s on %s (%s) in %s: story-automator %s.\n", strings.Join(names, ", "), r.Host, r.Platform, r.BinDir, r.Version)
	fmt.Fprintf(w, "Next: story-automator doctor --host %s\n", r.Host)
}
