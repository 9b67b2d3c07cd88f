package main

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
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

// auditTestKey is a GITEA_AUDIT_KEY for tests (hex), and auditKeyBytes its bytes.
const auditTestKey = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"

var auditKeyBytes, _ = hex.DecodeString(auditTestKey)

// openTestAudit opens path with key (nil: unkeyed) and the fixed clock.
func openTestAudit(t testing.TB, path string, key []byte) *auditLog {
	t.Helper()
	a, err := openAudit(path, key)
	if err != nil {
		t.Fatal(err)
	}
	a.now = testClock
	return a
}

// writeChain records n entries with key to a new file and returns its lines
// and the head.
func writeChain(t testing.TB, n int, key []byte) ([]string, auditHead) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.log")
	a := openTestAudit(t, path, key)
	for i := range n {
		if err := a.record(auditEntry{Tool: fmt.Sprintf("tool%d", i), Decision: "denied"}); err != nil {
			t.Fatal(err)
		}
	}
	head, _ := a.head()
	a.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.SplitAfter(string(data), "\n")[:n], head
}

// resealed recomputes the chain of lines (the mac of each, in order) with key,
// as someone who edited them would.
func resealed(lines []string, key []byte) []string {
	c := newAuditChain(key)
	var out []string
	for _, l := range lines {
		content := l[:len(l)-1-auditMACLen] + "}"
		content = regexp.MustCompile(`"prev":"[0-9a-f]{64}"`).ReplaceAllString(content, `"prev":"`+c.head.MAC+`"`)
		line, mac := c.seal([]byte(content))
		c.advance(mac)
		out = append(out, string(line))
	}
	return out
}

func TestAuditChainAcrossReopen(t *testing.T) {
	t.Parallel()
	for _, key := range [][]byte{nil, auditKeyBytes} {
		path := filepath.Join(t.TempDir(), "audit.log")
		d := decision{Allowed: true, Tool: "gitea_merge_pr", Operation: "repoMergePullRequest", RequiredPermission: "gitea.pr.merge", Profile: "gitea-merger", Identity: "mia", Reason: "gitea.pr.merge is allowed by gitea-merger"}
		long := auditEntry{Decision: "denied", Reason: strings.Repeat("r", 10000)}
		var head auditHead
		for round := range 3 {
			a := openTestAudit(t, path, key)
			a.record(auditEntryFor(d, builtin(t, "gitea-merger"), "POST", "https://git.example/api/v1/repos/o/r/pulls/1/merge?token=x", 200))
			a.record(long)
			head, _ = a.head()
			if err := a.close(); err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := verifyAudit(bytes.NewReader(data), key, &head); got != head || head.Lines != 6 || err != nil {
			t.Fatalf("key %v: verifyAudit = %v, %v; want %v, nil", key != nil, got, err, head)
		}
		first, _, _ := strings.Cut(string(data), "\n")
		var got map[string]any
		if err := json.Unmarshal([]byte(first), &got); err != nil {
			t.Fatal(err)
		}
		mac, _ := got["mac"].(string)
		delete(got, "mac")
		want := map[string]any{"time": "2026-10-14T10:00:00.5Z", "profile": "gitea-merger", "audit_label": "gitea-merger", "login": "mia", "sudo": "",
			"tool": "gitea_merge_pr", "operation": "repoMergePullRequest", "required_permission": "gitea.pr.merge", "method": "POST",
			"path": "/api/v1/repos/o/r/pulls/1/merge", "decision": "allowed", "rule": "policy", "reason": "gitea.pr.merge is allowed by gitea-merger",
			"status": 200.0, "prev": auditGenesis}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("first line mismatch (-want +got):\n%s", diff)
		}
		if len(mac) != 64 {
			t.Errorf("mac %q", mac)
		}
	}
}

