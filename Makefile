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

.PHONY: apidiff test lane-race lane-plain readme root-api otel-api otel-tests otel-demo-tests bench-vet crosscheck nocgo test-arm vet-all fmt-check tidy-check vet vet32 api-check cross race stress allocs otel otel-demo bench bench-compare bench-lib reader-mixes reader-views fuzz cover

# Every platform the library supports: it must build and vet on each
# (tests run on this machine's).
TARGETS ?= linux/amd64 linux/arm64 darwin/amd64 darwin/arm64 freebsd/amd64 windows/amd64

# step NAME CMD... runs CMD under a name: it says when the step starts,
# every 20 s while it runs (a cold module cache makes some steps long, and
# a silent step cannot be told from a hung one), and how it ended, how
# long it took and the CPU time it used (user and system).
STEP = sh -c 'name=$$1; shift; start=$$(date +%s); echo "==> $$name"; \
	( while :; do sleep 20 >/dev/null 2>&1; echo "    ... $$name: $$(( $$(date +%s) - start ))s"; done ) & t=$$!; \
	"$$@"; rc=$$?; kill $$t 2>/dev/null; \
	if [ $$rc = 0 ]; then r=ok; else r="FAILED ($$rc)"; fi; \
	tf=$$(mktemp); times >"$$tf"; cpu=$$(tail -n 1 "$$tf"); rm -f "$$tf"; \
	echo "<== $$name: $$r in $$(( $$(date +%s) - start ))s (cpu $$cpu)"; exit $$rc' step

# make test runs its checks in two lanes at once, each lane's steps one
# after another. Two go commands that need a package at the same moment
# both compile it (they share the build cache, not work in progress), so
# no two steps that compile the same packages in the same configuration
# run at once:
#   the race lane: go test -race of the root module (the readme test
#   apart), the otel module's API and tests, then the README's and docs'
#   Go blocks, which find all they need built, then the demo's tests;
#   the plain lane: tidy (downloading, beside the first compiles), the
#   sink's stress tests and the allocation budgets without -race, the
#   other platforms type-checked, then go vet and the root module's API
#   check, with -race: by then the race lane has compiled what they read
#   (a plain go vet compiled the standard library and the module once
#   more); last the bench module.
# Every step of a lane runs even when one before it failed; the lane
# fails if any did. The sub-makes keep each step's output whole (-Oline).
test: fmt-check
	@$(MAKE) --no-print-directory -j2 -Oline lane-race lane-plain

RACELANE ?= race otel-api otel-tests readme otel-demo-tests
PLAINLANE ?= tidy-check stress allocs crosscheck vet root-api bench-vet
lane-race:
	@rc=0; for s in $(RACELANE); do $(MAKE) --no-print-directory $$s || rc=1; done; exit $$rc
lane-plain:
	@rc=0; for s in $(PLAINLANE); do $(MAKE) --no-print-directory $$s || rc=1; done; exit $$rc

# Every package, tests included, type-checked from source for the other
# platforms, for 32-bit linux/386 and linux/arm (a constant past 32 bits
# is an error there), and for this machine's with cgo off (the library
# but hostabi builds with CGO_ENABLED=0): internal/checks/crosscheck,
# what a cross build's compiler front end would find, in a few seconds a
# platform. Compiling instead compiles the standard library once more for
# each (go vet for 386 and arm took 290 s of a cold make test, a cgo-off
# build 68 s); make cross, vet32 and nocgo still do, before a release.
HOST := $(shell $(GO) env GOOS)/$(shell $(GO) env GOARCH)
CHECKTARGETS ?= $(sort $(TARGETS) linux/386 linux/arm $(HOST))
crosscheck:
	@$(STEP) "type-check ($(CHECKTARGETS), cgo off)" $(GO) run ./internal/checks/crosscheck $(CHECKTARGETS)

nocgo:
	@CGO_ENABLED=0 $(STEP) "go build, CGO_ENABLED=0" $(GO) build $(PKGS)

fmt-check:
	@echo "==> gofmt"; out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

# go mod tidy must leave every module as committed.
tidy-check:
	@$(STEP) "go mod tidy -diff (., otel, bench, otel/demo, internal/checks/apidiff)" sh -c 'for m in . otel bench otel/demo; do (cd $$m && $(GO) mod tidy -diff) || { echo "go mod tidy changes $$m"; exit 1; }; done; cd internal/checks/apidiff && GOWORK=off $(GO) mod tidy -diff || { echo "go mod tidy changes internal/checks/apidiff"; exit 1; }'

