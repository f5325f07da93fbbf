package confine

import "os"

// bwrapArgs is bubblewrap's argv (after the program) for p, resolved, then
// argv. Mount order matters, later mounts win: the whole filesystem
// read-only, a private /tmp, the writable folders, the private copies over
// folders, the read-only paths in them, then the hidden paths
// (a hidden path inside a writable folder stays hidden).
func bwrapArgs(p Policy, argv []string) []string {
	var args []string
	if p.Nests {
		// The command confines what it runs in a bubblewrap of its own (an
		// agent CLI's sandbox), which needs what this one would take away:
		// root's capabilities (bubblewrap keeps them for root; without them
		// it cannot set up its user namespace's uid map) and a fully
		// visible /proc (bubblewrap's own has parts mounted read-only over
		// it, under which the kernel refuses a new one). So the command
		// itself keeps both; what it runs in its own sandbox has neither
		// (a namespace of its own, where our mounts are locked).
		args = append(args, "--ro-bind", "/", "/", "--dev", "/dev", "--bind", "/proc", "/proc")
	} else {
		// No capabilities, also when this runs as root: with CAP_SYS_ADMIN
		// the command could unmount what hides a path or remount a folder
		// writable.
		args = append(args, "--cap-drop", "ALL", "--ro-bind", "/", "/", "--dev", "/dev")
		// A pid namespace of its own with a /proc of its own: the command
		// sees no other process (nor its environment), /proc/sys stays
		// read-only, /proc can be mounted also when this process already
		// runs inside another bubblewrap (an agent CLI's sandbox), and
		// everything the command started ends with it.
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
	for _, m := range p.Over {
		args = append(args, "--bind", m.Src, m.Dst)
	}
	for _, r := range p.ReadOnly {
		args = append(args, "--ro-bind", r, r)
	}
	for _, b := range p.binds {
		args = append(args, "--ro-bind", b[0], b[1])
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