func TestVerifyAudit(t *testing.T) {
	t.Parallel()
	key, other := auditKeyBytes, bytes.Repeat([]byte{7}, 32)
	for _, keyed := range []bool{false, true} {
		k := map[bool][]byte{true: key}[keyed]
		lines, head := writeChain(t, 5, k)
		join := func(ls ...string) string { return strings.Join(ls, "") }
		edit := func(i int) []string {
			out := slices.Clone(lines)
			out[i] = strings.Replace(out[i], `"decision":"denied"`, `"decision":"allowed"`, 1)
			return out
		}
		wrongHead := auditHead{5, strings.Repeat("a", 64)}
		unkeyed := resealed(edit(4), nil) // the whole chain recomputed without a key, after an edit
		tests := []verifyCase{
			{"intact", join(lines...), k, nil, 5, ""},
			{"intact with its head", join(lines...), k, &head, 5, ""},
			{"intact, head of an earlier line", join(lines...), k, &auditHead{2, strings.TrimSuffix(lines[1][len(lines[1])-67:], "\"}\n")}, 5, ""},
			{"empty", "", k, nil, 0, ""},
			{"empty with the genesis head", "", k, &auditHead{0, auditGenesis}, 0, ""},
			{"first line changed", join(edit(0)...), k, nil, 0, "line 1: mac does not match"},
			{"middle line changed", join(edit(2)...), k, nil, 2, "line 3: mac does not match"},
			{"last line changed", join(edit(4)...), k, nil, 4, "line 5: mac does not match"},
			{"tail dropped, with the head", join(lines[:3]...), k, &head, 3, "the log ends at line 3, but its head was line 5: lines were dropped from the end"},
			{"head differs", join(lines...), k, &wrongHead, 5, "line 5: its mac is not the head's"},
			{"first line deleted", join(lines[1:]...), k, nil, 0, map[bool]string{false: "line 1: prev is not 64 zeros", true: "line 1: mac does not match"}[keyed]},
			{"middle line deleted", join(lines[0], lines[1], lines[3], lines[4]), k, nil, 2, map[bool]string{false: "line 3: prev is not the mac of line 2", true: "line 3: mac does not match"}[keyed]},
			{"line inserted", join(lines[0], lines[1], lines[1], lines[2]), k, nil, 2, map[bool]string{false: "line 3: prev is not the mac of line 2", true: "line 3: mac does not match"}[keyed]},
			{"two lines swapped", join(lines[0], lines[2], lines[1], lines[3], lines[4]), k, nil, 1, map[bool]string{false: "line 2: prev is not the mac of line 1", true: "line 2: mac does not match"}[keyed]},
			{"tail dropped, no head: not seen", join(lines[:3]...), k, nil, 3, ""}, // why the head is kept elsewhere
			{"recomputed without the key, with the head", join(unkeyed...), k, &head, map[bool]int{false: 5, true: 0}[keyed], map[bool]string{false: "line 5: its mac is not the head's", true: "line 1: mac does not match"}[keyed]},
			{"not json", join(lines[0], "hello\n"), k, nil, 1, "line 2: does not end with its mac"},
			{"not json, with a mac", join(lines[0], `{"x":`+lines[1][len(lines[1])-auditMACLen-1:]), k, nil, 1, "line 2: not a json object"},
			{"incomplete last line", join(lines[0], strings.TrimSuffix(lines[1], "\n")), k, nil, 1, "line 2: incomplete line"},
			{"crlf", strings.ReplaceAll(join(lines[0], lines[1]), "\n", "\r\n"), k, nil, 0, "line 1: does not end with its mac"},
			{"too long", join(lines[0], strings.Repeat("x", maxAuditLine+1)+"\n"), k, nil, 1, "line 2: bufio.Scanner: token too long"},
		}
		if keyed {
			tests = append(tests, []verifyCase{
				{"recomputed without the key", join(unkeyed...), k, nil, 0, "line 1: mac does not match: the line was changed, or the log was not written with this GITEA_AUDIT_KEY"},
				{"another key", join(lines...), other, nil, 0, "line 1: mac does not match"},
				{"no key", join(lines...), nil, nil, 0, "line 1: mac does not match the sha-256 of the line"},
			}...)
		} else {
			tests = append(tests, []verifyCase{
				// Without a key, a recomputed chain verifies: only the head shows it.
				{"recomputed, no head", join(unkeyed...), nil, nil, 5, ""},
				{"with a key", join(lines...), key, nil, 0, "line 1: mac does not match: the line was changed, or the log was not written with this GITEA_AUDIT_KEY"},
			}...)
		}
		for _, tt := range tests {
			got, err := verifyAudit(strings.NewReader(tt.log), tt.key, tt.head)
			if got.Lines != tt.want || !errContains(err, tt.err) || tt.err == "" && err != nil {
				t.Errorf("keyed %v, %s: verifyAudit = %d, %v; want %d, error containing %q", keyed, tt.name, got.Lines, err, tt.want, tt.err)
			}
		}
	}
}

