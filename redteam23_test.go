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
