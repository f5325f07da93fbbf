GO      ?= go
# urfave_cli_no_docs drops the man/markdown generators (and their init cost) from the binary.
TAGS    := urfave_cli_no_docs
BIN     := bin/story-automator
PKGS    := ./...

.PHONY: build test bench demo demo-hook lint fuzz chaos clean

build:
	$(GO) build -tags $(TAGS) -o $(BIN) ./cmd/story-automator

test:
	$(GO) vet $(PKGS)
	$(GO) test -tags $(TAGS) -race -count=1 -timeout 25m $(PKGS)

# Benchmarks named by the issues; figures go into docs/benchmarks.md.
bench: build
	$(GO) test -tags $(TAGS) -run '^$$' -bench . -benchtime 1x -count 1 -timeout 30m $(PKGS)

# The full run: the sample BMAD project, end to end with the simulated agent in tmux.
demo: build
	./scripts/demo.sh

# The marker and Stop hook on their own.
demo-hook: build
	./scripts/demo-hook.sh

# Kill-and-resume rounds against the built binary, a private tmux server per
# round, plus hostile rounds; not part of test. Reproducible with CHAOS_SEED.
CHAOS_SEED   ?= 1
CHAOS_ROUNDS ?= 20
CHAOS_MODE   ?= mixed
chaos:
	CHAOS_SEED=$(CHAOS_SEED) CHAOS_ROUNDS=$(CHAOS_ROUNDS) CHAOS_MODE=$(CHAOS_MODE) \
		$(GO) test -tags '$(TAGS) chaos' -count=1 -timeout 180m -run '^TestChaos$$' -v ./internal/chaos

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

# Each fuzz target in turn (go test -fuzz takes one target per run).
FUZZ_TARGETS := stophook:FuzzDecodeInput stophook:FuzzAnalyzeResponse stophook:FuzzParseLoopFile \
	stophook:FuzzScanControl marker:FuzzDecode stophook/settings:FuzzParse
FUZZTIME ?= 20s

fuzz:
	@for t in $(FUZZ_TARGETS); do \
		pkg=$${t%%:*}; fn=$${t##*:}; \
		echo "== $$fn ($$pkg)"; \
		$(GO) test -run '^$$' -fuzz "^$$fn\$$" -fuzztime $(FUZZTIME) ./$$pkg || exit 1; \
	done

clean:
	rm -rf bin
