// Package approval records the commands from a project that the user
// approved from their own terminal (a loop's advisor, a notify command), in
// a folder under the user's state directory that no child's sandbox can
// write, and tells whether a command is one of them.
//
// One file per approved command: its name is a hash of the command (an
// index only), its content the command itself, compared byte for byte.
// A child who finds a command with the same hash gains nothing: the
// content must match. The Stop hook reads one file to check an advisor and
// links no crypto package (cmd/story-automator-hook/deps_test.go).
package approval

import (
	"bytes"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// Folder names under the state directory.
const (
	appDir      = "story-automator"
	approvedDir = "approved"
)

// Dir is the user's folder of approved commands:
// $XDG_STATE_HOME/story-automator/approved, else
// $HOME/.local/state/story-automator/approved.
func Dir(getenv func(string) string) (string, error) {
	base := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(base) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", errors.New("no state folder to keep approved commands in: neither XDG_STATE_HOME nor HOME is an absolute path")
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, appDir, approvedDir), nil
}

// Store is one folder of approved commands.
type Store struct{ Dir string }

// Open is the Store of the user's folder (Dir).
func Open(getenv func(string) string) (Store, error) {
	d, err := Dir(getenv)
	return Store{Dir: d}, err
}

// Path is the file that approves command.
func (s Store) Path(command string) string {
	h := fnv.New128a()
	h.Write([]byte(command))
	return filepath.Join(s.Dir, hex.EncodeToString(h.Sum(nil)))
}

// Approve records command as approved.
func (s Store) Approve(command string) error {
	if s.Dir == "" {
		return errors.New("no folder to keep approved commands in")
	}
	if err := atomicfile.EnsureDir(s.Dir, 0o700); err != nil {
		return fmt.Errorf("record the approval of %q: %w", command, err)
	}
	if err := atomicfile.Write(s.Path(command), []byte(command), 0o600); err != nil {
		return fmt.Errorf("record the approval of %q: %w", command, err)
	}
	return nil
}

// Approved reports whether command was approved: its file holds exactly
// command. Anything unreadable counts as not approved.
func (s Store) Approved(command string) bool {
	if s.Dir == "" {
		return false
	}
	data, err := os.ReadFile(s.Path(command))
	return err == nil && bytes.Equal(data, []byte(command))
}
