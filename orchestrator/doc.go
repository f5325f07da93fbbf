// Package orchestrator runs a story-automation run: it drives every selected story through the workflow's steps.
package orchestrator