// TestAuditKeyForwardSecure: the key held after n lines is none of the keys
// that sealed them, and cannot recompute their macs.
func TestAuditKeyForwardSecure(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	a := openTestAudit(t, path, auditKeyBytes)
	for range 3 {
		a.record(auditEntry{Decision: "denied"})
	}
	data, _ := os.ReadFile(path)
	lines := strings.SplitAfter(string(data), "\n")[:3]
	earlier := [][]byte{auditKeyBytes}
	for range 2 {
		m := hmac.New(sha256.New, earlier[len(earlier)-1])
		m.Write([]byte("next"))
		earlier = append(earlier, m.Sum(nil))
	}
	now := a.chain.key
	for i, k := range earlier {
		if bytes.Equal(now, k) {
			t.Errorf("the key after 3 lines is the key of line %d", i+1)
		}
		c := &auditChain{key: now}
		content := lines[i][:len(lines[i])-1-auditMACLen] + "}"
		if strings.Contains(lines[i], c.mac([]byte(content))) {
			t.Errorf("the current key recomputes line %d's mac", i+1)
		}
	}
	if v := reflect.TypeFor[auditLog](); v.NumField() != 7 {
		t.Errorf("auditLog has %d fields; check that none keeps an earlier key", v.NumField())
	}
	a.close()
	if !bytes.Equal(now, make([]byte, 32)) {
		t.Error("close left the key in memory")
	}
}

func TestOpenAudit(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	lines, head := writeChain(t, 2, nil)
	keyed, keyedHead := writeChain(t, 2, auditKeyBytes)
	tests := []struct {
		name, content string
		key           []byte
		head          auditHead
		err           string
	}{
		{"new file", "", nil, auditHead{0, auditGenesis}, ""},
		{"continues the chain", lines[0] + lines[1], nil, head, ""},
		{"continues a keyed chain", keyed[0] + keyed[1], auditKeyBytes, keyedHead, ""},
		{"a keyed chain without its key", keyed[0] + keyed[1], nil, auditHead{}, "does not verify, so it cannot be continued: line 1: mac does not match"},
		{"an edited chain", lines[0] + strings.Replace(lines[1], "tool1", "tool9", 1), nil, auditHead{}, "line 2: mac does not match"},
		{"incomplete last line", strings.TrimSuffix(lines[0], "\n"), nil, auditHead{}, "line 1: incomplete line"},
		{"an older log", `{"prev":"` + auditGenesis + `"}` + "\n", nil, auditHead{}, "line 1: does not end with its mac"},
	}
	for i, tt := range tests {
		path := filepath.Join(dir, fmt.Sprint(i))
		if tt.content != "" {
			os.WriteFile(path, []byte(tt.content), 0o600)
		}
		a, err := openAudit(path, tt.key)
		if !errContains(err, tt.err) || tt.err == "" && err != nil {
			t.Errorf("%s: openAudit = %v, want error containing %q", tt.name, err, tt.err)
		}
		if err == nil {
			if got, _ := a.head(); got != tt.head {
				t.Errorf("%s: head = %v, want %v", tt.name, got, tt.head)
			}
			a.close()
		}
	}
	if a, err := openAudit("", nil); a != nil || err != nil {
		t.Errorf(`openAudit("") = %v, %v; want nil, nil`, a, err)
	}
	if _, err := openAudit(filepath.Join(dir, "missing", "audit.log"), nil); !errContains(err, "audit log: open") {
		t.Errorf("openAudit in a missing directory = %v", err)
	}
}

func TestLoadAuditKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "key")
	os.WriteFile(file, []byte(auditTestKey+"\n"), 0o600)
	short := filepath.Join(dir, "short")
	os.WriteFile(short, []byte("abcd"), 0o600)
	b64 := base64.StdEncoding.EncodeToString(auditKeyBytes)
	tests := []struct {
		env map[string]string
		key []byte
		err string
	}{
		{nil, nil, ""},
		{map[string]string{"GITEA_AUDIT_KEY": auditTestKey}, auditKeyBytes, ""},
		{map[string]string{"GITEA_AUDIT_KEY": b64}, auditKeyBytes, ""},
		{map[string]string{"GITEA_AUDIT_KEY_FILE": file}, auditKeyBytes, ""},
		{map[string]string{"GITEA_AUDIT_KEY": "secret-value"}, nil, "GITEA_AUDIT_KEY: want 32 random bytes"},
		{map[string]string{"GITEA_AUDIT_KEY_FILE": short}, nil, "GITEA_AUDIT_KEY_FILE: want 32 random bytes"},
		{map[string]string{"GITEA_AUDIT_KEY_FILE": filepath.Join(dir, "none")}, nil, "GITEA_AUDIT_KEY_FILE: open"},
		{map[string]string{"GITEA_AUDIT_KEY": auditTestKey, "GITEA_AUDIT_KEY_FILE": file}, nil, "both set"},
	}
	for _, tt := range tests {
		key, err := loadAuditKey(func(k string) string { return tt.env[k] })
		if !bytes.Equal(key, tt.key) || !errContains(err, tt.err) || tt.err == "" && err != nil {
			t.Errorf("%v: loadAuditKey = %x, %v; want %x, error containing %q", tt.env, key, err, tt.key, tt.err)
		}
		if err != nil && (strings.Contains(err.Error(), "secret-value") || strings.Contains(err.Error(), auditTestKey)) {
			t.Errorf("%v: the error echoes the key: %v", tt.env, err)
		}
	}
}

