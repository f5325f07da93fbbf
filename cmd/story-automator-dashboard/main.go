// The same start-up settings as story-automator's (see its main.go).
//go:debug containermaxprocs=0

// Command story-automator-dashboard is `story-automator dashboard` in its own
// program, so that only it links the terminal UI libraries (their start-up
// would otherwise be paid by every command): story-automator replaces itself
// with this program, naming the project, the tmux socket and itself.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/story-automator/story-automator/dashboard"
	"github.com/story-automator/story-automator/dashboard/program"
	"github.com/story-automator/story-automator/internal/cliapp"
	"github.com/story-automator/story-automator/remotesession"
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	fs := flag.NewFlagSet(program.BinaryName, flag.ContinueOnError)
	root := fs.String(cliapp.FlagProjectRoot, os.Getenv("PROJECT_ROOT"), "project directory (default: the current directory)")
	socket := fs.String(cliapp.FlagTmuxSocket, os.Getenv("STORY_AUTOMATOR_TMUX_SOCKET"), "tmux socket name (-L); empty = the one the run recorded")
	exe := fs.String("exe", "", "story-automator, which resume runs (default: the one beside this program)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	dir, err := cliapp.ProjectRoot(*root, os.Getwd)
	if err != nil {
		fmt.Fprintln(os.Stderr, "story-automator dashboard:", err)
		return 1
	}
	if *exe == "" {
		*exe = besideMe()
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// Children on ssh hosts are read over one kept connection per host (the
	// run's own, while it is open); one the dashboard opened ends with it.
	pool := &remotesession.Pool{Root: dir, Getenv: os.Getenv}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		pool.Close(ctx)
	}()
	src := dashboard.Source{Root: dir, Getenv: os.Getenv, Socket: *socket, Now: time.Now, Hosts: pool}
	ctl := dashboard.Controls{Root: dir, Getenv: os.Getenv, Exe: *exe, Environ: os.Environ()}
	if err := dashboard.Run(ctx, src, ctl, dashboard.SystemTerminal()); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(os.Stderr, "story-automator dashboard:", err)
		return 1
	}
	return 0
}

// besideMe is story-automator beside this program.
func besideMe() string {
	self, err := os.Executable()
	if err != nil {
		return program.MainName
	}
	return program.Main(self)
}
