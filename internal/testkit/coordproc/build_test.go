package coordproc

import (
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestBuildTakesThePrebuiltBinary: with $COORDPROC_BIN_DIR holding the
// binary, Build returns it (an absolute path) and builds nothing.
func TestBuildTakesThePrebuiltBinary(t *testing.T) {
	pre := t.TempDir()
	want := filepath.Join(pre, "coordinator")
	if err := os.WriteFile(want, []byte("#!/bin/sh\n"), 0o700); err != nil {
		t.Fatal(err)
	}
	t.Setenv(BinDirEnv, pre)
	out := t.TempDir()
	got, err := Build(context.Background(), out, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	if got != want {
		t.Errorf("Build = %s, want the prebuilt %s", got, want)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("Build wrote %d files into its directory", len(entries))
	}
}
