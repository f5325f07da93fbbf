//go:build !linux

package memtrim

// Trim does nothing where the kernel's interfaces are not known.
func Trim() int { return 0 }

// TrimExecutable does nothing where the kernel's interfaces are not known.
func TrimExecutable() int { return 0 }
