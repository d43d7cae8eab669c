# Redis Stream Coordinator: build, run, lint and test.
GO ?= go
BIN := bin/coordinator
# VERSION is stamped into the binary (coordinator -version, /actuator/info).
VERSION ?= $(shell git describe --always --dirty 2>/dev/null || echo unknown)

.PHONY: build run test chart fuzz lint services bench chaos

build:
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags "-X main.version=$(VERSION)" -o $(BIN) ./cmd/coordinator
	CGO_ENABLED=0 $(GO) build -trimpath -o bin/coordctl ./cmd/coordctl

run:
	$(GO) run ./cmd/coordinator

# services starts Redis and PostgreSQL when they do not answer and prepares
# PostgreSQL for the tests (passwordless loopback access, database test);
# see .ci/services. The Redis and SQL store tests need them.
services:
	@bash .ci/services

# test runs the whole suite: the module's tests with -race (but those of
# RACE_FREE, below, which run without), the Helm chart module (make chart)
# and the fuzz targets (make fuzz), and fails when any of them fails. It builds the commands that tests run as processes once
# into bin/test (plain go build, like coordproc.Build: the tests need no
# -race binaries, and one of them bounds the coordinator's RSS, which a
# -race binary's shadow memory exceeds) and points the tests at them with
# COORDPROC_BIN_DIR, so that each test package does not build and link them
# again; without the variable (a plain go test) coordproc.Build builds them
# itself. -vet=off: go test's vet subset re-checks each package that make
# lint's full go vet ./... checks (.ci/run runs both), a compile-sized step
# per package on 2 cores.
# make chart and make fuzz run beside the -race suite at nice 10, their
# output kept in bin/test/chart.log and bin/test/fuzz.log and printed after
# the suite's. They compile what the suite never does (Helm and the
# Kubernetes API types; every package again with fuzzing instrumentation),
# while the suite's test runs leave most of the CPU idle (they wait on
# heartbeats, leases and processes): on a cold cache that compiling fills
# the idle time instead of following the suite, on a warm one they end
# within it. At nice 10 they get the CPU that the suite's compiles and test
# processes leave, so the suite runs about as it would alone. The chart
# starts once bin/test is built, since both compile the standard library
# without instrumentation (built once that way); the fuzzing builds share
# nothing with either and start first. docs/testing.md has the
# measurements, cold and warm, per phase.
# TEST_P is go test's -p, the packages built or tested at once (by default
# GOMAXPROCS, 2 here): most of a test binary's time is waiting, and with 2
# slots two waiting binaries held the builds of the next ones (the suite
# warm: 178 s with 2, 141 s with 4). TEST_NICE is the niceness of the chart
# and the fuzzing. SUBMAKE, not $(MAKE) in the recipe: make -n runs every
# recipe line that names $(MAKE), and this one runs the suite too.
# RACE_FREE are the packages whose tests run without -race: in their test
# binaries the module's code starts no goroutine (the package, its tests and
# the module's packages they import; none calls t.Parallel), which
# internal/testkit/purity's TestRaceFreePackages checks against this line.
# The race detector has nothing to watch there, and it made their property
# tests 4 to 8 times slower (group: 14 s of CPU against 2 s, placement 6
# against 1.6). They run beside the -race suite once bin/test is built,
# whose plain compiles of the packages they import they reuse.
SUBMAKE = $(MAKE) --no-print-directory
TEST_P ?= 4
TEST_NICE ?= 10
TEST_BIN := bin/test
TEST_CMDS := ./cmd/coordinator ./cmd/sample-producer ./cmd/sample-consumer
RACE_FREE := ./group ./group/assignor ./placement ./actors/core ./contract ./config ./internal/batchwire
test: services
	@mkdir -p $(TEST_BIN); rc=0; \
	nice -n $(TEST_NICE) $(SUBMAKE) fuzz >$(TEST_BIN)/fuzz.log 2>&1 & fuzz=$$!; \
	echo '$(GO) build -o $(TEST_BIN)/ $(TEST_CMDS)'; \
	$(GO) build -o $(TEST_BIN)/ $(TEST_CMDS) || rc=1; \
	{ nice -n $(TEST_NICE) $(GO) test -vet=off -count=1 $(RACE_FREE); s=$$?; nice -n $(TEST_NICE) $(SUBMAKE) chart || s=1; exit $$s; } >$(TEST_BIN)/chart.log 2>&1 & chart=$$!; \
	if [ $$rc = 0 ]; then \
		free=$$($(GO) list $(RACE_FREE)) && race=$$($(GO) list ./... | grep -vxF "$$free") || rc=1; \
		echo 'COORDPROC_BIN_DIR=$(CURDIR)/$(TEST_BIN) $(GO) test -p $(TEST_P) -race -vet=off -count=1 <./... but $(RACE_FREE)>'; \
		COORDPROC_BIN_DIR=$(CURDIR)/$(TEST_BIN) $(GO) test -p $(TEST_P) -race -vet=off -count=1 $$race || rc=1; \
	fi; \
	wait $$chart || rc=1; echo '--- $(GO) test -vet=off -count=1 $(RACE_FREE), make chart (bin/test/chart.log)'; cat $(TEST_BIN)/chart.log; \
	wait $$fuzz || rc=1; echo '--- make fuzz (bin/test/fuzz.log)'; cat $(TEST_BIN)/fuzz.log; \
	exit $$rc

