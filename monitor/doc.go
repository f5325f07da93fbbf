// Package monitor waits for a child agent session to reach a final state and verifies its completion.
package monitor
