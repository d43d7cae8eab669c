package bench

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"time"
)

// userHZ is Linux's USER_HZ, the unit of the CPU times in /proc/<pid>/stat
// (100 on every architecture Go supports).
const userHZ = 100

// ProcUsage is a process's resource usage as /proc reports it.
type ProcUsage struct {
	// CPU is user + system CPU time.
	CPU time.Duration
	// PeakRSS is VmHWM, the resident set's high-water mark, in bytes.
	PeakRSS int64
}

// readProc reads the usage of process pid.
func readProc(pid int) (ProcUsage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcUsage{}, err
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return ProcUsage{}, err
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return ProcUsage{}, err
	}
	rss, err := parseStatusKB(status, "VmHWM")
	if err != nil {
		return ProcUsage{}, err
	}
	return ProcUsage{CPU: cpu, PeakRSS: rss * 1024}, nil
}

// resetPeakRSS restarts pid's VmHWM from its current RSS (Linux ≥ 4.0);
// where that is not permitted the peak keeps counting from the start.
func resetPeakRSS(pid int) {
	_ = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// parseStatCPU returns utime + stime of a /proc/<pid>/stat line. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from its closing parenthesis.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("proc stat %q: no command name", stat)
	}
	f := bytes.Fields(stat[i+1:]) // f[0] is field 3 (state)
	if len(f) < 13 {
		return 0, fmt.Errorf("proc stat %q: too few fields", stat)
	}
	var ticks int64
	for _, field := range f[11:13] { // fields 14 utime, 15 stime
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// parseStatusKB returns the value in kB of the line "name:  value kB" of
// a /proc/<pid>/status file.
func parseStatusKB(status []byte, name string) (int64, error) {
	for line := range bytes.SplitSeq(status, []byte("\n")) {
		rest, ok := bytes.CutPrefix(line, []byte(name+":"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("proc status %s: %q", name, line)
		}
		return strconv.ParseInt(string(f[0]), 10, 64)
	}
	return 0, fmt.Errorf("proc status: no %s line", name)
}

// readMachineBusy reads the CPU time all processors spent outside idle
// and iowait since boot.
func readMachineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, err
	}
	return parseMachineBusy(b)
}

// parseMachineBusy sums user, nice, system, irq, softirq and steal of the
// "cpu" line of /proc/stat (guest time is already inside user and nice).
func parseMachineBusy(stat []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(stat, []byte("\n"))
	f := bytes.Fields(line)
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0, fmt.Errorf("proc stat: unexpected first line %q", line)
	}
	var ticks int64
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(string(f[i]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("proc stat: %w", err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
