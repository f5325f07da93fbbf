package completion

import "github.com/urfave/cli/v2"

// fixtureApp has the shape the real command tree has where completion went
// wrong: `status` at the top level and below three groups, each with its
// own flags; a global flag that takes a value; a hidden command; usages
// with quotes and a dollar sign.
func fixtureApp() *cli.App {
	jsonFlag := &cli.BoolFlag{Name: "json", Usage: "print JSON"}
	return &cli.App{
		Name: "story-automator",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "project-root", Usage: "project directory"},
		},
		Commands: []*cli.Command{
			{Name: "status", Usage: "show the project's run", Flags: []cli.Flag{
				jsonFlag, &cli.BoolFlag{Name: "watch", Usage: "refresh until the run is done"},
			}},
			{Name: "hooks", Usage: "the Stop hook", Subcommands: []*cli.Command{
				{Name: "install", Usage: "install it", Flags: []cli.Flag{&cli.StringFlag{Name: "scope", Usage: `"user" or "project"`}}},
				{Name: "status", Usage: "where it is installed", Flags: []cli.Flag{jsonFlag}},
			}},
			{Name: "loop", Usage: "a prompt loop", Subcommands: []*cli.Command{
				{Name: "start", Usage: "start one", Flags: []cli.Flag{&cli.StringFlag{Name: "completion-promise", Usage: "the text that ends it, e.g. $DONE"}}},
				{Name: "status", Usage: "print the loop", Flags: []cli.Flag{jsonFlag}},
			}},
			{Name: "session", Usage: "child sessions", Subcommands: []*cli.Command{
				{Name: "status", Usage: `a session's state`, Flags: []cli.Flag{
					jsonFlag, &cli.IntFlag{Name: "lines", Aliases: []string{"n"}, Usage: "pane lines to show"},
				}},
			}},
			{Name: "stealth", Hidden: true, Usage: "not offered"},
		},
	}
}
