package main

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestRunRejectsBadOptions(t *testing.T) {
	for _, args := range [][]string{
		{"-scenarios", "nope"},
		{"-store", "mongo"},
		{"-release", "never"},
		{"-members", "0"},
		{"extra"},
	} {
		if err := run(context.Background(), args, io.Discard); err == nil {
			t.Errorf("%s accepted", strings.Join(args, " "))
		}
	}
}
