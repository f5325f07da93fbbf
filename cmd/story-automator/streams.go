package main

import (
	"io"
	"os"
	"time"
)

// Streams is everything a command touches outside itself, injected so tests run
// commands in-process with captured output, a fixed environment and a fake clock.
type Streams struct {
	In      io.Reader
	Out     io.Writer
	Err     io.Writer
	Getenv  func(string) string
	Environ func() []string
	Now     func() time.Time
	// Getwd returns the working directory (the default project root).
	Getwd func() (string, error)
	// Exe is the path of this binary, for hooks and child commands.
	Exe func() (string, error)
	// OutTerminal reports whether Out is a terminal (and its fd); nil = never.
	// A terminal gets text, anything else JSON (see humanStreams).
	OutTerminal func() (int, bool)
}

// SystemStreams binds Streams to the real process.
func SystemStreams() *Streams {
	return &Streams{
		In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		Getenv: os.Getenv, Environ: os.Environ, Now: time.Now,
		Getwd: os.Getwd, Exe: os.Executable, OutTerminal: stdoutTerminal,
	}
}
