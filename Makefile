# Redis Stream Coordinator: build, run, lint and test.
GO ?= go
BIN := bin/coordinator

.PHONY: build run test lint services

build:
	CGO_ENABLED=0 $(GO) build -trimpath -o $(BIN) ./cmd/coordinator

run:
	$(GO) run ./cmd/coordinator

# services starts Redis and PostgreSQL when they do not answer, then waits
# until both accept connections. The Redis and SQL store tests need them.
services:
	@redis-cli ping >/dev/null 2>&1 || { \
		mkdir -p /var/lib/redis /var/log/redis && \
		redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
			--dir /var/lib/redis --logfile /var/log/redis/ci.log; }
	@pg_isready -q || pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@for i in $$(seq 100); do redis-cli ping >/dev/null 2>&1 && pg_isready -q && exit 0; sleep 0.1; done; \
		echo "services: Redis or PostgreSQL did not come up" >&2; exit 1

test: services
	$(GO) test -race -count=1 ./...

lint:
	@unformatted=$$(gofmt -l .); if [ -n "$$unformatted" ]; then echo "gofmt -l:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
