package audit

import (
	"context"
	"errors"
	"log/slog"
)

// LoggerName names the audit logger (the "logger" attribute of every line).
const LoggerName = "redis-stream-coordinator.audit"

// Sink stores audit events. Implementations are safe for concurrent use.
type Sink interface {
	Record(ctx context.Context, e Event) error
}

// History reads back recent events for the monitoring views.
type History interface {
	// Recent returns up to n of the latest events of group (P, G), or of
	// stream P's stream-level actions when consumerGroup is "", newest
	// first. n ≤ 0 yields none.
	Recent(ctx context.Context, streamPrefix, consumerGroup string, n int) ([]Event, error)
}

// Tee returns a sink that records to every sink in order and joins their
// errors; one failing sink does not stop the others.
func Tee(sinks ...Sink) Sink { return tee(sinks) }

type tee []Sink

func (t tee) Record(ctx context.Context, e Event) error {
	errs := make([]error, 0, len(t))
	for _, s := range t {
		errs = append(errs, s.Record(ctx, e))
	}
	return errors.Join(errs...)
}

// LogSink writes each event as one INFO record with attribute
// logger=redis-stream-coordinator.audit followed by the event's fields
// under their JSON names (a JSON line with slog.JSONHandler, key=value
// pairs with slog.TextHandler).
type LogSink struct {
	logger *slog.Logger
}

// NewLogSink returns a sink writing to logger (slog.Default() when nil).
func NewLogSink(logger *slog.Logger) *LogSink {
	if logger == nil {
		logger = slog.Default()
	}
	return &LogSink{logger: logger}
}

// Record logs e; it never fails.
func (s *LogSink) Record(ctx context.Context, e Event) error {
	attrs := append([]slog.Attr{slog.String("logger", LoggerName)}, e.attrs()...)
	s.logger.LogAttrs(ctx, slog.LevelInfo, "audit", attrs...)
	return nil
}
