# Flotilla — build, run and test.
#
#   make dev     build what is needed, then start a local hub and spokes (flotilla dev up)
#   make test    build what is needed, then run unit, integration and end-to-end tests
#   make soak    a seeded chaos soak of a local fleet (SOAK=10m by default), then its checks
#   make verify  check formatting, go vet, staticcheck, generated files, alert rules and dashboard
#                (no API servers)
#   make tools   build the Kubernetes binaries (kube-apiserver, etcd, kwok, ...) into bin/
#
# The Kubernetes binaries are built from Go modules pinned in hack/tools; the first build
# takes several minutes, later runs reuse bin/ and finish in a second.

SHELL := /usr/bin/env bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := $(CURDIR)/bin
KUBE_VERSION := v1.36.3
KWOK_VERSION := v0.8.0
TOOLS_MOD := hack/tools/go.mod hack/tools/go.sum
# Linters are Go tool dependencies of their own module, so they never move the Kubernetes pins.
LINT_MOD := hack/tools/lint/go.mod
STATICCHECK := go tool -modfile=$(LINT_MOD) staticcheck
KWOK_MOD := hack/tools/kwok/go.mod hack/tools/kwok/go.sum
# The alert rules' and dashboard's checks are a module of their own, with the Prometheus server
# module (promtool, the PromQL parser), so that it never moves the versions Flotilla builds with.
OBSERVABILITY_MOD := test/observability/go.mod test/observability/go.sum
PROMTOOL := $(BIN)/promtool

# Stamp the Kubernetes binaries with their real version, as the Kubernetes release build does.
KUBE_LDFLAGS := -s -w $(foreach p,k8s.io/component-base/version k8s.io/client-go/pkg/version,\
	-X $(p).gitVersion=$(KUBE_VERSION) -X $(p).gitMajor=1 -X $(p).gitMinor=36 \
	-X $(p).gitTreeState=clean -X $(p).buildDate=2026-10-01T00:00:00Z)

KUBE_BINS := kube-apiserver kube-controller-manager kube-scheduler kubectl
TOOL_BINS := $(addprefix $(BIN)/,$(KUBE_BINS) etcd kwok kwok-stages.yaml controller-gen)

# -count=1: integration tests run real binaries that Go's test cache cannot see, so never reuse results.
GO_TEST_FLAGS ?= -count=1
DEV_ARGS ?=

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*## "} /^[a-zA-Z_-]+:.*## / {printf "  %-12s %s\n", $$1, $$2}' $(MAKEFILE_LIST)

.PHONY: tools
tools: $(TOOL_BINS) ## Build the Kubernetes binaries, etcd, kwok and controller-gen into bin/ (once).

$(addprefix $(BIN)/,$(KUBE_BINS)): $(BIN)/%: $(TOOLS_MOD)
	@echo ">> building $* $(KUBE_VERSION) from k8s.io/kubernetes (first time only; a few minutes)"
	@cd hack/tools && go build -trimpath -ldflags '$(KUBE_LDFLAGS)' -o $@ k8s.io/kubernetes/cmd/$*

$(BIN)/etcd: $(TOOLS_MOD)
	@echo ">> building etcd from go.etcd.io/etcd/server/v3 (first time only)"
	@cd hack/tools && go build -trimpath -ldflags '-s -w' -o $@ go.etcd.io/etcd/server/v3

$(BIN)/kwok: $(KWOK_MOD)
	@echo ">> building kwok $(KWOK_VERSION), the fake-node simulator (first time only)"
	@cd hack/tools/kwok && go build -trimpath -ldflags '-s -w -X sigs.k8s.io/kwok/pkg/consts.Version=$(KWOK_VERSION:v%=%)' -o $@ sigs.k8s.io/kwok/cmd/kwok

# kwok needs its node and pod lifecycle stages in its configuration; they come from the same
# kwok module, so they match the binary.
$(BIN)/kwok-stages.yaml: $(KWOK_MOD) hack/tools/kwok/stages/main.go
	@echo ">> writing kwok's node and pod stages (first time only)"
	@mkdir -p $(BIN) && cd hack/tools/kwok && go run ./stages > $@.tmp && mv $@.tmp $@

