package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestReopenCarriesApproval: Gitea judges a push to a head branch (stale
// reviews, dismissed approvals) only for the open pull requests it heads,
// so reopening a pull request whose head was pushed while it was closed
// (refs/pull/N/head, which Gitea moves only while it is open, at another
// commit) while an official approval stands needs gitea.repo.admin, on
// every door (TestE2ERedteam19ReopenCarriesApproval on Gitea). A head
// unmoved, no standing official approval, an open pull request, an issue
// or gitea-owner reopen; what cannot be read is a refusal.
func TestReopenCarriesApproval(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "editor", "allowed_operations": ["gitea.read", "gitea.pr.create", "gitea.issue.edit"]}]}`), 0o600)
	const reviews = prPath + "/reviews"
	reopen := map[string]any{"operation": "repoEditPullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"state": "open"}}}
	viaIssue := map[string]any{"operation": "issueEditIssue", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"state": "open"}}}
	edit := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "state": "open"}
	approval := func(official, dismissed bool) map[string]any {
		return map[string]any{"id": 3, "user": map[string]any{"login": "carol"}, "state": "APPROVED", "commit_id": otherSHA, "official": official, "dismissed": dismissed}
	}
	// closed scripts bob, pull request 1 in state with head headSHA shown at
	// shown (refs/pull/1/head), its reviews rs, and the edits answered.
	closed := func(state, shown string, rs ...map[string]any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(rs)
			f.user("bob").json(prPath, fakePR("bob", state, headSHA, true)).json(issuePath, map[string]any{"number": 1, "pull_request": map[string]any{}}).
				answer("GET", pullRef, fakeAnswer{status: 200, body: fmt.Sprintf(`[{"ref":"refs/pull/1/head","object":{"sha":%q}}]`, shown)}).
				answer("GET", reviews, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(rs)))).on("PATCH", prPath, 201, "{}").on("PATCH", issuePath, 201, "{}")
		}
	}
	carried := func(profile string) string {
		return "the head " + headSHA + " was pushed while the pull request was closed (Gitea shows it at " + otherSHA + "), which Gitea neither marks stale nor dismisses approvals for: " +
			`reopening it carries "carol"'s approval to that head, which branch protection then counts, also once a push that changes nothing makes Gitea show it; ` +
			reasonOf(t, profile, "gitea.repo.admin") + "; ask for a new review once it is open instead"
	}
	editorReason := func() string { _, why := (&profile{Name: "editor"}).allows("gitea.repo.admin"); return why }()
	refused := func(reason string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Reason: reason, Sent: sent}
	}
	unread := "cannot read from Gitea the pull request's reviews and refs/pull/1/head, whose approvals reopening it may carry to a head pushed while it was closed; refusing"
	runLiveCases(t, []liveCase{
		{"repoEditPullRequest, an approval carried", "gitea-author", closed("closed", otherSHA, approval(true, false)), "gitea_call_operation", reopen,
			refused(carried("gitea-author"), "GET "+prPath, "GET "+reviews)},
		{"gitea_edit_pr, an approval carried", "gitea-author", closed("closed", otherSHA, approval(true, false)), "gitea_edit_pr", edit,
			refused(carried("gitea-author"), "GET "+prPath, "GET "+reviews)},
		{"issueEditIssue, an approval carried", "editor", closed("closed", otherSHA, approval(true, false)), "gitea_call_operation", viaIssue,
			refused("the head "+headSHA+" was pushed while the pull request was closed (Gitea shows it at "+otherSHA+"), which Gitea neither marks stale nor dismisses approvals for: "+
				`reopening it carries "carol"'s approval to that head, which branch protection then counts, also once a push that changes nothing makes Gitea show it; `+
				editorReason+"; ask for a new review once it is open instead", "GET "+issuePath, "GET "+prPath, "GET "+reviews)},
		{"the head unmoved", "gitea-author", closed("closed", headSHA, approval(true, false)), "gitea_call_operation", reopen,
			liveGot{Sent: []string{"GET " + prPath, "PATCH " + prPath}}},
		{"a dismissed approval", "gitea-author", closed("closed", otherSHA, approval(true, true)), "gitea_call_operation", reopen,
			liveGot{Sent: []string{"GET " + prPath, "GET " + reviews, "PATCH " + prPath}}},
		{"an unofficial approval", "gitea-author", closed("closed", otherSHA, approval(false, false)), "gitea_call_operation", reopen,
			liveGot{Sent: []string{"GET " + prPath, "GET " + reviews, "PATCH " + prPath}}},
		{"open already", "gitea-author", closed("open", otherSHA, approval(true, false)), "gitea_call_operation", reopen,
			liveGot{Sent: []string{"GET " + prPath, "PATCH " + prPath}}},
		{"gitea-owner", "gitea-owner", closed("closed", otherSHA, approval(true, false)), "gitea_call_operation", reopen,
			liveGot{Sent: []string{"PATCH " + prPath}}},
		{"an issue", "editor", func(f *scriptedGitea) {
			f.user("bob").json(issuePath, map[string]any{"number": 1}).on("GET", prPath, 404, `{"message":"not found"}`).on("PATCH", issuePath, 201, "{}")
		}, "gitea_call_operation", viaIssue, liveGot{Sent: []string{"GET " + issuePath, "GET " + prPath, "PATCH " + issuePath}}},
		{"the pull request unreadable", "gitea-author", func(f *scriptedGitea) {
			closed("closed", otherSHA, approval(true, false))(f)
			f.on("GET", prPath, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", reopen, refused("cannot read from Gitea the pull request's state and head, whose approvals reopening it may carry to a head pushed while it was closed; refusing", "GET "+prPath)},
		{"the reviews unreadable", "gitea-author", func(f *scriptedGitea) {
			closed("closed", otherSHA, approval(true, false))(f)
			f.on("GET", reviews, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", reopen, refused(unread, "GET "+prPath, "GET "+reviews)},
		{"the ref unreadable", "gitea-author", func(f *scriptedGitea) {
			closed("closed", otherSHA, approval(true, false))(f)
			f.on("GET", pullRef, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", reopen, refused(unread, "GET "+prPath, "GET "+reviews)},
	}, "GITEA_MCP_CONFIG", config)
}