func TestParseAuditHead(t *testing.T) {
	t.Parallel()
	mac := strings.Repeat("ab", 32)
	tests := []struct {
		in   string
		want auditHead
		err  string
	}{
		{"3:" + mac, auditHead{3, mac}, ""},
		{"0:" + strings.ToUpper(mac), auditHead{0, mac}, ""},
		{"3", auditHead{}, "want COUNT:MAC"},
		{"-1:" + mac, auditHead{}, "want COUNT:MAC"},
		{"3:" + mac[:60], auditHead{}, "want COUNT:MAC"},
		{"x:" + mac, auditHead{}, "want COUNT:MAC"},
		{"3:" + strings.Repeat("zz", 32), auditHead{}, "want COUNT:MAC"},
	}
	for _, tt := range tests {
		got, err := parseAuditHead(tt.in)
		if got != tt.want || !errContains(err, tt.err) || tt.err == "" && err != nil {
			t.Errorf("parseAuditHead(%q) = %v, %v; want %v, %q", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil && got.String() != strings.ToLower(tt.in) {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
}

func TestVerifyAuditFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, keyed := range []bool{false, true} {
		k := map[bool][]byte{true: auditKeyBytes}[keyed]
		lines, head := writeChain(t, 3, k)
		path := filepath.Join(dir, fmt.Sprint(keyed))
		os.WriteFile(path, []byte(strings.Join(lines, "")), 0o600)
		env := map[string]string{}
		if keyed {
			env["GITEA_AUDIT_KEY"] = auditTestKey
		}
		getenv := func(k string) string { return env[k] }
		msg, err := verifyAuditFile(path, head.String(), getenv)
		want := map[bool]string{false: "only guards against accidents", true: "every mac verified with the key"}[keyed]
		if err != nil || !strings.Contains(msg, "3 lines, chain intact, head "+head.String()) || !strings.Contains(msg, "matches the reported head") || !strings.Contains(msg, want) {
			t.Errorf("keyed %v: %q, %v", keyed, msg, err)
		}
		if strings.Contains(msg, auditTestKey) {
			t.Error("the message shows the key")
		}
		if msg, _ := verifyAuditFile(path, "", getenv); !strings.Contains(msg, "without -audit-head, lines dropped from the end go unseen") {
			t.Errorf("keyed %v, no head: %q", keyed, msg)
		}
		os.WriteFile(path, []byte(strings.Join(lines[:2], "")), 0o600)
		if _, err := verifyAuditFile(path, head.String(), getenv); !errContains(err, "lines were dropped from the end") {
			t.Errorf("keyed %v, tail dropped: %v", keyed, err)
		}
	}
	if _, err := verifyAuditFile(filepath.Join(dir, "x"), "bad", nil); !errContains(err, "want COUNT:MAC") {
		t.Errorf("bad head: %v", err)
	}
}

func TestAuditRecordErrors(t *testing.T) {
	t.Parallel()
	var none *auditLog
	if err := none.record(auditEntry{Decision: "allowed"}); err != nil {
		t.Errorf("nil log: record = %v", err)
	}
	if err := none.close(); err != nil {
		t.Errorf("nil log: close = %v", err)
	}
	a := openTestAudit(t, filepath.Join(t.TempDir(), "audit.log"), nil)
	if err := a.record(auditEntry{Decision: "maybe"}); !errContains(err, `audit: decision "maybe": want allowed, denied or answered`) {
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
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	a := openTestAudit(t, path, auditKeyBytes)
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
	if got, err := verifyAudit(f, auditKeyBytes, nil); got.Lines != 200 || err != nil {
		t.Errorf("verifyAudit = %v, %v; want 200 lines, nil", got, err)
	}
}

func TestAuditEntryFields(t *testing.T) {
	t.Parallel()
	want := []string{"time", "profile", "audit_label", "login", "sudo", "tool", "action,omitempty", "operation", "required_permission",
		"method", "path", "decision", "rule", "reason", "status", "prev"}
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
	t.Parallel()
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
	lines, _ := writeChain(f, 3, auditKeyBytes)
	f.Add([]byte(strings.Join(lines, "")), true)
	f.Add([]byte(lines[0]+`{"prev":null}`+"\n"), true)
	f.Add([]byte("\n\n"), false)
	f.Add([]byte(`{"prev":"`+auditGenesis+`"}`), false)
	f.Fuzz(func(t *testing.T, data []byte, keyed bool) {
		key := map[bool][]byte{true: auditKeyBytes}[keyed]
		got, err := verifyAudit(bytes.NewReader(data), key, nil)
		newlines := bytes.Count(data, []byte("\n"))
		if got.Lines > newlines || err == nil && got.Lines != newlines {
			t.Errorf("verifyAudit = %v, %v for %d lines", got, err, newlines)
		}
		if _, err2 := verifyAudit(bytes.NewReader(data), key, &got); (err == nil) != (err2 == nil) {
			t.Errorf("with its own head %v: %v, without: %v", got, err2, err)
		}
	})
}

func TestAuditConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	edited := filepath.Join(dir, "edited.log")
	lines, _ := writeChain(t, 2, auditKeyBytes)
	os.WriteFile(edited, []byte(lines[0]+strings.Replace(lines[1], "tool1", "tool9", 1)), 0o600)
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITEA_AUDIT_KEY": auditTestKey}, "GITEA_AUDIT_KEY: set GITEA_AUDIT_LOG too; there is no audit log to seal"},
		{map[string]string{"GITEA_AUDIT_LOG": filepath.Join(dir, "a.log"), "GITEA_AUDIT_KEY": "secret-value"}, "GITEA_AUDIT_KEY: want 32 random bytes, base64 or hex (openssl rand -base64 32)"},
		{map[string]string{"GITEA_AUDIT_LOG": edited, "GITEA_AUDIT_KEY": auditTestKey}, `GITEA_AUDIT_LOG: audit log "` + edited + `" does not verify, so it cannot be continued: line 2: mac does not match`},
		{map[string]string{"GITEA_AUDIT_LOG": edited}, `GITEA_AUDIT_LOG: audit log "` + edited + `" does not verify, so it cannot be continued: line 1: mac does not match`},
	} {
		_, err := newServer(func(k string) string { return tc.env[k] })
		if !errContains(err, tc.want) {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
		}
	}
}

// BenchmarkAuditSeal is the cost of sealing one typical line and moving the
// key forward (the write and fsync of record come on top).
func BenchmarkAuditSeal(b *testing.B) {
	e := auditEntry{Profile: "gitea-merger", Tool: "repoMergePullRequest", Operation: "repoMergePullRequest", RequiredPermission: "gitea.pr.merge",
		Method: "POST", Path: "/repos/alice/demo/pulls/1/merge", Decision: "denied", Rule: "policy", Reason: strings.Repeat("r", 120), Prev: auditGenesis}
	content, _ := json.Marshal(e)
	for _, keyed := range []bool{false, true} {
		b.Run(map[bool]string{false: "sha256", true: "hmac"}[keyed], func(b *testing.B) {
			c := newAuditChain(map[bool][]byte{true: auditKeyBytes}[keyed])
			for b.Loop() {
				_, mac := c.seal(content)
				c.advance(mac)
			}
		})
	}
}

// BenchmarkOpenAudit is the start-up cost of continuing a keyed log of 10,000
// lines: every line verified, the key brought forward.
func BenchmarkOpenAudit(b *testing.B) {
	path := filepath.Join(b.TempDir(), "audit.log")
	a := openTestAudit(b, path, auditKeyBytes)
	a.f.Close()
	a.f, _ = os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o600)
	for i := range 10000 { // written without fsync: only the reading is measured
		content, _ := json.Marshal(auditEntry{Tool: fmt.Sprint("tool", i), Decision: "denied", Reason: strings.Repeat("r", 120), Prev: a.chain.head.MAC})
		line, mac := a.chain.seal(content)
		a.f.Write(line)
		a.chain.advance(mac)
	}
	a.f.Close()
	for b.Loop() {
		x, err := openAudit(path, auditKeyBytes)
		if err != nil {
			b.Fatal(err)
		}
		x.close()
	}
}

func TestInfraCheck(t *testing.T) {
	t.Parallel()
	ours, theirs, sep := strings.Repeat("<", 7)+" HEAD\n", strings.Repeat(">", 7)+" feature\n", strings.Repeat("=", 7)
	tests := []struct {
		name  string
		files map[string]string // relative path -> content; a trailing "/" makes a directory
		err   string
	}{
		{"clean checkout", map[string]string{".git/": "", "main.go": "package main\n", "config.json": "{}"}, ""},
		{"no .git", map[string]string{"main.go": "package main\n", "config.json": "{}"}, ""},
		{"merge in progress", map[string]string{".git/MERGE_HEAD": "abc\n", "config.json": "{}"}, "unfinished merge or rebase in SRC (MERGE_HEAD exists)"},
		{"rebase-merge", map[string]string{".git/rebase-merge/": "", "config.json": "{}"}, "(rebase-merge exists)"},
		{"rebase-apply", map[string]string{".git/rebase-apply/": "", "config.json": "{}"}, "(rebase-apply exists)"},
		{"cherry-pick", map[string]string{".git/CHERRY_PICK_HEAD": "abc\n", "config.json": "{}"}, "(CHERRY_PICK_HEAD exists)"},
		{"squash merge", map[string]string{".git/SQUASH_MSG": "Squashed commit\n", "config.json": "{}"}, "(SQUASH_MSG exists)"},
		{"series of picks", map[string]string{".git/sequencer/todo": "pick abc\n", "config.json": "{}"}, "(sequencer exists)"},
		{"worktree gitdir, relative", map[string]string{".git": "gitdir: ../main/.git/worktrees/wt\n", "../main/.git/worktrees/wt/MERGE_HEAD": "x", "config.json": "{}"}, "(MERGE_HEAD exists)"},
		{"worktree gitdir, clean", map[string]string{".git": "gitdir: ../main/.git/worktrees/wt\n", "../main/.git/worktrees/wt/HEAD": "x", "config.json": "{}"}, ""},
		{"bad .git file", map[string]string{".git": "nonsense\n", "config.json": "{}"}, ".git is a file without a gitdir: line"},
		{"marker in go file", map[string]string{"main.go": "package main\n" + ours + "var a = 1\n", "config.json": "{}"}, "conflict marker in SRC/main.go at line 2"},
		{"separator in go file", map[string]string{"x.go": "a\n" + sep + "\r\nb\n", "config.json": "{}"}, "conflict marker in SRC/x.go at line 2"},
		{"theirs in go file", map[string]string{"x.go": theirs, "config.json": "{}"}, "conflict marker in SRC/x.go at line 1"},
		{"separator ending the file", map[string]string{"x.go": "a\n\n" + sep + "\r", "config.json": "{}"}, "conflict marker in SRC/x.go at line 3"},
		{"the first of several", map[string]string{"x.go": "a\n" + sep + "\n" + ours + theirs, "config.json": "{}"}, "conflict marker in SRC/x.go at line 2"},
		{"lookalikes", map[string]string{"x.go": "// " + ours + sep + "=\n" + sep + " x\n" + strings.Repeat(">", 7) + "\n", "config.json": "{}"}, ""},
		{"markers in other files", map[string]string{"README.md": ours, "sub/y.go": ours, "config.json": "{}"}, ""},
		{"marker in config", map[string]string{"config.json": "{\n" + ours + "}\n"}, "conflict marker in SRC/config.json at line 2"},
		{"missing config", map[string]string{}, "cannot read SRC/config.json"},
	}
	for _, tt := range tests {
		root := t.TempDir()
		src := filepath.Join(root, "src")
		os.MkdirAll(src, 0o755)
		for name, content := range tt.files {
			p := filepath.Join(src, name)
			if strings.HasSuffix(name, "/") {
				os.MkdirAll(p, 0o755)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o600)
		}
		err := infraCheck(filepath.Join(src, "config.json"), src)
		want := strings.ReplaceAll(tt.err, "SRC", src)
		if !errContains(err, want) {
			t.Errorf("%s: infraCheck = %v, want error containing %q", tt.name, err, want)
			continue
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "infra_stop: ") || !strings.HasSuffix(err.Error(), infraRecovery)) {
			t.Errorf("%s: infraCheck = %v, want infra_stop: ... %s", tt.name, err, infraRecovery)
		}
	}
	if err := infraCheck("", ""); err != nil {
		t.Errorf(`infraCheck("", "") = %v`, err)
	}
	if err := infraCheck("", filepath.Join(t.TempDir(), "gone")); !errContains(err, "infra_stop: cannot read the source directory") {
		t.Errorf("missing source directory: infraCheck = %v", err)
	}
}