# chart renders the Helm chart and checks it (deploy/helm/charttest, a module
# of its own so that Helm and the Kubernetes API types stay out of the main
# one). -vet=off: vet's facts for the ~520 packages under it were a fifth of
# the module's cold build; make lint vets the module instead. CHART_GCFLAGS
# compile Helm and the Kubernetes packages without optimisation or inlining
# (the test runs for a second; their cold compile took 109 s of CPU with
# optimisation, 98 s without) and leave the standard library's and the
# coordinator's flags as they are, so that their compiles for bin/test are
# reused.
CHART_TEST := deploy/helm/charttest
CHART_GCFLAGS := -gcflags='all=-N -l' -gcflags='std=' -gcflags='github.com/redis-stream-coordinator/coordinator/...='
chart:
	cd $(CHART_TEST) && $(GO) test -vet=off -count=1 $(CHART_GCFLAGS) ./...

# fuzz runs each Go native fuzz target (package:target) for FUZZTIME, one
# run of the package's fuzzing test binary per target since Go fuzzes one
# target per run. Fuzzing compiles every package of the test binary, the
# standard library included, with coverage instrumentation: on a cold cache
# that build is the step's main cost (./http/httpfuzz, the edge over a fake
# runtime, has ~270 packages). So each package's fuzzing binary is built
# once into bin/fuzz (go test -c -fuzz '^$'), one package after the other
# so that the packages they share are compiled once, and every target of
# the package runs that binary, from the package's directory (where its
# testdata/fuzz seeds are) with go test's fuzz cache
# ($GOCACHE/fuzz/<import path>): go test would link the binary again for
# each target. The packages fuzz at once, one fuzzing worker each, the
# targets of one package one after the other. -vet=off as in make test.
# FUZZTIME is a count of inputs: with a duration, Go 1.26 can fail a target
# with a bare "context deadline exceeded" when the deadline passes while a
# worker is mid-input (go.dev/issue/75804, fixed in Go 1.27), which a
# loaded CI machine hits. The targets: the heartbeat route's decoder and
# validator, every route with and without credentials, the heartbeat
# validator in front of the state machine, and the decoder of
# forwarded-heartbeat batches. Each target's output is printed when it
# ends. The plain suite runs their seeds only. A failing input is written
# to the package's testdata/fuzz/<target>/ and joins the seeds once
# committed.
FUZZTIME ?= 20000x
FUZZ_TARGETS = ./http/httpfuzz:FuzzHeartbeat ./http/httpfuzz:FuzzRequest ./group:FuzzValidateHeartbeat ./internal/batchwire:FuzzItems
FUZZ_PACKAGES = $(sort $(foreach t,$(FUZZ_TARGETS),$(firstword $(subst :, ,$(t)))))
FUZZ_BIN := bin/fuzz
fuzz:
	@mkdir -p $(FUZZ_BIN); for p in $(FUZZ_PACKAGES); do \
		out=$$($(GO) test -c -vet=off -fuzz '^$$' -o "$(CURDIR)/$(FUZZ_BIN)/$$(echo "$${p#./}" | tr / -).test" "$$p" 2>&1) || \
			{ printf 'fuzz: the fuzzing build of %s failed\n%s\n' "$$p" "$$out"; exit 1; }; \
	done
	@cache=$$($(GO) env GOCACHE)/fuzz; pids=; for p in $(FUZZ_PACKAGES); do \
		( rc=0; bin="$(CURDIR)/$(FUZZ_BIN)/$$(echo "$${p#./}" | tr / -).test"; path=$$($(GO) list "$$p"); \
		  for t in $(FUZZ_TARGETS); do [ "$${t%%:*}" = "$$p" ] || continue; \
		    out=$$(cd "$$p" && "$$bin" -test.run '^$$' -test.fuzz "^$${t#*:}\$$" -test.fuzztime $(FUZZTIME) -test.parallel 1 \
		      -test.fuzzcachedir "$$cache/$$path" -test.timeout 10m 2>&1); s=$$?; \
		    printf 'fuzz %s (%s) for %s: exit %d\n%s\n' "$${t#*:}" "$$p" "$(FUZZTIME)" $$s "$$out"; [ $$s -eq 0 ] || rc=1; \
		  done; exit $$rc ) & pids="$$pids $$!"; \
	done; rc=0; for p in $$pids; do wait $$p || rc=1; done; exit $$rc

# lint runs staticcheck and gosec from PATH or the Go bin directory; .ci/run
# installs them when missing (go install …@VERSION, pinned there).
# gosec checks the code that ships (the coordinator, coordctl, the Go client,
# the samples and every library package); each finding there is fixed or
# justified in place (// #nosec Gxxx -- reason). It skips, like _test.go
# files, the test harnesses that are never deployed: bench and chaos (and
# cmd/coord-bench, cmd/coord-chaos: the directory patterns match them), and
# the test kit's testredis, redisproc, pgproc, coordproc and storetest
# (under internal/testkit). They start redis-server, PostgreSQL, go build
# and the coordinator on purpose (G204), draw seeded math/rand schedules so
# that a run can be replayed (G404) and write their result files 0644
# (G306). (internal/testkit/purity justifies its findings in place.)
GOBIN_DIR = $(shell d=$$($(GO) env GOBIN); echo $${d:-$$($(GO) env GOPATH)/bin})
GOSEC_SKIP = -exclude-dir=bench -exclude-dir=chaos -exclude-dir=internal/testkit/testredis \
	-exclude-dir=internal/testkit/redisproc -exclude-dir=internal/testkit/pgproc -exclude-dir=internal/testkit/coordproc \
	-exclude-dir=internal/testkit/storetest
lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd $(CHART_TEST) && $(GO) vet ./...
	PATH="$$PATH:$(GOBIN_DIR)" staticcheck ./...
	PATH="$$PATH:$(GOBIN_DIR)" gosec -quiet -fmt text -color=false $(GOSEC_SKIP) ./...

# bench runs the default load suite of cmd/coord-bench (bench.DefaultScenarios,
# in this order; about 9 minutes on 2 cores): ceiling, steady (closed, open
# at half the ceiling and at the members' own rate) and baseline on Redis
# with 10,000 members, multi (one, then three coordinators on that group, 75 s each),
# store, peer (the hand-rolled Redis lease baseline), dataplane
# (client.Consumer against a plain go-redis loop: goals P12a-b), work (count
# vs work assignor under skewed traffic, about 3 minutes: goals P10a-d),
# cluster (30 groups on three coordinators, a rolling restart and a SIGKILL),
# fleet (10,000 groups of 16 shards created with max-groups set, idle on three
# coordinators, then 10 members per group and the SIGTERM of one coordinator,
# 10 minutes on a busy machine: goals P11a-e), scaling (a load step and a
# noisy steady load against desiredMembers, 100 s: goals P13a-d), churn with both release
# policies, assignor (the assignor benchmarks) and heap. It prints goals and
# writes bench/results/<date>-bench.json (docs/benchmarks.md). The 100-group
# run is -scenarios groups, the scrape run -scenarios scrape (not in the
# default list).
bench: services
	$(GO) run ./cmd/coord-bench -name bench -duration 8s

# chaos runs the fault-injection suite of cmd/coord-chaos (package chaos):
# 50 seeds of 60 s each on a throwaway Redis, then on PostgreSQL, 4 runs at
# once (31 minutes on 2 cores, docs/safety.md). It prints every overlap, settle, admin
# and epoch violation with its timeline; replay one with
# go run ./cmd/coord-chaos -store redis -seed N.
CHAOS_SEEDS ?= 50
CHAOS_PARALLEL ?= 4
chaos: services
	$(GO) run ./cmd/coord-chaos -store redis -seeds $(CHAOS_SEEDS) -parallel $(CHAOS_PARALLEL) -duration 60s; r=$$?; \
	$(GO) run ./cmd/coord-chaos -store jdbc -seeds $(CHAOS_SEEDS) -parallel $(CHAOS_PARALLEL) -duration 60s && exit $$r

# demo runs the Go client's demo as local processes on the local Redis: a
# coordinator with the monitoring stack's configuration
# (deploy/coordinator/coordinator.yaml: Redis store, members authenticated,
# the users admin, grafana and member) on port DEMO_PORT with stream
# provisioning on, the group demo/demo-workers created through the REST API
# as admin, the sample producer (as admin) and two sample consumers, which
# log in as the MEMBER user DEMO_MEMBER_USER / DEMO_MEMBER_PASSWORD
# (COORDINATOR_USER, COORDINATOR_PASSWORD). Ctrl-C stops them all: the
# producer and the consumers first (the consumers leave the group), then
# the coordinator, which runs in its own session so that Ctrl-C reaches it
# last. See docs/client.md.
DEMO_PORT ?= 8080
DEMO_URL = http://127.0.0.1:$(DEMO_PORT)
DEMO_MEMBER_USER ?= member
DEMO_MEMBER_PASSWORD ?= member-password
.PHONY: demo
demo:
	@bash .ci/services redis
	@$(GO) build -o bin/demo/ ./cmd/coordinator ./cmd/sample-producer ./cmd/sample-consumer
	@export REDIS_HOST=127.0.0.1 REDIS_PORT=6379 COORDINATOR_STREAMS_PROVISIONING_ENABLED=true \
	  COORDINATOR_SERVER_ADDRESS=127.0.0.1:$(DEMO_PORT) COORDINATOR_STORE_KEY_PREFIX=demo:coord \
	  COORDINATOR_MEMBER_USER='$(DEMO_MEMBER_USER)' COORDINATOR_MEMBER_PASSWORD='$(DEMO_MEMBER_PASSWORD)' \
	  COORDINATOR_URL=$(DEMO_URL)/coord/v1 STREAM_PREFIX=demo CONSUMER_GROUP=demo-workers; \
	setsid bin/demo/coordinator -config deploy/coordinator/coordinator.yaml -log-format text -log-level warn & coord=$$!; \
	trap 'kill $$clients 2>/dev/null; wait $$clients; kill $$coord 2>/dev/null; wait $$coord' EXIT; \
	trap 'exit 130' INT TERM; \
	for i in $$(seq 150); do curl -sf $(DEMO_URL)/readyz >/dev/null && break; sleep 0.2; done; \
	curl -s -u admin:password -X POST $(DEMO_URL)/coord/v1/streams/demo/groups/demo-workers \
	  -H 'Content-Type: application/json' -d '{"initialShardCount":4,"requestedBy":"make-demo"}'; echo; \
	export COORDINATOR_USER="$$COORDINATOR_MEMBER_USER" COORDINATOR_PASSWORD="$$COORDINATOR_MEMBER_PASSWORD"; \
	bin/demo/sample-consumer -member consumer-1 & clients=$$!; \
	bin/demo/sample-consumer -member consumer-2 & clients="$$clients $$!"; \
	COORDINATOR_USER=admin COORDINATOR_PASSWORD=password bin/demo/sample-producer -rate 200 & clients="$$clients $$!"; \
	wait $$clients
