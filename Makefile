# The README's commands. `make test` is what CI runs.
GO      ?= go
PKGS    ?= ./...
FUZZTIME ?= 10s
BENCHCOUNT ?= 5

.PHONY: test fmt-check vet race bench fuzz cover

test: fmt-check vet race

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

vet:
	$(GO) vet $(PKGS)

race:
	$(GO) test -race -count=1 $(PKGS)

# The library's own benchmarks. The comparison with other loggers lives in
# bench/ (its own module) and runs with `make -C bench`.
bench:
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
