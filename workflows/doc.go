// Package workflows knows the BMAD project layout, the story steps, their prompts and their verifiers.
package workflows
