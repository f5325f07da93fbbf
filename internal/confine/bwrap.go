package confine

import "os"

// bwrapArgs is bubblewrap's argv (after the program) for p, resolved, then
// argv. Mount order matters, later mounts win: the whole filesystem
// read-only, a private /tmp, the writable folders, then the hidden paths
// (a hidden path inside a writable folder stays hidden).
func bwrapArgs(p Policy, argv []string) []string {
	args := []string{"--ro-bind", "/", "/", "--dev", "/dev"}
	if p.Nests {
		// bubblewrap's own /proc has parts mounted read-only over it,
		// under which a nested bubblewrap may not mount one.
		args = append(args, "--bind", "/proc", "/proc")
	} else {
		// A pid namespace of its own lets /proc be mounted also when this
		// process already runs inside another bubblewrap (an agent CLI's
		// sandbox), and ends everything the command started with it.
		args = append(args, "--unshare-pid", "--proc", "/proc")
	}
	args = append(args, "--die-with-parent",
		// No controlling terminal to push keystrokes into (TIOCSTI).
		"--new-session")
	if !p.Network {
		args = append(args, "--unshare-net")
	}
	if p.TmpDir != "" {
		args = append(args, "--bind", p.TmpDir, "/tmp")
	} else {
		args = append(args, "--tmpfs", "/tmp")
	}
	args = append(args, "--setenv", "TMPDIR", "/tmp")
	for _, w := range p.Writable {
		args = append(args, "--bind", w, w)
	}
	for _, d := range p.ReadDeny {
		if fi, err := os.Stat(d); err == nil && fi.IsDir() {
			args = append(args, "--tmpfs", d, "--remount-ro", d)
		} else {
			// /dev/null itself: a plain bind is mounted nodev, and
			// opening a device there is refused. It reads empty; a
			// write to it goes nowhere.
			args = append(args, "--dev-bind", os.DevNull, d)
		}
	}
	return append(append(args, "--"), argv...)
}
