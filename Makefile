# hookd — run Claude Code hooks from a long-lived daemon.
# `make help` lists the targets.

GO        ?= go
BIN       := bin
# The build identity (protocol/lite/build.go): `hookd --version`, `hookc --version`, status.
# The date is the commit's (SOURCE_DATE_EPOCH when set), never the clock: builds of one
# commit are byte-identical (docs/releasing.md).
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
COMMIT    ?= $(shell git rev-parse HEAD 2>/dev/null)
SOURCE_DATE_EPOCH ?= $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
BUILD_DATE := $(shell date -u -d @$(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ 2>/dev/null || date -u -r $(SOURCE_DATE_EPOCH) +%Y-%m-%dT%H:%M:%SZ)
LITE      := github.com/hookd/hookd/protocol/lite
LDFLAGS   := -s -w -buildid= -X github.com/hookd/hookd/daemon.Version=$(VERSION) \
	-X $(LITE).version=$(VERSION) -X $(LITE).commit=$(COMMIT) -X $(LITE).date=$(BUILD_DATE)
FUZZTIME  ?= 20s
# staticcheck, pinned; `go run` fetches it through the Go module proxy (checked against
# the checksum database), so CI needs nothing installed beforehand.
STATICCHECK ?= $(GO) run honnef.co/go/tools/cmd/staticcheck@v0.8.2
BENCHTIME ?= 1x
# Per-package test timeouts, explicit so that a hang fails with a stack dump instead of
# riding Go's default. The black-box package (./test) is the longest: ~7 min under -race on
# an idle 2-core machine, and it passed 15 min at load ~35 (a timeout is a hang guard,
# not a speed check: tests must not depend on machine speed).
UNIT_TIMEOUT ?= 30m
SOAK_TIMEOUT ?= 40m
# The real-harness suite: ~13 min for TestClaude alone at load ~30; every test passed when
# 20m killed it in a CI dry run at that load.
E2E_TIMEOUT ?= 40m

.PHONY: help build run test unit unit-packages unit-blackbox conformance e2e pin-claude soak faults fleet bench bench-corpus fuzz lint clean release release-check

help: ## list targets
	@awk 'BEGIN{FS=":.*## "} /^[a-z][a-z0-9-]*:.*## /{printf "  %-11s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

build: ## build bin/hookd and bin/hookc
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/hookd ./cmd/hookd
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN)/hookc ./cmd/hookc

run: build ## build and start hookd in the foreground on the default settings sources
	$(BIN)/hookd --debug serve

# make test and make unit run their steps side by side (test/steps.sh): ./test and the
# real-harness sessions mostly wait on processes, and the other steps' CPU work fills that
# (test/README.md, "make test against its 10-minute budget"). Each step's output is printed
# whole when it ends; the exit status fails when any step failed.
test: ## what CI runs first, side by side: lint, every test with -race, then the drift check and the real-harness suites
	@MAKE='$(MAKE)' UNIT_VET=off test/steps.sh nice:lint nice:unit-packages unit-blackbox "conformance e2e"

unit: ## go test -race ./... but the fault suite, which make faults runs (UNIT_TIMEOUT per package; soak tests skip, saying so)
	@MAKE='$(MAKE)' test/steps.sh unit-packages unit-blackbox

# go test's -vet: empty is its default (a subset of go vet's checks before each package's
# tests); make test sets it off, as its lint runs go vet ./... in full.
UNIT_VET ?=
# The two halves of make unit. The black-box tests wait on hook timeouts, sleeps and polls
# far more than they compute, so ./test runs BLACKBOX_PARALLEL of them at once instead of
# go test's default (GOMAXPROCS); each has a world of its own (test/harness_test.go, NewEnv).
BLACKBOX_PARALLEL ?= 8
MODULE := github.com/hookd/hookd

unit-packages: ## make unit without ./test: every package's own tests, with -race
	$(GO) test -race -count=1 -vet=$(UNIT_VET) -timeout $(UNIT_TIMEOUT) -skip '^TestFault' $$($(GO) list ./... | grep -vx '$(MODULE)/test')

unit-blackbox: ## make unit's ./test: the black-box tests, with -race, but the fault suite
	@echo "unit: the fault suite (./test TestFault*, 44 cases, ~1.5 min) is not run here: make faults runs it, and CI runs make faults after make test"
	$(GO) test -race -count=1 -vet=$(UNIT_VET) -timeout $(UNIT_TIMEOUT) -parallel $(BLACKBOX_PARALLEL) -skip '^TestFault' ./test/

faults: ## the fault suite (issues 13, 28; docs/reliability.md), with -race: every fault case end to end with its figures; CI runs it once after make test
	@out=$$(mktemp); status=0; $(GO) test -race -count=1 -run '^TestFault' -v -timeout $(UNIT_TIMEOUT) ./test/ > $$out 2>&1 || status=$$?; \
	$(GO) test -race -count=1 -run '^(TestHTTPForwarderServesItsOwnerFirst|TestSymlinkedSettingsFile)$$' -v ./daemon/httpfwd/ ./configs/install/ >> $$out 2>&1 || status=$$?; \
	grep -E '^(--- |    faults_|    [a-z_]+_test\.go:[0-9]+: faults_|ok|FAIL|PASS)' $$out; [ $$status = 0 ] || cat $$out; rm -f $$out; exit $$status

