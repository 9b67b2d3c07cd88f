package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Security behaviours that each had a mutation survive every test: each test
// here fails when its behaviour is broken (see testdata/mutate.sh).

// TestCallerTokenRedacted shows that the token of a per-request caller (an
// OAuth user) is redacted exactly from results, although it is on no
// configured secret list: only the server's own GITEA_TOKEN is.
func TestCallerTokenRedacted(t *testing.T) {
	t.Parallel()
	const userToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567" // a Gitea token: masked by no pattern
	f := newScriptedGitea(t).accept(userToken).user("carol").
		json("/repos/alice/demo", map[string]any{"full_name": "alice/demo", "description": "deploy with " + userToken})
	s := f.server(t)
	ctx := context.WithValue(t.Context(), callerKey{}, &caller{token: userToken, mode: "oauth"})
	params := []byte(`{"name":"repoGet","arguments":{"owner":"alice","repo":"demo"}}`)
	res, rerr := s.callTool(ctx, nil, params)
	if rerr != nil {
		t.Fatal(rerr.Message)
	}
	text := string(encode(res))
	if strings.Contains(text, userToken) {
		t.Errorf("the caller's token reached the result: %s", text)
	}
	if !strings.Contains(text, "deploy with [REDACTED]") {
		t.Errorf("want the token redacted in place: %s", text)
	}
	for _, r := range f.requests() {
		if r.Path == "/repos/alice/demo" {
			return
		}
	}
	t.Error("the request was not sent with the caller's token")
}

