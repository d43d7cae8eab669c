# Redis Stream Coordinator: build, run, lint and test.
GO ?= go
BIN := bin/coordinator
# VERSION is stamped into the binary (coordinator -version, /actuator/info).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

.PHONY: build run test lint services bench chaos

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/coordinator

run:
	$(GO) run ./cmd/coordinator

# services starts Redis and PostgreSQL when they do not answer and prepares
# PostgreSQL for the tests (passwordless loopback access, database test);
# see .ci/services. The Redis and SQL store tests need them.
services:
	@bash .ci/services

test: services
	$(GO) test -race -count=1 ./...

lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...

# bench runs the default load suite of cmd/coord-bench (under 3 minutes on
# 2 cores): ceiling, steady and baseline on Redis with 10,000 members,
# churn with both release policies, and the assignor benchmarks. It prints
# goals P1-P5 and writes bench/results/<date>-bench.json (docs/benchmarks.md).
bench: services
	$(GO) run ./cmd/coord-bench -name bench -duration 8s

# chaos runs the fault-injection suite of cmd/coord-chaos (package chaos):
# 50 seeds of 60 s each on a throwaway Redis, then on PostgreSQL, 6 runs at
# once (about 25 minutes on 2 cores). It prints every overlap, settle, admin
# and epoch violation with its timeline; replay one with
# go run ./cmd/coord-chaos -store redis -seed N.
CHAOS_SEEDS ?= 50
CHAOS_PARALLEL ?= 6
chaos: services
	$(GO) run ./cmd/coord-chaos -store redis -seeds $(CHAOS_SEEDS) -parallel $(CHAOS_PARALLEL) -duration 60s; r=$$?; \
	$(GO) run ./cmd/coord-chaos -store jdbc -seeds $(CHAOS_SEEDS) -parallel $(CHAOS_PARALLEL) -duration 60s && exit $$r
