//go:build !linux && !darwin && !freebsd

package wake

// Without inotify, pidfds or kqueue every watch falls back to the Waker's
// once-a-second tick.
const fileClosesWake = false

type kernel struct{}

func newKernel(wake func()) *kernel { return &kernel{} }

func (k *kernel) dir(dir string, names []string) error { return errNoKernel }

func (k *kernel) file(path string) error { return errNoKernel }

func (k *kernel) process(pid int) error { return errNoKernel }

func (k *kernel) close() {}
