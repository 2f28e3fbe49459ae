# rtload — make help lists the targets.
GO       ?= go
BIN      ?= bin/rtload
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
STATICCHECK_VERSION ?= v0.8.2
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

## bench: benchmarks (per-call overhead rtload adds around a recv call, clocks, recorders)
bench:
	$(GO) test -run '^$$' -bench . -benchmem -count=1 ./...

## lint: gofmt, go vet, staticcheck
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## fuzz: a short bounded run of the scenario parser fuzzer
fuzz:
	$(GO) test ./scenario -run '^$$' -fuzz FuzzLoad -fuzztime 30s

## cross: vet for arm64 so the non-TSC fallback keeps compiling
cross:
	GOARCH=arm64 $(GO) vet ./...

## clean: remove bin/ and results/
clean:
	rm -rf bin results