soak: ## long soak tests (Test...Soak, 10,000 events and the like; minutes); CI runs it after make test
	HOOKD_SOAK=1 $(GO) test -race -count=1 -run 'Soak$$' -timeout $(SOAK_TIMEOUT) ./...
	HOOKD_ZYGOTE_SOAK=10000 $(GO) test -race -count=1 -run '^TestNoLeaks$$' -timeout $(SOAK_TIMEOUT) ./daemon/runner/zygote/

conformance: ## drift check: the pinned Claude Code's hook events and handler fields vs hookd's catalogue and decoder; the pinned Codex's hook schemas vs hookd's copies
	@if [ -n "$$HOOKD_CLAUDE_BIN" ]; then bin=$$HOOKD_CLAUDE_BIN; \
	elif [ "$$CI" = true ] || command -v npm >/dev/null 2>&1; then bin=$$(test/e2e/install-claude.sh --print-bin) || exit 1; \
	else echo "conformance: npm not found and HOOKD_CLAUDE_BIN unset: SKIPPING the drift check against Claude Code"; exit 0; fi; \
	codex=$${HOOKD_CODEX_BIN:-$$(test/e2e/install-harnesses.sh codex --print-bin)} || exit 1; \
	HOOKD_CONFORMANCE=1 HOOKD_CLAUDE_BIN=$$bin HOOKD_CODEX_BIN=$$codex $(GO) test -count=1 -v -run 'TestConformance|TestExtract|TestCheck|TestCodexSchemas' ./test/conformance/

pin-claude: ## move the pinned Claude Code in one command: make pin-claude CLAUDE_VERSION=2.1.331 (then runs conformance and e2e on it)
	@case "$(CLAUDE_VERSION)" in [0-9]*.[0-9]*.[0-9]*) ;; *) echo "usage: make pin-claude CLAUDE_VERSION=x.y.z"; exit 2 ;; esac
	sed -i.bak 's/HOOKD_CLAUDE_VERSION:-[0-9][0-9.]*}/HOOKD_CLAUDE_VERSION:-$(CLAUDE_VERSION)}/' test/e2e/install-claude.sh
	sed -i.bak 's/claude-code@[0-9][0-9.]*/claude-code@$(CLAUDE_VERSION)/' test/e2e/probe.sh
	rm -f test/e2e/install-claude.sh.bak test/e2e/probe.sh.bak
	$(GO) test ./protocol/lite -run TestPins -update   # the version `hookd --version` says it was checked against
	@grep -q "HOOKD_CLAUDE_VERSION:-$(CLAUDE_VERSION)}" test/e2e/install-claude.sh || { echo "pin-claude: the pin in test/e2e/install-claude.sh was not updated"; exit 1; }
	HOOKD_CLAUDE_BIN= $(MAKE) conformance e2e

e2e: ## real Claude Code, Codex CLI and Gemini CLI vs the same hooks through hookd (installs them from npm into test/e2e/.cache)
	@if [ -n "$$HOOKD_CLAUDE_BIN" ]; then bin=$$HOOKD_CLAUDE_BIN; \
	elif [ "$$CI" = true ] || command -v npm >/dev/null 2>&1; then bin=$$(test/e2e/install-claude.sh --print-bin) || exit 1; \
	else echo "e2e: npm not found and HOOKD_CLAUDE_BIN unset: skipping the Claude Code, Codex and Gemini suites"; exit 0; fi; \
	codex=$${HOOKD_CODEX_BIN:-$$(test/e2e/install-harnesses.sh codex --print-bin)} || exit 1; \
	gemini=$${HOOKD_GEMINI_JS:-$$(test/e2e/install-harnesses.sh gemini --print-bin)} || exit 1; \
	HOOKD_CLAUDE_BIN=$$bin HOOKD_CODEX_BIN=$$codex HOOKD_GEMINI_JS=$$gemini \
	$(GO) test -count=1 -tags e2e -run 'TestClaude|TestCodexNativeVsHookd|TestGeminiNativeVsHookd|TestAllHarnessesOnePolicy|TestNPMSetup' -v -timeout $(E2E_TIMEOUT) ./test/e2e/

fleet: ## decisions to a real OpenTelemetry Collector (built from the Go module proxy, cached) and rsyslog (apt); CI runs it once
	HOOKD_OTELCOL_CACHE=$${HOOKD_OTELCOL_CACHE:-$(CURDIR)/test/fleet/.cache} $(GO) test -race -count=1 -tags fleet -run 'TestFleet' -v -timeout 30m ./test/

bench: build ## benchmarks (incl. a claude -p session native vs through hookd); figures go to BENCHMARKS.md
	@bin=$${HOOKD_CLAUDE_BIN:-$$(command -v npm >/dev/null 2>&1 && test/e2e/install-claude.sh --print-bin)}; \
	HOOKD_CLAUDE_BIN=$$bin $(GO) test -run '^$$' -bench . -benchtime $(BENCHTIME) -timeout 60m ./test/bench/

