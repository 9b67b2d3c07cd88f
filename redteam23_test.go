package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestEditPullLabelsJudged: repoEditPullRequest's labels, which Gitea puts in
// place of the pull request's labels (an empty list clears them), need
// gitea.issue.label on every door, as issueReplaceLabels does; an edit
// without labels needs gitea.pr.create alone.
func TestEditPullLabelsJudged(t *testing.T) {
	t.Parallel()
	const pull = "/repos/alice/demo/pulls/1"
	script := func(f *scriptedGitea) { f.user("bob").on("PATCH", pull, 201, `{"number":1}`) }
	edit := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "repoEditPullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": body}}
	}
	denied := liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.label",
		Reason: "repoEditPullRequest: labels replaces the pull request's labels, an empty list clearing them (Gitea's EditPullRequest, routers/api/v1/repo/pull.go, calls ReplaceIssueLabels): that is labelling; " +
			"gitea.issue.label is not in the allowed operations of gitea-author; use a profile that allows it, such as gitea-issue-manager"}
	sent := liveGot{Sent: []string{"PATCH " + pull}}
	runLiveCases(t, []liveCase{
		{"labels cleared", "gitea-author", script, "gitea_call_operation", edit(map[string]any{"labels": []any{}}), denied},
		{"labels with a title", "gitea-author", script, "gitea_call_operation", edit(map[string]any{"title": "t", "labels": []any{1}}), denied},
		{"labels, raw", "gitea-author", script, "gitea_api_request", map[string]any{"method": "PATCH", "path": pull, "body": map[string]any{"state": "open", "labels": []any{}}}, denied},
		{"a title alone", "gitea-author", script, "gitea_call_operation", edit(map[string]any{"title": "t"}), sent},
		{"labels, by a labeller", "gitea-owner", script, "gitea_call_operation", edit(map[string]any{"labels": []any{}}), sent},
	})
}

