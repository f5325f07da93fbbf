// Package orchestrator runs a story-automation run: it drives every selected story through the workflow's steps.
//
// It holds the run's logic (plan, engine, units, state document, journal,
// policy) and the interfaces of what it drives (model.go); the adapters live
// beside it: bmad (the BMAD files), tmuxsteps (a child session per step),
// gitvcs (git and worktrees), and wire builds them for a real run.
package orchestrator
