GO      ?= go
# urfave_cli_no_docs drops the man/markdown generators (and their init cost) from the binary.
TAGS    := urfave_cli_no_docs
BIN     := bin/story-automator
PKGS    := ./...

.PHONY: build test bench demo demo-hook lint fuzz clean

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

lint:
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi
	$(GO) vet $(PKGS)

fuzz:
	$(GO) test -run '^$$' -fuzz FuzzDecodeInput -fuzztime 20s ./stophook
	$(GO) test -run '^$$' -fuzz FuzzDecode -fuzztime 20s ./marker
	$(GO) test -run '^$$' -fuzz FuzzParse -fuzztime 20s ./stophook/settings

clean:
	rm -rf bin
