package main

import (
	"github.com/urfave/cli/v2"

	"github.com/story-automator/story-automator/agent"
	"github.com/story-automator/story-automator/internal/cliio"
	"github.com/story-automator/story-automator/skill"
)

func skillCommand() *cli.Command {
	flags := func(extra ...cli.Flag) []cli.Flag {
		return append([]cli.Flag{
			&cli.StringFlag{Name: "provider", Value: skill.DefaultProvider(), Usage: "the agent whose skill folder takes it: " + agent.OrList(skill.Providers())},
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

func skillTarget(c *cli.Context) skill.Target {
	e := envOf(c)
	return skill.Target{Provider: c.String("provider"), Scope: c.String("scope"), Root: e.ProjectRoot, Getenv: e.Getenv}
}

func skillInstall(c *cli.Context) error {
	r, err := skill.InstallTo(skillTarget(c), c.Bool("force"))
	if err != nil {
		return err
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": r.Path, "installed": true, "changed": r.Changed})
}

func skillUninstall(c *cli.Context) error {
	r, err := skill.UninstallFrom(skillTarget(c))
	if err != nil {
		return err
	}
	return cliio.OKJSON(envOf(c).Out, map[string]any{"path": r.Path, "removed": r.Changed})
}
