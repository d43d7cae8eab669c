package bench

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	line := []byte("4242 (odd) name) S 1 4242 4242 0 -1 4194560 1200 0 0 0 250 70 0 0 20 0 12 0 100 0\n")
	got, err := parseStatCPU(line)
	if err != nil || got != 3200*time.Millisecond {
		t.Fatalf("cpu %v, %v; want 3.2s", got, err)
	}
	if _, err := parseStatCPU([]byte("1 (x) S 1 2")); err == nil {
		t.Error("short line accepted")
	}
}

func TestParseStatusKB(t *testing.T) {
	status := []byte("Name:\tcoordinator\nVmPeak:\t  900 kB\nVmHWM:\t   51234 kB\nVmRSS:\t 40000 kB\n")
	if got, err := parseStatusKB(status, "VmHWM"); err != nil || got != 51234 {
		t.Fatalf("VmHWM %d, %v", got, err)
	}
	if _, err := parseStatusKB(status, "VmSwap"); err == nil {
		t.Error("missing line accepted")
	}
}

func TestReadProcOfSelf(t *testing.T) {
	u, err := readProc(os.Getpid())
	if err != nil || u.PeakRSS <= 0 || u.CPU < 0 {
		t.Fatalf("usage %+v, %v", u, err)
	}
}

func TestParseMachineBusy(t *testing.T) {
	stat := []byte("cpu  100 5 50 9000 40 3 2 0 0 0\ncpu0 50 2 25 4500 20 1 1 0 0 0\n")
	if got, err := parseMachineBusy(stat); err != nil || got != 1600*time.Millisecond {
		t.Fatalf("busy %v, %v; want 1.6s", got, err)
	}
	if _, err := parseMachineBusy([]byte("intr 1 2")); err == nil {
		t.Error("wrong line accepted")
	}
}
