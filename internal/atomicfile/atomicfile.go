// Package atomicfile writes files so that readers see the old content or the new, never a mix.
package atomicfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrSymlink is returned when the destination is a symbolic link; we never write through one.
var ErrSymlink = errors.New("refusing to write through a symlink")

// Write replaces path with data: a temp file in the same directory is written,
// fsynced, chmodded to perm and renamed over path, then the directory is fsynced.
func Write(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, true)
}

// Replace is Write without the fsyncs: other processes still see the old
// content or the new, never a mix, but a machine crash may lose the change.
// It is for files that describe live processes (a child session's state,
// its spawn spec), which a machine crash ends too: a fsync there would only
// make two hundred children ending at once queue on the disk.
func Replace(path string, data []byte, perm os.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm os.FileMode, durable bool) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return fmt.Errorf("write %s: %w", path, ErrSymlink)
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmpName := tmp.Name()
	ok := false
	defer func() {
		if !ok {
			tmp.Close()
			os.Remove(tmpName)
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := tmp.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if durable {
		if err := tmp.Sync(); err != nil {
			return fmt.Errorf("write %s: %w", path, err)
		}
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmpName, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	ok = true
	if !durable {
		return nil
	}
	return SyncDir(dir)
}

// SyncDir fsyncs a directory so a rename inside it survives a crash.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", dir, err)
	}
	return nil
}

// EnsureDir creates dir (and parents) with perm when it is missing.
func EnsureDir(dir string, perm os.FileMode) error {
	if err := os.MkdirAll(dir, perm); err != nil {
		return fmt.Errorf("create dir %s: %w", dir, err)
	}
	return nil
}

// RemoveStaleTemps deletes temp files that Write left next to path when its
// process was killed mid-write, if they are older than age. Errors are ignored:
// a leftover temp file is clutter, not damage.
func RemoveStaleTemps(path string, age time.Duration) {
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && time.Since(fi.ModTime()) > age {
			os.Remove(m)
		}
	}
}

// SweepTemps deletes the temp files Write left in dir when its process was
// killed mid-write: regular files named exactly ".<target>.tmp-<digits>"
// whose target owns accepts. The caller must know no writer of those targets
// is at work (it holds their lock), and owns must accept only targets the
// tool writes, so a user's file is never touched. It returns the paths removed.
func SweepTemps(dir string, owns func(target string) bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var removed []string
	for _, e := range entries {
		target, ok := TempTarget(e.Name())
		if !ok || !e.Type().IsRegular() || !owns(target) {
			continue
		}
		p := filepath.Join(dir, e.Name())
		if os.Remove(p) == nil {
			removed = append(removed, p)
		}
	}
	return removed
}

// TempTarget returns the file a temp file of Write stands for: "x.yaml" for
// ".x.yaml.tmp-123". ok is false for any other name.
func TempTarget(name string) (target string, ok bool) {
	rest, ok := strings.CutPrefix(name, ".")
	if !ok {
		return "", false
	}
	i := strings.LastIndex(rest, ".tmp-")
	if i <= 0 {
		return "", false
	}
	digits := rest[i+len(".tmp-"):]
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return "", false
	}
	return rest[:i], true
}
