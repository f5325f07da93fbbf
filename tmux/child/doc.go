// Package child starts and describes child agent sessions (names, commands built from the agent profiles, environment, the pane's runner).
package child
