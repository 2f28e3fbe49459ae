# rtload — make help lists the targets.
GO       ?= go
BIN      ?= bin/rtload
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
STATICCHECK_VERSION ?= v0.8.2
# Time per fuzz target for `make fuzz` (and the budget to minimise a new input).
FUZZTIME    ?= 15s
FUZZMINTIME ?= 2s
# Scenario and flags for `make run`.
SCENARIO ?=
RUNFLAGS ?=

.PHONY: help build run test bench lint fuzz cross clean

## help: list the targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | column -t -s ':'

## build: build bin/rtload (version from git)
build:
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rtload

## run: run the default scenario (seed 000, laight-450; needs root for SCHED_FIFO) and print its table
run: build
	./$(BIN) run $(SCENARIO) $(RUNFLAGS)

## test: all tests with the race detector, then one iteration of every benchmark
test:
	$(GO) test -race -count=1 -timeout 8m ./...
	$(GO) test -run '^$$' -bench . -benchtime=1x ./...

## bench: rtload vs a C drain, cyclictest and its own tick machinery; sender, scale, methods (root, ~4-6 min) -> BENCHMARKS.md
bench: build
	mkdir -p bin && gcc -O2 -Wall -Wextra -pthread -o bin/drain450 bench/drain450.c
	command -v cyclictest >/dev/null || { apt-get update && apt-get install -y rt-tests; }
	timeout 900 $(GO) run ./bench/cmd/benchrun -rtload $(BIN) -drain bin/drain450 -out BENCHMARKS.md

## bench-quick: the same comparisons with shorter runs (~3 min), written to bench/BENCHMARKS-quick.md
bench-quick: build
	mkdir -p bin && gcc -O2 -Wall -Wextra -pthread -o bin/drain450 bench/drain450.c
	command -v cyclictest >/dev/null || { apt-get update && apt-get install -y rt-tests; }
	timeout 600 $(GO) run ./bench/cmd/benchrun -quick -rtload $(BIN) -drain bin/drain450 -out bench/BENCHMARKS-quick.md

## lint: gofmt, go vet, staticcheck
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## fuzz: every fuzz target in the module (each func Fuzz* in a _test.go), FUZZTIME each
fuzz:
	@set -e; for f in $$(grep -rl --include='*_test.go' '^func Fuzz' .); do \
		dir=./$$(dirname $${f#./}); \
		for t in $$(sed -n 's/^func \(Fuzz[A-Za-z0-9_]*\)(.*/\1/p' $$f); do \
			echo "== $$dir $$t ($(FUZZTIME))"; \
			$(GO) test $$dir -run '^$$' -fuzz "^$$t\$$" -fuzztime $(FUZZTIME) -fuzzminimizetime $(FUZZMINTIME); \
		done; \
	done

## cross: vet for arm64 so the non-TSC fallback keeps compiling
cross:
	GOARCH=arm64 $(GO) vet ./...

## clean: remove bin/ and the run directories under results/ (results/<scenario>-<YYYYMMDD-HHMMSS>; results/ itself is a package)
clean:
	rm -rf bin results/*-[0-9][0-9][0-9][0-9][0-9][0-9][0-9][0-9]-[0-9][0-9][0-9][0-9][0-9][0-9]
