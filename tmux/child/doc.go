// Package child starts and describes child agent sessions: their names, the
// agent profiles that build their commands, their environment, and the
// runner that tmux executes in each pane to run the agent on its own pty.
package child