bench-corpus: ## real Claude Code sessions, native vs through hookd, for the public hook corpus (test/bench/corpus; fetched from npm, cached; tens of minutes)
	@bin=$${HOOKD_CLAUDE_BIN:-$$(test/e2e/install-claude.sh --print-bin)} || exit 1; \
	corpus=$${HOOKD_CORPUS_DIR:-$$(test/bench/corpus/fetch.sh --print-dir)} || exit 1; \
	HOOKD_CLAUDE_BIN=$$bin HOOKD_CORPUS_DIR=$$corpus $(GO) test -run '^$$' -bench '^BenchmarkCorpus$$' -benchtime 1x -v -timeout 300m ./test/bench/

fuzz: ## every fuzz target for FUZZTIME each, then the real-bash oracle of the Bash rules over 100,000 commands (test/fuzz.sh)
	@GO=$(GO) FUZZTIME=$(FUZZTIME) test/fuzz.sh

# Standard-library-only leaves that daemon/runner, daemon/audit and rules/shell may link (make lint).
LEAF_PKGS := github.com/hookd/hookd/configs/atomicfile

# macOS (issue 22, docs/platforms.md): these packages cross-build and vet (which type-checks
# their tests) for darwin/arm64 and darwin/amd64, and their test binaries link for
# darwin/arm64 (-exec /bin/true runs none: they run on hosted CI, .github/workflows/ci.yml).
DARWIN_PKGS ?= ./...

lint: ## go vet, staticcheck, gofmt, import promises, package size (<= 3,500 non-test lines), function length (daemon: <= 80), darwin cross-build and vet
	$(GO) vet ./...
	$(GO) vet -tags e2e ./test/e2e/
	$(GO) vet -tags fleet ./test/
	$(STATICCHECK) ./...
	$(STATICCHECK) -tags e2e ./test/e2e/
	$(STATICCHECK) -tags fleet ./test/
	@# Import promises (docs/architecture.md): hookc links only protocol (in fact only protocol/lite); runner, audit and
	@# rules/shell link no hookd package outside their own directory but the leaves in
	@# LEAF_PKGS, which link no hookd package at all (standard library only).
	@bad=$$($(GO) list -deps ./cmd/hookc | grep '^github.com/hookd/hookd/' | grep -vx 'github.com/hookd/hookd/\(cmd/hookc\|protocol\|protocol/lite\)'); \
	for p in daemon/runner daemon/audit rules/shell; do \
		for d in $$($(GO) list -deps ./$$p | grep '^github.com/hookd/hookd/' | grep -v "^github.com/hookd/hookd/$$p"); do \
			case " $(LEAF_PKGS) " in *" $$d "*) ;; *) bad="$$bad $$d (in $$p)";; esac; \
		done; \
	done; \
	for d in $(LEAF_PKGS); do \
		bad="$$bad $$($(GO) list -deps $$d | grep '^github.com/hookd/hookd/' | grep -vx "$$d")"; \
	done; if [ -n "$$(echo $$bad)" ]; then echo "forbidden imports: $$bad"; exit 1; fi
	@# hookc's start-up is the product (docs/performance.md, "hookc"): none of these may come back.
	@heavy=$$($(GO) list -deps ./cmd/hookc | grep -x 'encoding/json\|reflect\|fmt\|flag\|context\|net\|os/exec\|os/signal'); \
	if [ -n "$$heavy" ]; then echo "cmd/hookc links" $$heavy "(protocol/lite exists to avoid them)"; exit 1; fi
	@out=$$(gofmt -l $$(git ls-files '*.go')); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@test/lint/pkgsize.sh
	@# No function in the daemon package (engine, server) longer than 80 lines (issue 24).
	@$(GO) run ./test/lint/funclen -max 80 daemon
	@for arch in arm64 amd64; do \
		echo "GOOS=darwin GOARCH=$$arch go build + go vet: $(DARWIN_PKGS)"; \
		GOOS=darwin GOARCH=$$arch $(GO) build $(DARWIN_PKGS) && GOOS=darwin GOARCH=$$arch $(GO) vet $(DARWIN_PKGS) || exit 1; \
	done
	@# -vet=off: go vet for darwin/arm64 ran in full just above; go test's own vet is a subset.
	@echo "GOOS=darwin GOARCH=arm64 go test -exec /bin/true (test binaries link; none runs)"; \
	out=$$(GOOS=darwin GOARCH=arm64 $(GO) test -count=1 -vet=off -exec /bin/true $(DARWIN_PKGS) 2>&1) || { echo "$$out"; exit 1; }

clean: ## remove build output
	rm -rf $(BIN)

release: ## snapshot release of this commit into dist/: archives (linux and darwin, amd64 and arm64), SHA256SUMS, SHA256SUMS.sig (docs/releasing.md)
	packaging/release.sh

release-check: ## what CI runs once: two release builds byte-identical, verify passes and fails after a byte flip, the formula, go install …@version offline (tens of minutes)
	$(GO) test -tags release -count=1 -v -timeout 90m ./test/release/
