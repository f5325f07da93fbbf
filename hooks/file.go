package hooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/story-automator/story-automator/internal/atomicfile"
)

// ErrInvalidJSON is returned when an existing settings file does not parse; it is never written.
var ErrInvalidJSON = errors.New("settings file is not valid JSON")

// ErrChanged is returned when the file changed between our read and our write.
var ErrChanged = errors.New("settings file changed while it was being edited")

// Code maps an error from this package to the stable code users see.
func Code(err error) string {
	switch {
	case errors.Is(err, ErrInvalidJSON):
		return "settings_invalid_json"
	case errors.Is(err, ErrInvalidTOML):
		return "settings_invalid_toml"
	case errors.Is(err, ErrUnexpectedShape):
		return "settings_unexpected_shape"
	case errors.Is(err, ErrChanged):
		return "settings_changed"
	case errors.Is(err, ErrUnsupportedScope):
		return "unsupported_scope"
	case errors.Is(err, ErrNoHome):
		return "home_unknown"
	default:
		return "settings_io"
	}
}

// Options tune a change: DryRun computes it without writing; Now stamps backups.
type Options struct {
	DryRun bool
	Now    func() time.Time
}

// Result describes a change to one settings file.
type Result struct {
	// Path is the file edited (a symlink's target when the settings file is a symlink).
	Path    string
	Changed bool
	// Created is true when the file did not exist before.
	Created bool
	// Backup is the copy of the previous content, empty when nothing was backed up.
	Backup string
	// Restored is true when uninstall put back the backup's exact bytes (and
	// removed the backup): the file is byte-for-byte what it was before install.
	Restored bool
	// Removed is true when uninstall deleted a file that install had created.
	Removed bool
	Actions []string
	// Content is the file's content after the change (what would be written on a dry run).
	Content []byte
}

// newFilePerm and newDirPerm apply to settings files and directories we create.
const (
	newFilePerm fs.FileMode = 0o600
	newDirPerm  fs.FileMode = 0o700
	backupPerm  fs.FileMode = 0o600
)

// Install makes the settings file at path hold exactly one Stop-hook entry of
// ours equal to h, creating the file when missing and backing it up when changed.
func Install(path string, h Hook, opt Options) (Result, error) {
	return apply(path, opt, false, func(doc *Object) ([]string, error) { return installHook(doc, h) })
}

// Uninstall removes every Stop-hook entry of ours from the file at path; h is
// the entry this binary would install (zero Hook: recognise by name only).
func Uninstall(path string, h Hook, opt Options) (Result, error) {
	return apply(path, opt, true, func(doc *Object) ([]string, error) { return uninstallHook(doc, h) })
}

// loaded is a settings file as read: its real path, bytes, mode and document.
type loaded struct {
	path   string
	exists bool
	data   []byte
	perm   fs.FileMode
	doc    *Object
}

// load reads and parses the settings file; a missing file is an empty document.
func load(path string) (loaded, error) {
	l := loaded{path: path, perm: newFilePerm, doc: &Object{}}
	if real, err := filepath.EvalSymlinks(path); err == nil {
		l.path = real
	}
	fi, err := os.Stat(l.path)
	if errors.Is(err, fs.ErrNotExist) {
		return l, nil
	}
	if err != nil {
		return l, fmt.Errorf("read settings %s: %w", path, err)
	}
	if l.data, err = os.ReadFile(l.path); err != nil {
		return l, fmt.Errorf("read settings %s: %w", path, err)
	}
	l.exists, l.perm = true, fi.Mode().Perm()
	doc, err := Parse(l.data)
	if errors.Is(err, errNotObject) {
		return l, fmt.Errorf("settings %s: %w: %v", path, ErrUnexpectedShape, err)
	}
	if err != nil {
		return l, fmt.Errorf("settings %s: %w: %v", path, ErrInvalidJSON, err)
	}
	l.doc = doc
	return l, nil
}

// BackupPath is where the one backup of the settings file at path lives.
func BackupPath(path string) string { return path + ".story-automator.bak" }

func apply(path string, opt Options, undo bool, edit func(*Object) ([]string, error)) (Result, error) {
	l, err := load(path)
	if err != nil {
		return Result{Path: l.path}, err
	}
	before := Encode(l.doc)
	actions, err := edit(l.doc)
	if err != nil {
		return Result{Path: l.path}, fmt.Errorf("settings %s: %w", path, err)
	}
	after := EncodeIndent(l.doc, DetectIndent(l.data))
	res := Result{Path: l.path, Actions: actions, Content: after}
	// Compared as re-encoded documents, so a file already holding our entry is
	// left byte-for-byte alone whatever its formatting.
	res.Changed = !bytes.Equal(before, Encode(l.doc))
	if !res.Changed {
		res.Actions = nil
	}
	if !res.Changed || opt.DryRun {
		res.Created = res.Changed && !l.exists
		return res, nil
	}
	if undo {
		if done, err := undoInstall(&l, &res); done || err != nil {
			return res, err
		}
	}
	if err := write(&l, after, &res); err != nil {
		return res, err
	}
	return res, nil
}

// undoInstall makes an uninstall a true round trip: when the backup install
// made holds the same document as the file after the uninstall, the backup's
// own bytes (indentation, spacing, everything) go back and the backup goes;
// when install created the file and nothing else is left in it, the file
// goes. done = false: the caller writes the re-encoded document instead.
func undoInstall(l *loaded, res *Result) (done bool, err error) {
	backup := BackupPath(l.path)
	if old, err := os.ReadFile(backup); err == nil {
		doc, perr := Parse(old)
		if perr != nil || !bytes.Equal(Encode(doc), Encode(l.doc)) {
			return false, nil //nolint:nilerr // a backup that no longer matches is not ours to restore: nothing undone
		}
		if err := checkUnchanged(l); err != nil {
			return true, err
		}
		res.Content, res.Restored, res.Backup = old, true, ""
		if err := atomicfile.Write(l.path, old, l.perm); err != nil {
			return true, err
		}
		return true, os.Remove(backup)
	}
	if len(l.doc.Members) > 0 {
		return false, nil
	}
	if err := checkUnchanged(l); err != nil {
		return true, err
	}
	res.Removed, res.Content = true, nil
	return true, os.Remove(l.path)
}

// checkUnchanged refuses to write when someone changed the file since it was read.
func checkUnchanged(l *loaded) error {
	current, err := os.ReadFile(l.path)
	switch {
	case l.exists && (err != nil || !bytes.Equal(current, l.data)):
		return fmt.Errorf("settings %s: %w", l.path, ErrChanged)
	case !l.exists && err == nil:
		return fmt.Errorf("settings %s: %w", l.path, ErrChanged)
	}
	return nil
}

// write backs up the old content, then replaces the file atomically, unless
// someone changed it since it was read.
func write(l *loaded, content []byte, res *Result) error {
	if err := checkUnchanged(l); err != nil {
		return err
	}
	if l.exists {
		backup, err := writeBackup(l.path, l.data)
		if err != nil {
			return err
		}
		res.Backup = backup
	} else {
		if err := atomicfile.EnsureDir(filepath.Dir(l.path), newDirPerm); err != nil {
			return err
		}
		res.Created = true
	}
	return atomicfile.Write(l.path, content, l.perm)
}

// writeBackup saves data as the file's one backup (BackupPath), replacing an
// older one, and returns the backup's path.
func writeBackup(path string, data []byte) (string, error) {
	name := BackupPath(path)
	if err := atomicfile.Write(name, data, backupPerm); err != nil {
		return "", fmt.Errorf("back up settings: %w", err)
	}
	return name, nil
}
