package main

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
)

// -h, -help and --help print the usage with every flag and return nil;
// -version and --version print the version.
func TestHelpAndVersion(t *testing.T) {
	for _, arg := range []string{"-h", "-help", "--help"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, &out); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		for _, want := range []string{"Usage: coordinator", "-config", "-log-format", "-log-level", "-version"} {
			if !strings.Contains(out.String(), want) {
				t.Errorf("%s output lacks %q:\n%s", arg, want, out.String())
			}
		}
	}
	for _, arg := range []string{"-version", "--version"} {
		var out bytes.Buffer
		if err := run(context.Background(), []string{arg}, &out); err != nil {
			t.Fatalf("%s: %v", arg, err)
		}
		if got, want := out.String(), "coordinator "+buildVersion()+"\n"; got != want {
			t.Errorf("%s printed %q, want %q", arg, got, want)
		}
	}
}

// A stamped version wins over the build info.
func TestStampedVersion(t *testing.T) {
	defer func(v string) { version = v }(version)
	if buildVersion() == "" {
		t.Error("unstamped version is empty")
	}
	version = "v1.2.3-4-gabcdef-dirty"
	if got := buildVersion(); got != version {
		t.Errorf("buildVersion() = %q, want the stamped %q", got, version)
	}
}

// newLogger drops records below the level.
func TestLogLevel(t *testing.T) {
	var out bytes.Buffer
	logger, err := newLogger(&out, "json", slog.LevelWarn)
	if err != nil {
		t.Fatal(err)
	}
	logger.Info("hidden")
	logger.Warn("shown")
	if s := out.String(); strings.Contains(s, "hidden") || !strings.Contains(s, "shown") {
		t.Errorf("warn logger wrote %q", s)
	}
}

// go-redis messages become structured warnings of component go-redis.
func TestRedisLogger(t *testing.T) {
	var out bytes.Buffer
	redisLogger{slog.New(slog.NewJSONHandler(&out, nil))}.Printf(context.Background(), "redis: dial %s: %v", "127.0.0.1:1", "refused")
	var rec map[string]any
	if err := json.Unmarshal(out.Bytes(), &rec); err != nil {
		t.Fatalf("%v: %q", err, out.String())
	}
	if rec["level"] != "WARN" || rec["msg"] != "redis: dial 127.0.0.1:1: refused" || rec["component"] != "go-redis" {
		t.Errorf("record %v", rec)
	}
}
