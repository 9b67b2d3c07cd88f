package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// testClock is a fixed clock for audit tests.
func testClock() time.Time {
	return time.Date(2026, 10, 14, 12, 0, 0, 5e8, time.FixedZone("CEST", 2*3600))
}

// openTestAudit opens path with the fixed clock.
func openTestAudit(t testing.TB, path string) *auditLog {
	t.Helper()
	a, err := openAudit(path)
	if err != nil {
		t.Fatal(err)
	}
	a.now = testClock
	return a
}

// writeChain records n entries to a new file in dir and returns its lines.
func writeChain(t testing.TB, n int) []string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	a := openTestAudit(t, path)
	for i := range n {
		if err := a.record(auditEntry{Tool: fmt.Sprintf("tool%d", i), Decision: "denied"}); err != nil {
			t.Fatal(err)
		}
	}
	a.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(data), "\n")[:n]
}

func TestAuditChainAcrossReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	d := decision{Allowed: true, Tool: "gitea_merge_pr", Operation: "repoMergePullRequest", RequiredPermission: "gitea.pr.merge", Profile: "gitea-merger", Identity: "mia", Reason: "gitea.pr.merge is allowed by gitea-merger"}
	long := auditEntry{Decision: "denied", Reason: strings.Repeat("r", 10000)} // the tail spans several reads
	for round := range 3 {
		a := openTestAudit(t, path)
		a.record(auditEntryFor(d, builtin(t, "gitea-merger"), "", "POST", "https://git.example/api/v1/repos/o/r/pulls/1/merge?token=x", 200))
		a.record(long)
		if err := a.close(); err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := verifyAudit(bytes.NewReader(data)); n != 6 || err != nil {
		t.Fatalf("verifyAudit = %d, %v; want 6, nil", n, err)
	}
	first, _, _ := strings.Cut(string(data), "\n")
	var got map[string]any
	if err := json.Unmarshal([]byte(first), &got); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"time": "2026-10-14T10:00:00.5Z", "profile": "gitea-merger", "audit_label": "gitea-merger", "login": "mia", "sudo": "",
		"tool": "gitea_merge_pr", "operation": "repoMergePullRequest", "required_permission": "gitea.pr.merge", "method": "POST",
		"path": "/api/v1/repos/o/r/pulls/1/merge", "decision": "allowed", "reason": "gitea.pr.merge is allowed by gitea-merger",
		"status": 200.0, "prev": auditGenesis}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first line mismatch (-want +got):\n%s", diff)
	}
}

func TestVerifyAudit(t *testing.T) {
	lines := writeChain(t, 5)
	join := func(ls ...string) string { return strings.Join(ls, "") }
	edited := strings.Replace(lines[2], "tool2", "tool9", 1)
	tests := []struct {
		name, log string
		lines     int
		err       string
	}{
		{"intact", join(lines...), 5, ""},
		{"empty", "", 0, ""},
		{"middle line changed", join(lines[0], lines[1], edited, lines[3], lines[4]), 3, "line 4: prev does not match the sha-256 of line 3: line 3 was changed"},
		{"middle line deleted", join(lines[0], lines[1], lines[3], lines[4]), 2, "line 3: prev does not match the sha-256 of line 2"},
		{"first line deleted", join(lines[1:]...), 0, "line 1: prev is not 64 zeros"},
		{"lines swapped", join(lines[0], lines[2], lines[1], lines[3], lines[4]), 1, "line 2: prev does not match"},
		{"line inserted", join(lines[0], lines[1], lines[1], lines[2]), 2, "line 3: prev does not match"},
		{"not json", join(lines[0], "hello\n"), 1, "line 2: not a json object"},
		{"no prev", join(lines[0], `{"tool":"x"}`+"\n"), 1, "line 2: no prev field"},
		{"incomplete last line", join(lines[0], strings.TrimSuffix(lines[1], "\n")), 1, "line 2: incomplete line"},
		{"crlf", strings.ReplaceAll(join(lines[0], lines[1]), "\n", "\r\n"), 1, "line 2: prev does not match"},
		{"too long", join(lines[0], strings.Repeat("x", maxAuditLine+1)+"\n"), 1, "line 2: bufio.Scanner: token too long"},
	}
	for _, tt := range tests {
		n, err := verifyAudit(strings.NewReader(tt.log))
		if n != tt.lines || !errContains(err, tt.err) {
			t.Errorf("%s: verifyAudit = %d, %v; want %d, error containing %q", tt.name, n, err, tt.lines, tt.err)
		}
	}
}

