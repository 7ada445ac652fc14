# The README's commands. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 10s
BENCHCOUNT ?= 5
BENCHTIME ?= 200ms
BENCH ?= .
# Each module is built and tested as a user gets it, with its own go.mod
# and replace directives: go.work (for developing the four together) would
# select one set of versions for all of them.
export GOWORK ?= off

.PHONY: test lane-tests lane-builds crosscheck nocgo vet-all fmt-check tidy-check vet vet32 api-check cross race stress allocs otel otel-demo bench bench-compare bench-lib fuzz cover

# Every platform the library supports: it must build and vet on each
# (tests run on this machine's).
TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64 windows/amd64

# step NAME CMD... runs CMD under a name: it says when the step starts,
# every 20 s while it runs (a cold module cache makes some steps long, and
# a silent step cannot be told from a hung one), and how it ended and how
# long it took.
STEP = sh -c 'name=$$1; shift; start=$$(date +%s); echo "==> $$name"; \
	( while :; do sleep 20 >/dev/null 2>&1; echo "    ... $$name: $$(( $$(date +%s) - start ))s"; done ) & t=$$!; \
	"$$@"; rc=$$?; kill $$t 2>/dev/null; \
	if [ $$rc = 0 ]; then r=ok; else r="FAILED ($$rc)"; fi; \
	echo "<== $$name: $$r in $$(( $$(date +%s) - start ))s"; exit $$rc' step

# make test runs the checks in two lanes at once: the library's tests
# (race, stress and allocation tests) and the build checks (the other
# platforms type-checked, the build without cgo, the otel module). The tests spend much of
# their time waiting (children, pipes, timers), which the other lane's
# compiling fills; -Oline keeps each line whole.
test: fmt-check tidy-check
	@$(MAKE) --no-print-directory -j2 -Oline lane-tests lane-builds

lane-tests: race stress allocs
lane-builds: vet vet32 api-check crosscheck nocgo otel

# The other platforms, type-checked from source (internal/checks/crosscheck):
# what a cross build would find, in seconds a platform where go vet for
# each compiles the standard library for it first (about 50 s a platform
# from a cold cache on two cores). make cross runs that full vet.
HOST := $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
crosscheck:
	@$(STEP) "type-check ($(filter-out $(HOST),$(TARGETS)))" $(GO) run ./internal/checks/crosscheck $(filter-out $(HOST),$(TARGETS))

nocgo:
	@CGO_ENABLED=0 $(STEP) "go build, CGO_ENABLED=0" $(GO) build $(PKGS)

fmt-check:
	@echo "==> gofmt"; out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# go mod tidy must leave every module as committed.
tidy-check:
	@set -e; for m in . otel bench otel/demo; do \
		echo "go mod tidy -diff ($$m)"; (cd $$m && $(GO) mod tidy -diff); \
	done

vet:
	@$(STEP) "go vet" $(GO) vet $(PKGS)
	@$(STEP) "bench: go vet, benchtable's tests" sh -c 'cd bench && $(GO) vet ./... && $(GO) test ./cmd/...'

# The public API only grows: api/v1.txt (the root module) and
# api/otel.v1.txt (the otel module) record it in the format of Go's own
# api/go1.*.txt, and the check fails when the code lacks a recorded line
# (a name removed or changed) or has one the file lacks. An addition is
# recorded on purpose, in the same commit:
#   go run ./internal/checks/apicheck -w api/v1.txt
#   cd otel && go run simpler.dev/log/internal/checks/apicheck -w ../api/otel.v1.txt
api-check:
	@$(STEP) "api-check (api/v1.txt, api/otel.v1.txt)" sh -c '$(GO) run ./internal/checks/apicheck api/v1.txt && cd otel && $(GO) run simpler.dev/log/internal/checks/apicheck ../api/otel.v1.txt'

# 32-bit platforms, tests included (go vet type-checks them): a logger
# runs on 32-bit boards, and a constant past 32 bits in a test, or a
# 64-bit atomic Go does not align, shows here. This kernel cannot run 386
# binaries, so compiling and vetting is the check.
vet32:
	@$(STEP) "go vet (linux/386, linux/arm)" sh -c 'GOARCH=386 $(GO) vet $(PKGS) && GOARCH=arm $(GO) vet $(PKGS)'

# Every module's full go vet (the otel module's too, which make test
# leaves to go test's subset): before a release, with cross.
vet-all: vet
	@$(STEP) "otel: go vet" sh -c 'cd otel && $(GO) vet ./...'

# go vet on every platform, each compiled in full: before a release.
cross: nocgo
	@set -e; for t in $(TARGETS); do \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(STEP) "go vet ($$t)" $(GO) vet $(PKGS); \
	done

race:
	@$(STEP) "go test -race" $(GO) test -race -count=1 $(PKGS)

# The sink's stress tests once more without the race detector, at full
# speed (they check accounting and integrity, never timing).
stress:
	@$(STEP) "sink stress tests" $(GO) test -count=1 -run 'TestStress' ./sink

