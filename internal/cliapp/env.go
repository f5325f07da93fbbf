package cliapp

import (
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rs/zerolog"

	"github.com/story-automator/story-automator/internal/coded"
)

// ProjectRoot is the project directory a command works in, made absolute:
// the one given, else the working directory. It must be a directory.
func ProjectRoot(given string, getwd func() (string, error)) (string, error) {
	root := given
	if root == "" {
		wd, err := getwd()
		if err != nil {
			return "", coded.Fail("project_root", "cannot determine the current directory: %v", err)
		}
		root = wd
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return "", coded.Fail("project_root", "project root %s: %v", root, err)
	}
	if st, err := os.Stat(abs); err != nil || !st.IsDir() {
		return "", coded.Fail("project_root_missing", "project root %s is not a directory", abs).
			WithAction("pass --project-root with an existing directory, or run from inside the project")
	}
	return abs, nil
}

// Logger logs at level (debug, info, warn, error) with timestamps, appending
// to file when one is named, else writing to stderr.
func Logger(level, file string, stderr io.Writer) (zerolog.Logger, error) {
	lv, err := zerolog.ParseLevel(strings.ToLower(level))
	if err != nil {
		return zerolog.Nop(), coded.Usage("invalid --log-level %q", level)
	}
	w := stderr
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return zerolog.Nop(), coded.Fail("log_file", "open log file %s: %v", file, err)
		}
		w = f
	}
	// Notifications and parallel stories log from several goroutines: one
	// record at a time, whatever the writer.
	return zerolog.New(zerolog.SyncWriter(w)).Level(lv).With().Timestamp().Logger(), nil
}