# With -race: the analyzers read the export data of what they import, and
# make test's race lane has built it with -race (the one file this leaves
# out, racedetect's norace.go, is a constant, type-checked by crosscheck).
vet:
	@$(STEP) "go vet" $(GO) vet -race $(PKGS)

# With -race, as go vet above: the standard library's build and the
# analyzers' facts about it are the race lane's (a plain go vet of the
# bench module computed both once more: 23 CPU-seconds against 7).
bench-vet:
	@$(STEP) "bench: go vet, benchtable's tests" sh -c 'cd bench && $(GO) vet -race ./... && $(GO) test -race -vet=off ./cmd/...'

# The public API only grows: api/v1.txt (the root module) and
# api/otel.v1.txt (the otel module) record it in the format of Go's own
# api/go1.*.txt, and the check fails when the code lacks a recorded line
# (a name removed or changed) or has one the file lacks. An addition is
# recorded on purpose, in the same commit:
#   go run ./internal/checks/apicheck -w api/v1.txt
#   cd otel && go run simpler.dev/log/internal/checks/apicheck -w ../api/otel.v1.txt
# The otel module's API is read from its -race build, the one its go test
# -race makes (a plain build would compile the OpenTelemetry SDK again).
# make api-check then has golang.org/x/exp/apidiff compare both modules'
# public packages with the v1.0.0 tag (internal/checks/apidiff, a module
# of its own: apidiff's golang.org/x/tools is not the library's), failing
# on any change it calls incompatible. make test runs the lists, not
# apidiff (it type-checks two trees: 15 s on two cores).
api-check: root-api otel-api apidiff
apidiff:
	@$(STEP) "apidiff (against v1.0.0)" sh -c 'cd internal/checks/apidiff && GOWORK=off $(GO) test . && GOWORK=off $(GO) run .'
root-api:
	@$(STEP) "api-check (api/v1.txt)" $(GO) run ./internal/checks/apicheck -race api/v1.txt
otel-api:
	@$(STEP) "api-check (api/otel.v1.txt)" sh -c 'cd otel && $(GO) run simpler.dev/log/internal/checks/apicheck -race ../api/otel.v1.txt'

# 32-bit platforms, tests included, compiled and vetted in full: a logger
# runs on 32-bit boards. make test type-checks them (crosscheck); this
# adds vet's analyzers, before a release. This kernel cannot run 386
# binaries, so compiling and vetting is the check.
vet32:
	@$(STEP) "go vet (linux/386, linux/arm)" sh -c 'GOARCH=386 $(GO) vet $(PKGS) && GOARCH=arm $(GO) vet $(PKGS)'

# The tests of every package of the root module as a 32-bit ARM board
# runs them (GOARM=7), under qemu-arm, installed from Debian's qemu-user
# when missing: 64-bit assumptions at run time (an unaligned 64-bit
# atomic, an int's digits) that vet32's compile cannot see. Not in make
# test (about 3 minutes of emulation here). A test that runs its own
# binary again runs it through the same emulator (SIMPLER_TEST_EXEC, see
# internal/testkit/self); tests the emulator cannot host skip saying why
# (it answers TIOCGDEV with ENOSYS: no terminal is reopened under it).
# hostabi is cgo and builds nothing here (cgo for ARM needs its C cross
# compiler); -short leaves out the README's scratch-module builds, which
# run the host's go command. 386 stays compile-and-vet (vet32): the Go
# runtime does not start under qemu-i386.
QEMUARM ?= qemu-arm
test-arm:
	@command -v $(QEMUARM) >/dev/null 2>&1 || { echo "==> installing qemu-user (for $(QEMUARM))"; \
		sudo=$$(command -v sudo || true); $$sudo apt-get install -y -q qemu-user >/dev/null || \
		{ $$sudo apt-get update -q >/dev/null && $$sudo apt-get install -y -q qemu-user >/dev/null; }; }
	@SIMPLER_TEST_EXEC=$(QEMUARM) CGO_ENABLED=0 GOOS=linux GOARCH=arm GOARM=7 \
		$(STEP) "go test (linux/arm under $(QEMUARM))" $(GO) test -exec $(QEMUARM) -short -count=1 $(PKGS)

