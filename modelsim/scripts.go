package modelsim

import _ "embed"

// BuildAutoScript acts out BMAD 6.12's worker skill, bmad-build-auto,
// through a real CLI on a project the real installer made: the CLI loads
// the installed skill, runs its renderer under uv, reads the workflow.md it
// printed, then writes the spec (draft → in-progress → done), code and a
// test, and commits (scripts/build-auto.yaml says how).
//
//go:embed scripts/build-auto.yaml
var BuildAutoScript string

// RetroScript acts out BMAD 6.12's headless retrospective,
// bmad-retrospective -H EPIC, through a real CLI on a project the real
// installer made: the CLI loads the installed skill, runs its customization
// resolver under uv, reads the config and the board, and writes the
// retrospective's document with its verdict and action items, leaving the
// board to the run (scripts/retrospective.yaml says how).
//
//go:embed scripts/retrospective.yaml
var RetroScript string