$(BIN)/controller-gen: $(TOOLS_MOD)
	@echo ">> building controller-gen (first time only)"
	@cd hack/tools && go build -trimpath -o $@ sigs.k8s.io/controller-tools/cmd/controller-gen

# promtool runs the alert rules' unit tests. Built without Prometheus' service discovery
# (build tag remove_all_sd), which rule tests never use: a quarter fewer packages, and about a
# third of the cold build time.
$(PROMTOOL): $(OBSERVABILITY_MOD)
	@echo ">> building promtool from github.com/prometheus/prometheus (first time only; 1-2 minutes)"
	@cd test/observability && go build -trimpath -tags remove_all_sd -ldflags '-s -w' -o $@ github.com/prometheus/prometheus/cmd/promtool

##@ Build

CHART := charts/flotilla

FLOTILLA := $(BIN)/flotilla

.PHONY: build
build: ## Build bin/flotilla.
	@go build -o $(FLOTILLA) ./cmd/flotilla

.PHONY: generate
generate: $(BIN)/controller-gen ## Regenerate deepcopy code, CRDs and RBAC, the chart's copies of them, and the kustomize base.
	@$(BIN)/controller-gen object paths=./api/...
	@$(BIN)/controller-gen crd paths=./api/... output:crd:artifacts:config=config/crd/bases
	@$(BIN)/controller-gen crd paths=github.com/kubernetes-sigs/kro/api/v1alpha1 output:crd:artifacts:config=config/crd/kro
	@$(BIN)/controller-gen rbac:roleName=flotilla-hub paths=./internal/... output:rbac:artifacts:config=config/rbac
	@# The chart (charts/flotilla) is the one source of a hub's installation: it takes the generated
	@# CRDs and roles as files, and config/default (the kustomize base) is its render with default values.
	@rm -rf $(CHART)/files/crds $(CHART)/files/kro $(CHART)/files/rbac
	@mkdir -p $(CHART)/files/crds $(CHART)/files/kro $(CHART)/files/rbac
	@cp config/crd/bases/*.yaml $(CHART)/files/crds/
	@cp config/crd/kro/*.yaml $(CHART)/files/kro/
	@cp config/rbac/role.yaml config/rbac/metrics_reader_role.yaml $(CHART)/files/rbac/
	@go run ./internal/install/chart/render -o config/default/flotilla.yaml

##@ Run

.PHONY: dev
dev: tools build ## Start a local hub and 3 spokes (Ctrl-C stops everything). DEV_ARGS="--spokes 2" to change.
	@$(FLOTILLA) dev up $(DEV_ARGS)

##@ Test

.PHONY: test
# The packages whose tests take longest, named first so that go test starts them first: it
# starts test binaries in the order given, and with these last (import-path order) the
# end-to-end suite ran alone for its last 18 minutes.
SLOW_TEST_PACKAGES := ./test/e2e ./internal/propagation ./test/e2e/fleetapis ./internal/hub ./internal/instances ./internal/transparent
# How many test binaries run at once. Integration tests spend much of their time waiting for
# API servers and controllers (a quarter of two cores stayed idle with one binary per core), so
# one more than the cores keeps them busy.
TEST_PARALLEL ?= $(shell echo $$(( $$(getconf _NPROCESSORS_ONLN) + 1 )))
# Test binaries are linked without DWARF (-w: a third less link CPU over some fifty binaries;
# stack traces keep their file and line) and without go test's vet pass, which make verify
# runs whole.
TEST_BUILD_FLAGS := -vet=off -ldflags=-w

test: tools ## Run unit, integration and end-to-end tests against real API servers.
	@echo ">> running tests (integration tests start real API servers; a few minutes)"
	@FLOTILLA_BIN_DIR=$(BIN) go test -p $(TEST_PARALLEL) -timeout 30m $(TEST_BUILD_FLAGS) $(GO_TEST_FLAGS) $(SLOW_TEST_PACKAGES) ./...

# The browser test of the dashboard (test/ui, build tag uitest): a hub and three spokes, the
# dashboard driven in Debian's chromium (apt-get install -y chromium). Screenshots of each view
# go to UI_ARTIFACTS.
UI_ARTIFACTS ?= $(CURDIR)/.flotilla/ui-artifacts

.PHONY: test-ui
test-ui: tools ## Run the dashboard's browser test (needs chromium); screenshots in UI_ARTIFACTS.
	@command -v chromium >/dev/null || { echo "chromium is missing: apt-get install -y chromium"; exit 1; }
	@echo ">> running the dashboard's browser test (a local fleet and chromium; under a minute)"
	@FLOTILLA_BIN_DIR=$(BIN) FLOTILLA_UI_ARTIFACTS=$(UI_ARTIFACTS) go test -tags uitest -timeout 10m $(GO_TEST_FLAGS) -v -run TestDashboard ./test/ui/

BENCH_ARGS ?=

.PHONY: bench
bench: tools build ## Measure Flotilla against a direct client on a local fleet. BENCH_ARGS="--spokes 3 --objects 300".
	@go run ./bench --bin-dir $(BIN) --update-docs docs/performance.md $(BENCH_ARGS)

# The chaos soak (soak/, docs/soak.md): a local fleet under seeded random faults and a stream of
# hub edits, then checks that every spoke holds what the hub says. It takes the fleet lock, so
# it waits while another local fleet (make test, another soak) runs.
SOAK ?= 10m
SOAK_ARGS ?=
FLEET_LOCK ?= /tmp/flotilla-fleet.lock

.PHONY: soak
soak: tools build ## Run the chaos soak (default 10 minutes). SOAK=3m or SOAK=1h; SOAK_ARGS="--seed 42" replays a run.
	@echo ">> chaos soak for $(SOAK) (waits for the fleet lock $(FLEET_LOCK) while another fleet runs)"
	@flock $(FLEET_LOCK) go run ./soak --bin-dir $(BIN) --duration $(SOAK) $(SOAK_ARGS)

.PHONY: lint
lint: ## Run go vet.
	@go vet ./...

# What `make generate` writes. verify regenerates it and fails if any file changes: on a clean
# checkout, that is any git diff; with local edits, only what generate itself changed.
GENERATED := api config charts

.PHONY: observability
observability: $(PROMTOOL) ## Check the alert rules (promtool test rules) and the Grafana dashboard (no API servers).
	@echo ">> alert rules and dashboard (test/observability)"
	@cd test/observability && go vet ./... && go tool -modfile=$(CURDIR)/$(LINT_MOD) staticcheck ./... && \
		PROMTOOL=$(PROMTOOL) go test $(GO_TEST_FLAGS) ./...

.PHONY: verify
verify: $(BIN)/controller-gen observability ## Check gofmt, go vet, staticcheck, that `make generate` changes nothing, alert rules and dashboard.
	@echo ">> gofmt"
	@unformatted=$$(gofmt -l $$(git ls-files --cached --others --exclude-standard '*.go')); \
	if [ -n "$$unformatted" ]; then \
		echo "these files are not formatted; run gofmt -w on them:"; echo "$$unformatted" | sed 's/^/  /'; exit 1; \
	fi
	@echo ">> go vet"
	@go vet ./...
	@echo ">> staticcheck (pinned in $(LINT_MOD))"
	@$(STATICCHECK) ./...
	@echo ">> make generate changes nothing"
	@before=$$(find $(GENERATED) -type f | sort | xargs sha256sum); \
	$(MAKE) --no-print-directory generate; \
	after=$$(find $(GENERATED) -type f | sort | xargs sha256sum); \
	changed=$$(diff <(echo "$$before") <(echo "$$after") | sed -n 's/^[<>] [0-9a-f]*  //p' | sort -u || true); \
	if [ -n "$$changed" ]; then \
		echo "generated files were stale and make generate has now rewritten them; review and commit:"; \
		echo "$$changed" | sed 's/^/  /'; exit 1; \
	fi

.PHONY: clean
clean: ## Remove bin/ and the dev fleet directory.
	@rm -rf $(BIN) .flotilla