# The allocation budgets (TestXxxAllocs, ...AllocateNothing...): they
# skip under -race, which allocates on its own, so they run here without.
allocs:
	@$(STEP) "allocation budgets" $(GO) test -count=1 -run 'Alloc' $(ALLOCPKGS)

# The packages with allocation budgets (a test whose name holds Alloc):
# only their test binaries are built again without -race.
ALLOCPKGS ?= $(shell grep -rlE --include='*_test.go' '^func Test[A-Za-z0-9_]*Alloc' . | grep -v '^./\(otel\|bench\)/' | xargs -n1 dirname | sort -u)

# The OpenTelemetry module (otel/, its own module, so the SDK stays out of
# the library's go.mod): the live exporter and strace-otlp against the
# Collector's own OTLP receiver, started in the test process on loopback
# ports. Then the README's otel blocks, built against the module: the
# race target skips them (saying so) while the module cache lacks the otel
# module's dependencies, which the root module's `go mod download` does
# not fetch and the vet above has; README_OTEL=require makes that a failure.
# go test runs vet's own subset of analyzers on the otel module (atomic,
# bool, buildtags, errorsas, ifaceassert, nilfunc, printf, ...); its full
# go vet compiles the OpenTelemetry SDK and the Collector's receiver a
# second time, without -race, a minute from a cold cache: vet-all runs it.
otel:
	@$(STEP) "otel: go test -race" sh -c 'cd otel && $(GO) test -race -count=1 ./...'
	@README_OTEL=require $(STEP) "README's otel blocks" $(GO) test -count=1 -run 'TestREADME/otel' ./internal/checks/readme
	@$(STEP) "otel/demo: go vet, go test" sh -c 'cd otel/demo && $(GO) vet ./... && $(GO) test -count=1 ./...'

# The quickstart exporting its traces and logs live over OTLP to the
# Collector's own receiver, and a trace viewer of what arrived (offline).
# OTEL_DEMO_OTLP and OTEL_DEMO_UI choose its ports (default: free ones),
# OTEL_DEMO_DIR where the run's log goes (default otel/demo/otel-demo-logs).
otel-demo:
	cd otel/demo && $(GO) run .

# The comparison with slog, zap, zerolog, phuslu and tint (bench/, its own
# module, so the peers stay out of the library's go.mod): raw results in
# bench/bench.txt, then a table of medians with ratios to nop and to the
# fastest peer, each with its range. The test binary is built once and run
# BENCHCOUNT times over every scenario (-count 1 each), so the n-th sample
# of every handler comes from the same pass and a ratio is taken within a
# pass: the machine's drift between passes does not enter it.
bench:
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf '"$$tmp" EXIT; \
	cd bench && $(GO) test -c -o $$tmp/bench.test . && \
	for i in $$(seq $(BENCHCOUNT)); do $$tmp/bench.test -test.run NONE -test.bench '$(BENCH)' -test.benchmem -test.count 1 -test.benchtime $(BENCHTIME); done \
		| tee bench.txt | $(GO) run ./cmd/benchtable

# Two commits side by side: the comparison benchmarks at OLD (a git ref)
# and at the working tree, both built once and run in alternation,
# BENCHCOUNT passes each, then benchstat's deltas (benchstat is a tool
# dependency of bench/: `go tool benchstat`). Alternating keeps the
# machine's drift from reading as a regression of whichever ran second.
OLD ?= HEAD
bench-compare:
	@set -e; tmp=$$(mktemp -d); trap 'git worktree remove --force '"$$tmp"'/old >/dev/null 2>&1 || true; rm -rf '"$$tmp" EXIT; \
	git worktree add --detach -q $$tmp/old $(OLD); \
	(cd $$tmp/old/bench && $(GO) test -c -o $$tmp/old.test .); (cd bench && $(GO) test -c -o $$tmp/new.test .); \
	for i in $$(seq $(BENCHCOUNT)); do \
		echo "== pass $$i of $(BENCHCOUNT)"; \
		(cd $$tmp/old/bench && $$tmp/old.test -test.run NONE -test.bench '$(BENCH)' -test.benchmem -test.count 1 -test.benchtime $(BENCHTIME)) >> $$tmp/old.txt; \
		(cd bench && $$tmp/new.test -test.run NONE -test.bench '$(BENCH)' -test.benchmem -test.count 1 -test.benchtime $(BENCHTIME)) >> $$tmp/new.txt; \
	done; \
	cd bench && $(GO) tool benchstat old=$$tmp/old.txt new=$$tmp/new.txt

# The library's own micro-benchmarks.
bench-lib:
	$(GO) test -run NONE -bench . -benchmem -count $(BENCHCOUNT) $(PKGS)

# A short run of every fuzz target, FUZZTIME each.
fuzz:
	@set -e; for pkg in $$($(GO) list $(PKGS)); do \
		for f in $$($(GO) test -list '^Fuzz' $$pkg | grep '^Fuzz' || true); do \
			echo "== $$pkg $$f"; \
			$(GO) test -run NONE -fuzz "^$$f$$" -fuzztime $(FUZZTIME) $$pkg; \
		done; \
	done

cover:
	$(GO) test -coverprofile=cover.out $(PKGS)
	$(GO) tool cover -func=cover.out | tail -1
