GO      ?= go
# urfave_cli_no_docs drops the man/markdown generators (and their init cost) from the binary.
TAGS    := urfave_cli_no_docs
BIN     := bin/story-automator
HOOK_BIN := bin/story-automator-hook
# Two programs, installed side by side: the main binary (every command) and
# the Stop hook's own small program, which starts faster on every stop of
# every agent session (hooks install points at it when it sits beside the
# main binary).
CMDS    := ./cmd/story-automator ./cmd/story-automator-hook
PKGS    := ./...

# How the binary users run is built, in one place for every target that
# builds it (build, bench; install and dist reuse them): static (no cgo, so
# no dynamic loader at every start: ~0.7 ms of each Stop-hook call), without
# the docs generators, without symbol tables (a smaller file to map).
# internal/testing/testbin builds the end-to-end tests' binary the same way.
# --version comes from the build info: the module version of a
# `go install …@vX` build, the git revision of a build from a clone.
BUILD_ENV   := CGO_ENABLED=0
BUILD_FLAGS := -tags $(TAGS) -trimpath -ldflags '-s -w'
# make dist: every system and architecture the README says is supported.
DIST_TARGETS := linux/amd64 linux/arm64 darwin/amd64 darwin/arm64
PREFIX      ?= $(shell $(GO) env GOPATH)

.PHONY: build install dist test test-short bench demo demo-real demo-hook lint fuzz chaos clean

build:
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -o $(BIN) ./cmd/story-automator
	$(BUILD_ENV) $(GO) build $(BUILD_FLAGS) -o $(HOOK_BIN) ./cmd/story-automator-hook

# Installs into $(PREFIX)/bin ($$GOPATH/bin, where `go install` puts it too).
install:
	$(BUILD_ENV) GOBIN=$(PREFIX)/bin $(GO) install $(BUILD_FLAGS) $(CMDS)
	@echo "installed $(PREFIX)/bin/story-automator and story-automator-hook"

# Static binaries for every supported target, cross-built from this machine,
# with SHA-256 checksums: dist/story-automator-<os>-<arch> and
# dist/story-automator-hook-<os>-<arch> (rename it to story-automator-hook
# beside story-automator when installing),
# dist/SHA256SUMS. `story-automator hosts install NAME --from dist` copies the
# right ones to an ssh host.
dist:
	rm -rf dist && mkdir -p dist
	@for t in $(DIST_TARGETS); do \
		os=$${t%/*}; arch=$${t#*/}; \
		echo "== $$os/$$arch"; \
		$(BUILD_ENV) GOOS=$$os GOARCH=$$arch $(GO) build $(BUILD_FLAGS) -o dist/story-automator-$$os-$$arch ./cmd/story-automator || exit 1; \
		$(BUILD_ENV) GOOS=$$os GOARCH=$$arch $(GO) build $(BUILD_FLAGS) -o dist/story-automator-hook-$$os-$$arch ./cmd/story-automator-hook || exit 1; \
	done
	cd dist && sha256sum story-automator-* > SHA256SUMS && cat SHA256SUMS

# Everything CI runs. Tests that wait on tmux, git, the simulated or a real
# agent run side by side (t.Parallel); TEST_PARALLEL is how many at once in
# a package, above the default (one per core) because they mostly wait.
TEST_PARALLEL ?= 4
test:
	$(GO) vet $(PKGS)
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 60m -parallel $(TEST_PARALLEL) $(PKGS)

# The unit tests alone, for the inner loop: under -short every test that
# starts tmux, builds or runs the binary, or runs a real agent skips itself
# (internal/testtier). make test runs them all.
test-short:
	$(GO) test -tags $(TAGS) -short $(PKGS)

# Every benchmark, then the headline figures as a table with the machine and
# date; docs/benchmarks.md keeps them. Includes a 200-story run (about a
# minute; STORY_AUTOMATOR_BENCH_LARGE=0 skips it); BENCH=REGEXP picks
# benchmarks; STORY_AUTOMATOR_BENCH_COMPARE=BINARY measures an older build
# beside this one; STORY_AUTOMATOR_PYTHON_TOOL adds the Python tool's hook.
bench: build
	GO=$(GO) TAGS=$(TAGS) ./scripts/bench.sh

# docs/commands.md from the command tree (a test fails when it drifts).
.PHONY: docs
docs:
	$(GO) test -tags $(TAGS) -count=1 -run '^TestCommandReference$$' ./cmd/story-automator -update

# The full run: the sample BMAD project, end to end with the simulated agent in tmux.
demo: build
	./scripts/demo.sh

# The demo run with the real Claude Code (DEMO_AGENT=codex|gemini for the
# others), offline against model-sim; installs the pinned CLI when missing.
demo-real: build
	./scripts/demo-real.sh

# The marker and Stop hook on their own.
demo-hook: build
	./scripts/demo-hook.sh

# Kill-and-resume rounds against the built binary, a private tmux server per
# round, plus hostile rounds (CHAOS_ONLY=name: only that one of them, e.g.
# limits-and-dropped-streams); not part of test. Reproducible with CHAOS_SEED.
CHAOS_SEED   ?= 1
CHAOS_ROUNDS ?= 20
CHAOS_MODE   ?= mixed
CHAOS_ONLY   ?=
chaos:
	CHAOS_SEED=$(CHAOS_SEED) CHAOS_ROUNDS=$(CHAOS_ROUNDS) CHAOS_MODE=$(CHAOS_MODE) CHAOS_ONLY=$(CHAOS_ONLY) \
		$(GO) test -tags '$(TAGS) chaos' -count=1 -timeout 180m -run '^TestChaos$$' -v ./internal/testing/chaos

# golangci-lint, at the version tools/lint/go.mod pins (a module of its own,
# so its dependencies stay out of ours), built once into bin/.
GOLANGCI := bin/golangci-lint
$(GOLANGCI): tools/lint/go.mod tools/lint/go.sum
	$(GO) -C tools/lint build -o $(CURDIR)/$(GOLANGCI) github.com/golangci/golangci-lint/v2/cmd/golangci-lint

# gofmt, go.mod tidy, golangci-lint (.golangci.yml: vet, staticcheck,
# errcheck, unused, gosec and more), and the macOS build.
lint: $(GOLANGCI)
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) mod tidy -diff
	$(GO) -C tools/lint mod tidy -diff
	$(GOLANGCI) run ./...
	# macOS: the module must cross-build and vet (tests included) for darwin.
	GOOS=darwin GOARCH=arm64 $(GO) build -tags $(TAGS) $(PKGS)
	GOOS=darwin GOARCH=arm64 $(GO) vet -tags $(TAGS) $(PKGS)

# Each fuzz target in turn (go test -fuzz takes one target per run).
FUZZ_TARGETS := stophook:FuzzDecodeInput stophook:FuzzAnalyzeResponse stophook:FuzzParseLoopFile \
	stophook:FuzzScanControl stophook:FuzzFixPlanParsers stophook:FuzzDecodeInputAgainstGenericJSON \
	marker:FuzzDecode hooks:FuzzParse internal/tomledit:FuzzEditsAgainstGoTOML workflows:FuzzDeferredWorkAppend
FUZZTIME ?= 20s

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg || exit 1; \
	done

clean:
	rm -rf bin dist
