# rtload — make help lists the targets.
GO       ?= go
BIN      ?= bin/rtload
VERSION  ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)
LDFLAGS  := -X main.version=$(VERSION)
STATICCHECK_VERSION ?= v0.8.2
# Extra flags for benchrun (e.g. BENCHFLAGS='-label "preliminary, under load"' or '-only wakeup')
# and for `make bench-wakesplit` (e.g. WAKESPLITFLAGS=-spin).
BENCHFLAGS ?=
WAKESPLITFLAGS ?=
# `make bench-verdicts`: extra flags for bin/verdicts bench (e.g.
# VERDICTSFLAGS='-aa-default 20', '-dir /var/tmp/v', '-from DIR' to
# render again), and VERDICTS_QUICK=1 for its quick mode (not a measurement).
VERDICTSFLAGS ?=
VERDICTS_QUICK ?=
# `make bench-drift`: extra flags for bin/drift (e.g. DRIFTFLAGS='-duration 40m',
# '-dir /var/tmp/d', '-from DIR' to render again).
DRIFTFLAGS ?=
# Time per fuzz target for `make fuzz` (and the budget to minimise a new input).
FUZZTIME    ?= 15s
FUZZMINTIME ?= 2s
# Scenario and flags for `make run`.
SCENARIO ?=
RUNFLAGS ?=
# `make image`: the image's name (tagged :latest and :$(VERSION)), the tool
# that builds it (podman, else docker), its build context, and extra flags
# for the build (e.g. IMAGE_BUILD_FLAGS=--layers=false: no cached layers).
IMAGE       ?= localhost/rtload
IMAGE_TOOL  ?= $(shell command -v podman || command -v docker)
IMAGE_CTX   ?= bin/image
IMAGE_BUILD_FLAGS ?=

.PHONY: help build run image test test-fast test-rt test-system test-setup bench bench-quick bench-fidelity bench-wakesplit bench-verdicts bench-drift bench-tools bench-bin lint docs man fuzz cross clean

## help: list the targets
help:
	@sed -n 's/^## //p' $(MAKEFILE_LIST) | awk '{ i = index($$0, ": "); printf "%-16s %s\n", substr($$0, 1, i - 1), substr($$0, i + 2) }'