// TestAuditFailureStopsMutations shows that once the audit log cannot be
// written, mutations are refused before they are sent (kind infra_stop),
// the first included, whose line is written before its request, while reads
// go on.
func TestAuditFailureStopsMutations(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("bob").json(issuePath+"/comments", []any{}).
		on("POST", issuePath+"/comments", 201, `{"id":1}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-issue-manager", "GITEA_AUDIT_LOG", filepath.Join(t.TempDir(), "audit.log"))
	s.exec.audit.f.Close() // every write fails from now on, as on a full disk
	comment := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": "hello"}
	list := map[string]any{"owner": "alice", "repo": "demo", "index": 1}
	type outcome struct {
		IsError bool
		Kind    string
		Writes  int
	}
	var got []outcome
	for _, call := range []struct {
		tool string
		args map[string]any
	}{{"gitea_create_issue_comment", comment}, {"gitea_create_issue_comment", comment}, {"gitea_list_issue_comments", list}} {
		out, isErr := fakeCall(t, t.Context(), s, call.tool, call.args)
		got = append(got, outcome{isErr, str0(get(out, "error.kind")), len(f.writes())})
	}
	// The first comment's line fails before it is sent: refused unsent, as
	// the second is; reads go on.
	want := []outcome{{true, "infra_stop", 0}, {true, "infra_stop", 0}, {false, "", 0}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestRouteRoundTrip shows that a path value which makes the encoded path
// resolve to another operation is refused unsent: userGet with username
// "search" would be userSearch.
func TestRouteRoundTrip(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("bob").json("/users/search", map[string]any{"ok": true}).json("/users/bob", map[string]any{"login": "bob"})
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-owner")
	for _, tc := range []struct {
		username string
		kind     string
		sent     bool
	}{
		{"search", "invalid_request", false},
		{"bob", "", true},
	} {
		before := len(f.requests())
		out, _ := fakeCall(t, t.Context(), s, "gitea_call_operation", map[string]any{"operation": "userGet", "arguments": map[string]any{"username": tc.username}})
		sent := slicesContainsPath(f.requests()[before:], "/users/"+tc.username)
		if kind := str0(get(out, "error.kind")); kind != tc.kind || sent != tc.sent {
			t.Errorf("userGet %q: kind %q sent %v, want %q sent %v: %v", tc.username, kind, sent, tc.kind, tc.sent, out)
		}
	}
}

// slicesContainsPath reports whether one of reqs is for path.
func slicesContainsPath(reqs []fakeRequest, path string) bool {
	for _, r := range reqs {
		if r.Path == path {
			return true
		}
	}
	return false
}

// TestGiteaErrorScrubbed shows that Gitea's error messages pass the result
// pipeline: hidden characters removed, the token redacted, secrets masked,
// the instance's URL removed.
func TestGiteaErrorScrubbed(t *testing.T) {
	t.Parallel()
	gh := "ghp_" + strings.Repeat("Ab1", 12)
	f := newScriptedGitea(t).user("bob")
	msg, _ := json.Marshal(map[string]any{"message": "bad\u200b key " + gh + " for " + fakeToken + " at " + f.URL + "/api/v1/x"})
	f.on("GET", "/repos/alice/demo", http.StatusUnprocessableEntity, string(msg))
	out, isErr := fakeCall(t, t.Context(), f.server(t), "repoGet", map[string]any{"owner": "alice", "repo": "demo"})
	got := str0(get(out, "error.message"))
	for _, leak := range []string{"\u200b", gh[4:], fakeToken, f.URL} {
		if strings.Contains(got, leak) {
			t.Errorf("error message keeps %q: %q", leak, got)
		}
	}
	if !isErr || !strings.Contains(got, "[MASKED]") || !strings.Contains(got, "[REDACTED]") {
		t.Errorf("want an error with masked and redacted parts, got %q", got)
	}
}

// TestBearerWholeDigest shows that the bearer check compares the whole
// SHA-256 digest (a difference in any byte refuses) and the whole header
// (a word after the token refuses).
func TestBearerWholeDigest(t *testing.T) {
	t.Parallel()
	const token = "Wh0le-Digest_0123456789abcdef"
	c, err := loadHTTPConfig(&config{bearerToken: token})
	if err != nil {
		t.Fatal(err)
	}
	req := func(auth string) *http.Request {
		r, _ := http.NewRequest("POST", "http://127.0.0.1/mcp", nil)
		r.Header.Set("Authorization", auth)
		return r
	}
	if !c.authorized(req("Bearer " + token)) {
		t.Fatal("the token itself is refused")
	}
	for _, auth := range []string{"Bearer " + token + " extra", "Bearer " + token + " " + token, "Bearer extra " + token} {
		if c.authorized(req(auth)) {
			t.Errorf("%q is accepted", auth)
		}
	}
	want := sha256.Sum256([]byte(token))
	for i := range want {
		c.hash = want
		c.hash[i] ^= 1
		if c.authorized(req("Bearer " + token)) {
			t.Errorf("a digest differing in byte %d is accepted", i)
		}
	}
}

// TestSudoSent shows that with GITEA_SUDO every request, reads, identity
// checks and writes alike, acts for that user (Gitea's Sudo header).
func TestSudoSent(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("carol").json(issuePath+"/comments", []any{}).on("POST", issuePath+"/comments", 201, `{"id":1}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-issue-manager", "GITEA_SUDO", "carol")
	fakeCall(t, t.Context(), s, "gitea_list_issue_comments", map[string]any{"owner": "alice", "repo": "demo", "index": 1})
	fakeCall(t, t.Context(), s, "gitea_create_issue_comment", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": "hi"})
	reqs := f.requests()
	if len(reqs) < 3 {
		t.Fatalf("want a read, an identity check and a write, got %v", reqs)
	}
	if diff := cmp.Diff([]string{"POST /repos/alice/demo/issues/1/comments"}, f.writes()); diff != "" {
		t.Errorf("writes: mismatch (-want +got):\n%s", diff)
	}
	for _, r := range reqs {
		if r.Sudo != "carol" {
			t.Errorf("%s %s: Sudo %q, want carol", r.Method, r.Path, r.Sudo)
		}
	}
}

// TestCredentialErrorsMasked shows that an operation that hands out a
// credential skips masking only for its successful answer: its errors are
// masked like any other.
func TestCredentialErrorsMasked(t *testing.T) {
	t.Parallel()
	gh := "ghp_" + strings.Repeat("Zy9", 12)
	msg, _ := json.Marshal(map[string]any{"message": "token name taken; old token " + gh})
	f := newScriptedGitea(t).user("alice").on("POST", "/users/alice/tokens", http.StatusConflict, string(msg))
	out, isErr := fakeCall(t, t.Context(), f.server(t, "GITEA_MCP_PROFILE", "gitea-owner"), "gitea_call_operation",
		map[string]any{"operation": "userCreateToken", "arguments": map[string]any{"username": "alice", "body": map[string]any{"name": "ci", "scopes": []any{"read:repository"}}}})
	if got := str0(get(out, "error.message")); !isErr || strings.Contains(got, gh[4:]) || !strings.Contains(got, "ghp_[MASKED]") {
		t.Errorf("want the error masked, got %q (%v)", got, out)
	}
}

// TestGatesRefuseCutAnswers shows that a gate never decides on part of an
// answer: a list of changed files cut by MAX_TOOL_RESPONSE_ITEMS refuses the
// merge (bad_answer) rather than comparing the files kept.
func TestGatesRefuseCutAnswers(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).
		json(prPath+"/files", []any{map[string]any{"filename": "a.go"}, map[string]any{"filename": "b.go"}}, []any{})
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-merger", "MAX_TOOL_RESPONSE_ITEMS", "1")
	out, isErr := fakeCall(t, t.Context(), s, "gitea_merge_pr", map[string]any{"owner": "alice", "repo": "demo", "index": 1,
		"head_sha": headSHA, "confirm": "MERGE PR 1", "expected_changed_files": []any{"a.go"}})
	if kind := str0(get(out, "error.kind")); !isErr || kind != "bad_answer" || len(f.writes()) != 0 {
		t.Errorf("want bad_answer and nothing sent, got %q, writes %v: %v", kind, f.writes(), out)
	}
}

// TestAuditFailureNotEligible: once the audit log cannot be written,
// eligibility says a merge is not possible (infra_stop), as the merge would
// be refused unsent.
func TestAuditFailureNotEligible(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).
		json(repoPath, map[string]any{"default_delete_branch_after_merge": false, "default_branch": "main"}).
		on("POST", issuePath+"/comments", 201, `{"id":1}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-owner", "GITEA_AUDIT_LOG", filepath.Join(t.TempDir(), "audit.log"))
	s.exec.audit.f.Close() // every write fails from now on, as on a full disk
	comment := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": "hello"}
	if _, isErr := fakeCall(t, t.Context(), s, "gitea_create_issue_comment", comment); !isErr { // its line fails first
		t.Fatal("a comment was posted with the audit log failing")
	}
	out, _ := fakeCall(t, t.Context(), s, "gitea_check_pr_eligibility", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "action": "merge"})
	if get(out, "data.eligible") != false || !strings.Contains(string(encode(get(out, "data.gates"))), "infra_stop") {
		t.Errorf("eligibility with the audit log failing: %v", out)
	}
}
