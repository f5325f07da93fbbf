// Package tmux is the only code that runs tmux: one exec entry point, exact targets, typed errors.
package tmux