# Every module's go vet in a plain build too (make test vets each with
# -race, whose files are the same but for racedetect's norace.go), and
# the 32-bit platforms': before a release, with cross.
vet-all: vet vet32
	@$(STEP) "otel: go vet" sh -c 'cd otel && $(GO) vet ./... && cd demo && $(GO) vet ./...'

# go vet on every platform, each compiled in full: before a release.
cross: nocgo
	@set -e; for t in $(TARGETS); do \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(STEP) "go vet ($$t)" $(GO) vet $(PKGS); \
	done

# -p 4 runs four test binaries at once where GOMAXPROCS would run two:
# many tests spend their time waiting (children, pipes, timers, a
# browser), and two cores left idle by them made the race step the
# longest part of make test. It changes no test's work, only their overlap.
# -vet=off here and in stress and allocs: go vet (the vet target) runs
# every analyzer on the same packages and their tests; go test's own
# subset of them ran a second and third time.
RACEPAR ?= 4
race:
	@$(STEP) "go test -race" sh -c '$(GO) test -race -vet=off -p $(RACEPAR) -count=1 $$($(GO) list $(PKGS) | grep -v "/internal/checks/readme$$")'

# Every Go block of README.md and docs/, built (with -race, as this test
# is), run and compared; the otel module's blocks too, which need its
# dependencies in the module cache (README_OTEL=require: otel-tests has
# fetched them).
readme:
	@README_OTEL=require $(STEP) "README's and docs' Go blocks" $(GO) test -race -count=1 ./internal/checks/readme

# The sink's stress tests once more without the race detector, at full
# speed (they check accounting and integrity, never timing).
stress:
	@$(STEP) "sink stress tests" $(GO) test -vet=off -count=1 -run 'TestStress' ./sink

# The allocation budgets (TestXxxAllocs, ...AllocateNothing...): they
# skip under -race, which allocates on its own, so they run here without.
allocs:
	@$(STEP) "allocation budgets" $(GO) test -vet=off -count=1 -run 'Alloc' $(ALLOCPKGS)

# The packages with allocation budgets (a test whose name holds Alloc):
# only their test binaries are built again without -race.
ALLOCPKGS ?= $(shell grep -rlE --include='*_test.go' '^func Test[A-Za-z0-9_]*Alloc' . | grep -v '^./\(otel\|bench\)/' | xargs -n1 dirname | sort -u)

# The OpenTelemetry module (otel/, its own module, so the SDK stays out of
# the library's go.mod): the live exporter and strace-otlp against the
# Collector's own OTLP receiver, started in the test process on loopback
# ports; then the demo's tests. The README's and docs' otel blocks are the
# readme target's (the module cache must hold the otel module's
# dependencies, which the root module's `go mod download` does not fetch
# and these tests have). Everything here, the otel API check and the
# blocks too, is built with -race: the OpenTelemetry SDK, gRPC and the
# Collector's receiver are then compiled once, not once with -race and
# once without (two minutes of a cold make test). Each module is vetted
# in full, with -race, after its tests (-vet=off): go test's own subset of
# analyzers had facts of its own about every dependency, the standard
# library included, where go vet -race shares them with the root
# module's vet (49 CPU-seconds for the subset against 36 for all).
otel: otel-tests otel-demo-tests
TESTVET = { $(GO) test -race -vet=off -count=1 ./...; r=$$?; $(GO) vet -race ./... || r=1; exit $$r; }
otel-tests:
	@$(STEP) "otel: go test -race, go vet -race" sh -c 'cd otel && $(TESTVET)'
otel-demo-tests:
	@$(STEP) "otel/demo: go test -race, go vet -race" sh -c 'cd otel/demo && $(TESTVET)'

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

# The reader on the worst day's logs (a million names, a million
# processes, ten thousand run files, each beside a tenth of itself): time,
# MB/s and peak memory, failing past docs/READING.md's promise. About
# 700 MB of temporary files and a minute; not part of make test.
reader-mixes:
	$(GO) run ./cmd/strace-timing/internal/mixes

# The views on a 4 M-span log of simpler's runtime (700 MB, a few
# minutes): peak memory a span of --stats, --tables (held to 64 bytes),
# --trace-out and --html.
reader-views:
	$(GO) run ./cmd/strace-timing/internal/mixes -views

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
