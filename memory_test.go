package main

import (
	"bufio"
	"fmt"
	"os"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// procStatus reads a memory figure in kB (VmHWM: peak RSS, VmRSS) of a
// process from /proc/<pid>/status. In a test binary built with -race, whose
// detector's memory would be measured too (the server's program is this
// binary: serverBinary), it skips the test rather than pass a bound unchecked.
func procStatus(t *testing.T, pid int, field string) int {
	t.Helper()
	if raceBuild() {
		t.Skipf("%s not measured: the server runs with the race detector", field)
	}
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if v, ok := strings.CutPrefix(s.Text(), field+":"); ok {
			n, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil || n <= 0 {
				t.Fatalf("%s in /proc/%d/status: %q", field, pid, v)
			}
			return n
		}
	}
	t.Fatalf("%s not in /proc/%d/status", field, pid)
	return 0
}

// raceBuild reports whether this binary was built with -race.
func raceBuild() bool {
	bi, ok := debug.ReadBuildInfo()
	return ok && slices.Contains(bi.Settings, debug.BuildSetting{Key: "-race", Value: "true"})
}

// TestMemoryBounds reads the server process's peak resident memory with the
// default bounds: idle once the OpenAPI document is loaded, and while it
// serves a 50 MB answer. The process is this test binary running main
// (serverBinary), the server's code and the tests' besides: an upper bound
// of the built server's.
func TestMemoryBounds(t *testing.T) {
	t.Parallel()
	ts := newScriptedGitea(t).user("alice").answer("GET", "/repos/big/declared", fakeHuge(true, nil)).answer("GET", "/repos/big/chunked", fakeHuge(false, nil))
	for _, tc := range []struct {
		repo  string // "": idle
		maxKB int
	}{
		{"", 25 << 10},
		{"chunked", 40 << 10},
		{"declared", 40 << 10},
	} {
		c := startClient(t, "GITEA_URL="+ts.URL, "GITEA_TOKEN="+fakeToken)
		c.initialize("2025-11-25")
		if r := c.call("tools/list", nil); r.Error != nil {
			t.Fatal(r.Error.Message)
		}
		what := "idle after initialize and tools/list"
		if tc.repo != "" {
			what = "serving a 50 MB answer, " + tc.repo
			res, _ := c.callTool("repoGet", map[string]any{"owner": "big", "repo": tc.repo})
			if kind := str(get(res, "error.kind")); kind != "payload_too_large" {
				t.Errorf("%s: error kind %s, want payload_too_large", tc.repo, kind)
			}
		}
		peak := procStatus(t, c.cmd.Process.Pid, "VmHWM")
		t.Logf("%s: peak RSS %d kB", what, peak)
		if peak > tc.maxKB {
			t.Errorf("%s: peak RSS %d kB, want at most %d kB", what, peak, tc.maxKB)
		}
	}
}
