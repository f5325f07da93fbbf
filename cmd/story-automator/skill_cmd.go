package main

import (
	"errors"

	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/skill"
)

func init() { register(skillCommand) }

func skillCommand() *cli.Command {
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append([]cli.Flag{
			&cli.StringFlag{Name: "provider", Value: skill.Claude, Usage: "claude (a Claude Code skill) or codex (where Codex reads skills)"},
			&cli.StringFlag{Name: "scope", Value: skill.Project, Usage: "project (this project's .claude/skills or .agents/skills) or user (your home's)"},
		}, extra...)
	}
	return &cli.Command{
		Name:  "skill",
		Usage: "install the instructions an agent session reads to run stories with this tool",
		Subcommands: []*cli.Command{
			{Name: "install", Usage: "write the story-automator skill where the provider reads it", Action: skillInstall,
				Flags: flags(&cli.BoolFlag{Name: "force", Usage: "replace a different file at the skill's path"})},
			{Name: "uninstall", Usage: "remove the skill (and the folders it created) when it is unchanged", Action: skillUninstall, Flags: flags()},
			{Name: "show", Usage: "print the skill's text", Action: func(c *cli.Context) error {
				_, err := envOf(c).Out.Write(skill.Text())
				return err
			}},
		},
	}
}

func skillPath(c *cli.Context) (string, string, error) {
	e := envOf(c)
	p, err := skill.Path(c.String("provider"), c.String("scope"), e.ProjectRoot, e.Getenv)
	if err != nil {
		return "", "", cliio.UsageError("%v", err)
	}
	stop := e.ProjectRoot
	if c.String("scope") == skill.User {
		stop = e.Getenv("HOME")
	}
	return p, stop, nil
}

func skillInstall(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	p, _, err := skillPath(c)
	if err != nil {
		return err
	}
	r, err := skill.Install(p, c.Bool("force"))
	if errors.Is(err, skill.ErrNotOurs) {
		return cliio.Fail("skill_conflict", "%v", err)
	}
	if err != nil {
		return cliio.Fail("skill_io", "%v", err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": r.Path, "installed": true, "changed": r.Changed})
}

func skillUninstall(c *cli.Context) error {
	if err := noArgs(c); err != nil {
		return err
	}
	p, stop, err := skillPath(c)
	if err != nil {
		return err
	}
	r, err := skill.Uninstall(p, stop)
	if errors.Is(err, skill.ErrNotOurs) {
		return cliio.Fail("skill_conflict", "%v", err)
	}
	if err != nil {
		return cliio.Fail("skill_io", "%v", err)
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": r.Path, "removed": r.Changed})
}