func TestOpenAudit(t *testing.T) {
	dir := t.TempDir()
	lines := writeChain(t, 2)
	sum := sha256.Sum256([]byte(strings.TrimSuffix(lines[1], "\n")))
	tests := []struct {
		name, content, prev, err string
	}{
		{"new file", "", auditGenesis, ""},
		{"continues the chain", lines[0] + lines[1], hex.EncodeToString(sum[:]), ""},
		{"incomplete last line", strings.TrimSuffix(lines[0], "\n"), "", "the last line is incomplete"},
		{"last line too long", strings.Repeat("x", maxAuditLine+5000) + "\n", "", "the last line is longer than"},
	}
	for i, tt := range tests {
		path := filepath.Join(dir, fmt.Sprint(i))
		if tt.content != "" {
			os.WriteFile(path, []byte(tt.content), 0o600)
		}
		a, err := openAudit(path)
		if !errContains(err, tt.err) {
			t.Errorf("%s: openAudit = %v, want error containing %q", tt.name, err, tt.err)
		}
		if err == nil && a.prev != tt.prev {
			t.Errorf("%s: prev = %s, want %s", tt.name, a.prev, tt.prev)
		}
		a.close()
	}
	if a, err := openAudit(""); a != nil || err != nil {
		t.Errorf(`openAudit("") = %v, %v; want nil, nil`, a, err)
	}
	if _, err := openAudit(filepath.Join(dir, "missing", "audit.log")); !errContains(err, "audit log: open") {
		t.Errorf("openAudit in a missing directory = %v", err)
	}
}

func TestAuditRecordErrors(t *testing.T) {
	var none *auditLog
	if err := none.record(auditEntry{Decision: "allowed"}); err != nil {
		t.Errorf("nil log: record = %v", err)
	}
	if err := none.close(); err != nil {
		t.Errorf("nil log: close = %v", err)
	}
	a := openTestAudit(t, filepath.Join(t.TempDir(), "audit.log"))
	if err := a.record(auditEntry{Decision: "maybe"}); !errContains(err, `audit: decision "maybe": want allowed or denied`) {
		t.Errorf("bad decision: record = %v", err)
	}
	a.f.Close() // writes now fail, and keep failing
	for range 2 {
		if err := a.record(auditEntry{Decision: "denied"}); !errContains(err, "file already closed") {
			t.Errorf("closed file: record = %v", err)
		}
	}
}

func TestAuditConcurrent(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.log")
	a := openTestAudit(t, path)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 25 {
				if err := a.record(auditEntry{Tool: fmt.Sprint(g, i), Decision: "allowed"}); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	a.close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := verifyAudit(f); n != 200 || err != nil {
		t.Errorf("verifyAudit = %d, %v; want 200, nil", n, err)
	}
}

func TestAuditEntryFields(t *testing.T) {
	want := []string{"time", "profile", "audit_label", "login", "sudo", "tool", "action,omitempty", "operation", "required_permission",
		"method", "path", "decision", "reason", "status", "prev"}
	var got []string
	typ := reflect.TypeFor[auditEntry]()
	for i := range typ.NumField() {
		got = append(got, typ.Field(i).Tag.Get("json"))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit fields mismatch (-want +got):\n%s", diff)
	}
}

func TestRelativePath(t *testing.T) {
	tests := []struct{ in, want string }{
		{"/repos/o/r/issues", "/repos/o/r/issues"},
		{"/repos/o/r/issues?token=abc&page=2", "/repos/o/r/issues"},
		{"https://git.example/api/v1/user#x", "/api/v1/user"},
		{"https://user:pass@git.example", "/"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := relativePath(tt.in); got != tt.want {
			t.Errorf("relativePath(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func FuzzVerifyAudit(f *testing.F) {
	lines := writeChain(f, 3)
	f.Add([]byte(strings.Join(lines, "")))
	f.Add([]byte(lines[0] + `{"prev":null}` + "\n"))
	f.Add([]byte("\n\n"))
	f.Add([]byte(`{"prev":"` + auditGenesis + `"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		n, err := verifyAudit(bytes.NewReader(data))
		newlines := bytes.Count(data, []byte("\n"))
		if n > newlines || err == nil && n != newlines {
			t.Errorf("verifyAudit = %d, %v for %d lines", n, err, newlines)
		}
	})
}