## build: build bin/rtload (version from git), statically linked
# CGO_ENABLED=0: rtload needs no C (net's cgo resolver is its only cgo), and
# without it threads are the Go runtime's own, not pthreads with an 8 MiB
# stack and a 64 MiB malloc arena each: under ulimit -v a run needs about
# 1.3 GiB instead of 2.4 GiB (engine.CheckAddressSpace), and the binary
# runs on any host of the fleet whatever its glibc.
build:
	CGO_ENABLED=0 $(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/rtload

## run: run the default scenario (seed 000, laight-450; needs root for SCHED_FIFO) and print its table
run: build
	./$(BIN) run $(SCENARIO) $(RUNFLAGS)

## image: the FROM-scratch image from a static binary built here (podman, or docker): no registry needed; labels carry the version
image:
	@test -n "$(IMAGE_TOOL)" || { echo "make image: neither podman nor docker found (apt-get install podman)"; exit 1; }
	rm -rf $(IMAGE_CTX)
	sh deploy/rootfs.sh $(IMAGE_CTX)/rootfs $(VERSION)
	$(IMAGE_TOOL) build $(IMAGE_BUILD_FLAGS) -f deploy/Containerfile.prebuilt --build-arg VERSION=$(VERSION) \
		-t $(IMAGE):latest -t $(IMAGE):$(VERSION) $(IMAGE_CTX)
	rm -rf $(IMAGE_CTX)

# Tests come in three tiers (internal/testutil/tier.go), each a target:
#   fast:     every test that needs no root, no real-time thread and no
#             system service (go test -short: the others skip, and so do
#             the few long fast tests, testutil.Long). Any user, < 1 min.
#   realtime: the privileged packages' tests (testutil.Root, Cap,
#             DevNetTun, RealTime). Every one of them runs holding one
#             machine-wide lock (testutil.RealTimeLock), so no two ever
#             share CPU 1, and the packages run one at a time (-p 1).
#   system:   podman, the real-SSH fleet and the real-verdict check tests
#             (testutil.System), under the same lock when they declare a
#             realtime requirement too (root); System alone takes none.
# RTLOAD_TEST_TIERS narrows a run to some tiers; a test of another tier
# skips with a reason starting "tier:", which testsum counts apart.
TESTSUM  ?= .testsum
CSSWITCH  = ClocksourceSwitch
# Pure computations (simulations, decompression bombs, renderings: no
# goroutine of their own) that the race detector slows 10-30x and has
# nothing to find in (TestEntryRuleSimulation: 88 s under it on a busy
# run, 2.9 s without): make test runs them in its no-race stage (a busy
# run's fast stage took 17.5 min with them under -race, 8 of it these).
RACE_PURE = ^(TestEntryRuleSimulation|TestAdjustedVerdict|TestPocockZ|TestSessionsCoverage|TestSequentialFalseAlarm|TestCheckLooks|TestCheckTail|TestRender|TestLoadStreamsWakeupLogs|TestWakeupGzipBomb|TestSummaryDecodeBomb|TestDirStreamsSpikes|TestLoadThinsWhileReading|TestLoadRefusesHugeHistogram)$$
# The packages holding realtime and system tests, found by what their
# tests declare.
RT_PKGS  = $(shell grep -rlE --include='*_test.go' 'testutil\.(Root|Cap|DevNetTun|RealTime)' . | xargs -n1 dirname | sort -u)
SYS_PKGS = $(shell grep -rl --include='*_test.go' 'testutil\.System' . | xargs -n1 dirname | sort -u)
FASTFLAGS ?=
# The research harness, bench/, is a module of its own (bench/go.mod,
# replacing the product with ../): the product's go test, vet and list
# ./... are the product only. Its tools and tests are built and run with
# $(BENCHGO), in bench/, so that a change of the product that breaks them
# still fails make test-fast, make lint and make test.
BENCHGO   = $(GO) -C bench

## test-fast: the fast tier: every test that needs no root, no real-time thread and no system service (go test -short, no race detector; FASTFLAGS=-race adds it), then the bench module's tests; any user, under a minute
test-fast:
	$(GO) test -short -count=1 $(FASTFLAGS) ./...
	$(BENCHGO) test -short -count=1 $(FASTFLAGS) ./...

## test-rt: the real-time tier: the privileged packages' tests, one real-time test at a time (root)
test-rt:
	RTLOAD_TEST_TIERS=realtime $(GO) test -count=1 -p 1 -timeout 15m $(RT_PKGS)

## test-system: the system tier: podman, the real-SSH fleet, the real-verdict check tests (root; installs their Debian packages)
test-system: test-setup
	RTLOAD_TEST_TIERS=system $(GO) test -count=1 -p 1 -timeout 20m $(SYS_PKGS)

## test-setup: install what the tiers need (root and apt-get: ansible-core, openssh-server, openssh-client, sudo, podman, runc); otherwise say which tests will skip and why
test-setup:
	@sh .ci/setup-tests

# make test runs every stage even when one fails, each reported as it
# runs, then a summary (bin/testsum): every stage, pass or fail, every
# skipped test with its reason (tier skips counted apart), and the 10
# slowest tests. The fast tier runs whole (its long tests too) under the
# race detector but for RACE_PURE, which the last stage runs without it;
# the real-time and system tiers under it too, one
# real-time test at a time; the two tests that switch the kernel's
# clocksource alone after them (a switch marks every trial running beside
# it invalid, theirs or not).
## test: every tier, each a stage even when one fails (the fast tier with its long tests, real-time, clocksource switches, system, all under the race detector but for the pure computations of RACE_PURE; those, allocation and memory bounds without it; one iteration of every benchmark; the bench module's tests and benchmarks); installs the Debian packages the system tier needs (test-setup); a summary of each stage, every skipped test with its reason and the 10 slowest tests; non-zero if any stage failed
test:
	@rm -rf $(TESTSUM) && mkdir -p bin $(TESTSUM) && $(GO) build -o bin/testsum ./internal/testsum
	@sh .ci/setup-tests $(TESTSUM)/setup.txt
	-RTLOAD_TEST_TIERS=fast $(GO) test -race -count=1 -timeout 10m -json -skip '$(RACE_PURE)' ./... | ./bin/testsum -dir $(TESTSUM) -stage "fast tier, race"
	-RTLOAD_TEST_TIERS=realtime $(GO) test -race -count=1 -p 1 -timeout 15m -json -skip '$(CSSWITCH)' $(RT_PKGS) | ./bin/testsum -dir $(TESTSUM) -stage "real-time tier, race"
	-RTLOAD_TEST_TIERS=realtime $(GO) test -race -count=1 -timeout 5m -json -run '$(CSSWITCH)' ./sysinfo ./engine | ./bin/testsum -dir $(TESTSUM) -stage "clocksource switches, race"
	-RTLOAD_TEST_TIERS=system $(GO) test -race -count=1 -p 1 -timeout 20m -json $(SYS_PKGS) | ./bin/testsum -dir $(TESTSUM) -stage "system tier, race"
	-$(GO) test -count=1 -timeout 5m -json -run 'Alloc|SoakMemory|^TestSoak$$|$(RACE_PURE)' ./... | ./bin/testsum -dir $(TESTSUM) -stage "allocations, memory bounds and pure computations, no race detector"
	-$(GO) test -count=1 -timeout 5m -json -run '^$$' -bench . -benchtime=1x ./... | ./bin/testsum -dir $(TESTSUM) -stage "benchmarks, one iteration each"
	-$(BENCHGO) test -race -count=1 -timeout 10m -json -bench . -benchtime=1x ./... | ./bin/testsum -dir $(TESTSUM) -stage "bench module: its tests and benchmarks (one iteration each), race"
	@./bin/testsum -dir $(TESTSUM) -summary

## bench: rtload's drain vs the C loop in one process (ABBA blocks), cyclictest in A/B pairs until the ratios' 95% CIs are ±3% (or capped), the wakeup split, overhead, sender, scale, methods (root, < 15 min) -> BENCHMARKS.md
bench: build bench-tools
	timeout 900 ./bin/benchrun -rtload $(BIN) -drain bin/drain450 -fidelity bin/fidelity -wakesplit bin/wakesplit -out BENCHMARKS.md $(BENCHFLAGS)

## bench-quick: the same comparisons with short caps (~3 min), written to bench/BENCHMARKS-quick.md
bench-quick: build bench-tools
	timeout 600 ./bin/benchrun -quick -rtload $(BIN) -drain bin/drain450 -fidelity bin/fidelity -wakesplit bin/wakesplit -out bench/BENCHMARKS-quick.md $(BENCHFLAGS)

## bench-fidelity: section 1 alone, rtload's drain vs the C loop in one process, quiet and spin (root, ~4.5 min) -> bench/BENCHMARKS-fidelity.md
bench-fidelity: build bench-tools
	timeout 600 ./bin/benchrun -only fidelity -fidelity bin/fidelity -out bench/BENCHMARKS-fidelity.md $(BENCHFLAGS)

## bench-wakesplit: trace cyclictest and rtload timer-only (tracefs) and print where each wakeup's time goes (root, ~1 min)
bench-wakesplit: build bench-tools
	./bin/wakesplit compare -rtload $(BIN) -drain bin/drain450 -pairs 2 -seconds 10 $(WAKESPLITFLAGS)

## bench-verdicts: issue 24's verdicts, true sizes first, then A/A (20 checks, and 10 on the default baseline), power (10 + 10), interleaved (root, quiet machine, 3-4.5 h: 50 checks of up to the 5 min default budget each; not part of make bench; VERDICTS_QUICK=1 is a 3 min smoke test, not a measurement, -> bench/VERDICTS-quick.md) -> bench/VERDICTS.md
bench-verdicts: build bench-bin
	VERDICTS_QUICK=$(VERDICTS_QUICK) ./bin/verdicts bench -rtload $(BIN) -interleave bin/interleave $(VERDICTSFLAGS)

## bench-drift: issue 31's drift controls under a changing load: bench/drift-450.yaml for 36 min with 1 s interval records while busy loops start and stop; log-SD of 60 s means raw, ÷ and regression-adjusted on each control, β and r (root, ~37 min; DRIFTFLAGS='-from DIR' renders again) -> bench/DRIFT.md
bench-drift: build bench-bin
	./bin/drift -rtload $(BIN) $(DRIFTFLAGS)

# bench-tools: the C baseline, the bench module's commands, cyclictest.
bench-tools: bench-bin
	mkdir -p bin && gcc -O2 -Wall -Wextra -pthread -o bin/drain450 bench/drain450.c
	command -v cyclictest >/dev/null || { apt-get update && apt-get install -y rt-tests; }

## bench-bin: build the bench module's commands into bin/ (benchrun, fidelity, wakesplit, interleave, verdicts, drift, seccompcost); they run from the repository's root, as make bench runs them
# fidelity is cgo (drain450's loop and rtload's drain in one process; bench
# only, never part of bin/rtload). The commands take paths relative to the
# repository (bench/*.yaml, bin/rtload) and benchrun runs go test -bench on
# the product's packages: run them from here, not from bench/.
bench-bin:
	mkdir -p bin && CGO_ENABLED=1 $(BENCHGO) build -o ../bin/ ./cmd/...

## lint: gofmt, go vet, staticcheck (the product, then the bench module)
lint:
	@test -z "$$(gofmt -l .)" || { echo "gofmt needed:"; gofmt -l .; exit 1; }
	$(GO) vet ./...
	$(GO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...
	$(BENCHGO) vet ./...
	$(BENCHGO) run honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION) ./...

## docs: regenerate every generated doc: docs/cli/*.md and docs/man/*.1 from the cobra commands, docs/scenario.md from scenario.Reference (CI fails when they are stale)
# The generators are the staleness tests themselves (TestDocsCLI in
# cmd/rtload, TestDocsScenario in internal/docgen), run with -update-docs:
# what CI compares is exactly what this writes.
docs:
	$(GO) test -count=1 -run '^TestDocs(CLI|Scenario)$$' ./cmd/rtload ./internal/docgen -args -update-docs=all

## man: regenerate the man pages docs/man/*.1 (man ./docs/man/rtload-run.1)
man:
	$(GO) test -count=1 -run '^TestDocsCLI$$' ./cmd/rtload -args -update-docs=man

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
	GOARCH=arm64 $(BENCHGO) vet ./...

## clean: remove bin/, make test's stage records (.testsum) and rtload-results/ (the default results directories of runs made here: rtload-results/<scenario>-<time>/)
clean:
	rm -rf bin $(TESTSUM) rtload-results
