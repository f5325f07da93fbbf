// Package lint pins the linter `make lint` builds (golangci-lint) in a module
// of its own, so its dependencies never enter the product's go.mod.
package lint
