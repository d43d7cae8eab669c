# Build: docker build --build-arg VERSION=$(git describe --always --dirty) -t redis-stream-coordinator .
# Run:   docker run -p 8080:8080 -e COORDINATOR_ADMIN_PASSWORD=… -e COORDINATOR_TOKEN_SECRET=… \
#          redis-stream-coordinator [-config /etc/coordinator.yaml]
# The image listens on every interface, so the coordinator refuses the
# default admin password and an empty token secret (README, Configuration).
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# VERSION is stamped into the binary; empty falls back to the Go build info.
ARG VERSION=
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.version=${VERSION}" -o /out/coordinator ./cmd/coordinator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coordinator /coordinator
USER nonroot:nonroot
ENV COORDINATOR_SERVER_ADDRESS=:8080
EXPOSE 8080
ENTRYPOINT ["/coordinator"]
