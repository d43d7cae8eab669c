# Build: docker build -t redis-stream-coordinator .
# Run:   docker run -p 8080:8080 redis-stream-coordinator [-config /etc/coordinator.yaml]
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/coordinator ./cmd/coordinator

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/coordinator /coordinator
USER nonroot:nonroot
EXPOSE 8080
ENTRYPOINT ["/coordinator"]
