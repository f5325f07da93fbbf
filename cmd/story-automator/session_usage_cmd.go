package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/orchestrator/tmuxsteps"
	"github.com/story-automator/story-automator/sessionstate"
)

func sessionUsageCommand() *cli.Command {
	return &cli.Command{Name: "usage", Usage: "print what a session's agent spent, from the agent's own record", ArgsUsage: "NAME",
		Flags:  []cli.Flag{&cli.StringFlag{Name: "agent", Usage: "the session's agent (default: the one its state names)"}},
		Action: sessionUsage}
}

// sessionUsage reads a child session's usage as a run does after its
// attempt: a run on another host asks the host this way.
func sessionUsage(c *cli.Context) error {
	name, err := sessionName(c)
	if err != nil {
		return err
	}
	e := envOf(c)
	dir := sessionStateDir(e)
	agentName := c.String("agent")
	if agentName == "" {
		if st, err := sessionstate.Read(dir, name); err == nil {
			agentName = st.Agent
		}
	}
	r := &tmuxsteps.Runner{StateDir: dir, Environ: e.Environ()}
	res := r.SessionUsage(agentName, name, e.ProjectRoot)
	return cliio.OKJSON(e.Out, map[string]any{"session": name, "agent": agentName, "usage": res.Usage, "model": res.Model,
		"usageNote": res.UsageNote})
}