// TestAdminAccountJudged: under gitea.admin.user without gitea.admin.system,
// editing a user's account or adding an SSH key to it is judged by whether
// they are a site administrator, read live: one's is refused (whoever signs in
// as them administers the site), and so is one Gitea does not say; anyone
// else's is sent. A profile granting gitea.admin.system reads nothing.
func TestAdminAccountJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "user-admin", "allowed_operations": ["gitea.read", "gitea.admin.user"]}]}`), 0o600)
	script := func(f *scriptedGitea) {
		f.user("bob").on("GET", "/users/root", 200, `{"login":"root","is_admin":true}`).on("GET", "/users/dave", 200, `{"login":"dave","is_admin":false}`).
			on("GET", "/users/erin", 200, `{"login":"erin"}`).on("GET", "/users/gone", 404, `{"message":"not found"}`).
			on("PATCH", "/admin/users/root", 200, `{}`).on("PATCH", "/admin/users/dave", 200, `{}`).on("POST", "/admin/users/dave/keys", 201, `{}`)
	}
	edit := func(login string) map[string]any {
		return map[string]any{"operation": "adminEditUser", "arguments": map[string]any{"username": login, "body": map[string]any{"login_name": login, "source_id": 0, "password": "x-long-enough"}}}
	}
	key := func(login string) map[string]any {
		return map[string]any{"operation": "adminCreatePublicKey", "arguments": map[string]any{"username": login, "key": map[string]any{"title": "k", "key": "ssh-ed25519 AAAA k"}}}
	}
	const notSystem = "gitea.admin.system is not in the allowed operations of user-admin; use a profile that allows it, such as gitea-owner"
	admin := func(op string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.admin.system", Sent: []string{"GET /users/root"},
			Reason: `"root" is a site administrator, and ` + op + ` changes how one signs in as them (password, e-mail, login source, SSH key): whoever does administers the site; ` + notSystem}
	}
	unread := func(login string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.admin.system", Sent: []string{"GET /users/" + login},
			Reason: `cannot read from Gitea whether "` + login + `" is a site administrator, whose sign-in adminEditUser would change; refusing`}
	}
	runLiveCases(t, []liveCase{
		{"an administrator's password", "user-admin", script, "gitea_call_operation", edit("root"), admin("adminEditUser")},
		{"an administrator's key", "user-admin", script, "gitea_call_operation", key("root"), admin("adminCreatePublicKey")},
		{"an administrator's, raw", "user-admin", script, "gitea_api_request", map[string]any{"method": "PATCH", "path": "/admin/users/root", "body": map[string]any{"login_name": "root", "source_id": 0, "full_name": "R"}}, admin("adminEditUser")},
		{"a user's password", "user-admin", script, "gitea_call_operation", edit("dave"), liveGot{Sent: []string{"GET /users/dave", "PATCH /admin/users/dave"}}},
		{"a user's key", "user-admin", script, "gitea_call_operation", key("dave"), liveGot{Sent: []string{"GET /users/dave", "POST /admin/users/dave/keys"}}},
		{"is_admin not shown", "user-admin", script, "gitea_call_operation", edit("erin"), unread("erin")},
		{"no such user", "user-admin", script, "gitea_call_operation", edit("gone"), unread("gone")},
		{"by a site administrator's profile", "gitea-owner", script, "gitea_call_operation", edit("root"), liveGot{Sent: []string{"PATCH /admin/users/root"}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestThreadClosesJudged: a text naming an issue written into a pull
// request's thread (a comment, its edit, a review's body or line comment)
// needs gitea.issue.close, which Gitea's merge acts on as a commit message's
// closing keyword; one in an issue's thread, one naming none, or a profile
// granting gitea.issue.close reads nothing more or is sent.
func TestThreadClosesJudged(t *testing.T) {
	t.Parallel()
	script := func(f *scriptedGitea) {
		f.user("carol").on("GET", "/repos/alice/demo/issues/2", 200, `{"number":2,"pull_request":{"merged":false}}`).
			on("GET", "/repos/alice/demo/issues/3", 200, `{"number":3}`).on("GET", "/repos/alice/demo/issues/4", 500, `{}`).
			on("GET", "/repos/alice/demo/issues/comments/7", 200, `{"id":7,"user":{"login":"carol"},"pull_request_url":"http://x/alice/demo/pulls/2"}`).
			on("POST", "/repos/alice/demo/issues/2/comments", 201, `{}`).on("POST", "/repos/alice/demo/issues/3/comments", 201, `{}`).
			on("POST", "/repos/alice/demo/pulls/2/reviews", 200, `{}`)
	}
	comment := func(index int, text string) map[string]any {
		return map[string]any{"operation": "issueCreateComment", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": index, "body": map[string]any{"body": text}}}
	}
	review := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "repoCreatePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 2, "body": body}}
	}
	const notClose = "gitea.issue.close is not in the allowed operations of gitea-reviewer; use a profile that allows it, such as gitea-issue-manager"
	denied := func(op string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close", Sent: sent,
			Reason: op + " writes into a pull request's thread a text naming an issue, and Gitea closes (or reopens) it after a closing (or reopening) keyword when the pull request is merged; " + notClose + "; or leave the issue out of the text"}
	}
	runLiveCases(t, []liveCase{
		{"a comment on a pull request", "gitea-reviewer", script, "gitea_call_operation", comment(2, "Closes #1"), denied("issueCreateComment", "GET /repos/alice/demo/issues/2")},
		{"its edit", "gitea-reviewer", script, "gitea_call_operation",
			map[string]any{"operation": "issueEditComment", "arguments": map[string]any{"owner": "alice", "repo": "demo", "id": 7, "body": map[string]any{"body": "fixes alice/demo#1"}}},
			denied("issueEditComment", "GET /repos/alice/demo/issues/comments/7", "GET /repos/alice/demo/issues/comments/7")},
		{"a review's body", "gitea-reviewer", script, "gitea_call_operation", review(map[string]any{"event": "COMMENT", "body": "resolves #1"}), denied("repoCreatePullReview")},
		{"a review's line comment", "gitea-reviewer", script, "gitea_call_operation",
			review(map[string]any{"event": "COMMENT", "body": "a line", "comments": []any{map[string]any{"path": "a", "body": "closes http://x/alice/demo/issues/1", "new_position": 1}}}), denied("repoCreatePullReview")},
		{"a comment on an issue", "gitea-reviewer", script, "gitea_call_operation", comment(3, "Closes #1"), liveGot{Sent: []string{"GET /repos/alice/demo/issues/3", "POST /repos/alice/demo/issues/3/comments"}}},
		{"unread", "gitea-reviewer", script, "gitea_call_operation", comment(4, "Closes #1"), liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close",
			Sent: []string{"GET /repos/alice/demo/issues/4"}, Reason: "cannot read from Gitea whether issueCreateComment writes into a pull request's thread, where a closing keyword before the issue its text names closes it when the pull request is merged; refusing"}},
		{"naming no issue", "gitea-reviewer", script, "gitea_call_operation", comment(2, "looks right"), liveGot{Sent: []string{"POST /repos/alice/demo/issues/2/comments"}}},
		{"by a profile that closes", "gitea-issue-manager", script, "gitea_call_operation", comment(2, "Closes #1"), liveGot{Sent: []string{"POST /repos/alice/demo/issues/2/comments"}}},
	})
}