// TestAuditErrorSticky checks that after one failed write the log refuses
// every later record, even once writing would work again: a chain with a
// line missing cannot continue safely.
func TestAuditErrorSticky(t *testing.T) {
	t.Parallel()
	a, err := openAudit(filepath.Join(t.TempDir(), "audit.log"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.close()
	if err := a.record(auditEntry{Decision: "denied"}); err != nil {
		t.Fatal(err)
	}
	good := a.f
	closed, err := os.Create(filepath.Join(t.TempDir(), "closed"))
	if err != nil {
		t.Fatal(err)
	}
	closed.Close()
	a.f = closed // the next write fails
	if err := a.record(auditEntry{Decision: "denied"}); err == nil {
		t.Fatal("a write to a closed file succeeded")
	}
	a.f = good // writing would work again
	if err := a.record(auditEntry{Decision: "allowed"}); !errContains(err, "file already closed") {
		t.Errorf("record after a failed write = %v, want the first failure again", err)
	}
	if data, _ := os.ReadFile(good.Name()); bytes.Count(data, []byte("\n")) != 1 {
		t.Errorf("the log has %d lines after the failure, want 1:\n%s", bytes.Count(data, []byte("\n")), data)
	}
}

// verifyCase is one log of TestVerifyAudit: its text, the key and head it is
// verified with, and the lines and error wanted.
type verifyCase struct {
	name string
	log  string
	key  []byte
	head *auditHead
	want int
	err  string
}

// TestAuditHugeArguments: found by attacking the audit log with tool
// arguments. A refused mutation whose arguments are huge (a 2 MiB repository
// name, operation name or method) wrote an audit line longer than
// maxAuditLine: the next start refused the log ("does not verify") and
// -verify-audit failed, so one tool call took the audit log and the server
// down. Every field of a line is bounded now; the log still verifies, and a
// line cannot be broken or forged by newlines, quotes or invalid UTF-8.
func TestAuditHugeArguments(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	env := map[string]string{"GITEA_URL": "http://127.0.0.1:1", "GITEA_TOKEN": fakeToken, "GITEA_AUDIT_LOG": path, "GITEA_AUDIT_KEY": auditTestKey}
	s := testServer(t, env)
	huge := strings.Repeat("x", 2<<20)
	forged := "a\n{\"decision\":\"allowed\"}\n\"\xff\u2028"
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"gitea_call_operation", map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": "alice", "repo": huge}}},
		{"gitea_call_operation", map[string]any{"operation": huge, "arguments": map[string]any{}}},
		{"gitea_api_request", map[string]any{"method": huge, "path": "/repos/alice/demo"}},
		{"gitea_call_operation", map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": "alice", "repo": forged}}},
	} {
		if _, isErr := fakeCall(t, context.Background(), s, call.tool, call.args); !isErr {
			t.Errorf("%s: not refused", call.tool)
		}
	}
	s.exec.audit.close()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := verifyAudit(f, auditKeyBytes, nil); got.Lines != 4 || err != nil {
		t.Errorf("verifyAudit = %v, %v; want 4 lines, nil", got, err)
	}
	a, err := openAudit(path, auditKeyBytes)
	if err != nil {
		t.Fatalf("the log cannot be continued: %v", err)
	}
	a.close()
}

// TestAuditProfileOfDecision: found by attacking runtime switching. An
// allowed mutation's audit line is written once Gitea has answered, and it
// named the profile active at that moment rather than the one that decided:
// a gitea_activate_profile while the request was in flight logged a merge
// decided under gitea-merger as gitea-owner's.
func TestAuditProfileOfDecision(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	config, path := filepath.Join(dir, "profiles.json"), filepath.Join(dir, "audit.log")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true}`), 0o600)
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:1", "GITEA_TOKEN": fakeToken, "GITEA_MCP_PROFILE": "gitea-merger",
		"GITEA_MCP_CONFIG": config, "GITEA_AUDIT_LOG": path})
	x, ctx := s.exec, context.Background()
	prof, _ := x.active(ctx)
	d := decision{Allowed: true, Tool: "repoMergePullRequest", Operation: "repoMergePullRequest", RequiredPermission: permMerge,
		Profile: prof.Name, Identity: "carol"}
	e := auditEntryFor(d, prof, "POST", "/repos/alice/demo/pulls/1/merge", 200)
	x.activate(x.profiles.profiles["gitea-owner"], "tok") // the switch, while the merge was in flight
	x.audited(ctx, e)
	x.audit.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var got auditEntry
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	if got.Profile != "gitea-merger" || got.AuditLabel != "gitea-merger" {
		t.Errorf("the merge decided under gitea-merger is logged as profile %q, audit label %q", got.Profile, got.AuditLabel)
	}
}

// TestAuditArgumentsNotObject: a mutating tool called with arguments that
// are not an object is refused by JSON-RPC, and audited as every refusal is;
// a read tool's is not.
func TestAuditArgumentsNotObject(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "audit.log")
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:1", "GITEA_TOKEN": fakeToken, "GITEA_AUDIT_LOG": path, "GITEA_MCP_PROFILE": "gitea-merger"})
	for _, name := range []string{"gitea_merge_pr", "gitea_whoami"} {
		if _, rerr := s.callTool(t.Context(), nil, json.RawMessage(`{"name":"`+name+`","arguments":["owner","alice"]}`)); rerr == nil || rerr.Code != codeInvalidParams {
			t.Errorf("%s: %v, want invalid params", name, rerr)
		}
	}
	s.exec.audit.close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var e auditEntry
	if lines := strings.Count(string(data), "\n"); lines != 1 || json.Unmarshal(data, &e) != nil || e.Tool != "gitea_merge_pr" || e.Rule != "argument validation" {
		t.Errorf("%d audit lines %q; want one, gitea_merge_pr's argument validation", lines, data)
	}
}
