package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestFoundIn: a label is deleted only when Gitea finds it in the path's
// repository or organization, which Gitea's deletion does not ask
// (TestE2ERedteam10LabelOfAnother).
func TestFoundIn(t *testing.T) {
	t.Parallel()
	const repoLabel, orgLabel = "/repos/alice/demo/labels/7", "/orgs/acme/labels/7"
	deleteIn := func(path string, status int) func(f *scriptedGitea) {
		return func(f *scriptedGitea) { f.user("alice").on("GET", path, status, `{"id":7}`).on("DELETE", path, 204) }
	}
	repoArgs := map[string]any{"operation": "issueDeleteLabel", "arguments": map[string]any{"owner": "alice", "repo": "demo", "id": 7}}
	orgArgs := map[string]any{"operation": "orgDeleteLabel", "arguments": map[string]any{"org": "acme", "id": 7}}
	notFound := func(in, read, path string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea." + map[string]string{"issueGetLabel": "issue.manage", "orgGetLabel": "org.admin"}[read],
			Reason: "Gitea does not show label 7 as one of \"" + in + "\" (" + read + "): it deletes a label by its id alone, also where another " +
				"repository's or organization's id is that of the path's; nothing was sent", Sent: []string{"GET " + path}}
	}
	runLiveCases(t, []liveCase{
		{"a repository's own label", "gitea-owner", deleteIn(repoLabel, 200), "gitea_call_operation", repoArgs, liveGot{Sent: []string{"GET " + repoLabel, "DELETE " + repoLabel}}},
		{"a label the repository does not have", "gitea-owner", deleteIn(repoLabel, 404), "gitea_call_operation", repoArgs, notFound("alice/demo", "issueGetLabel", repoLabel)},
		{"an organization's own label", "gitea-owner", deleteIn(orgLabel, 200), "gitea_call_operation", orgArgs, liveGot{Sent: []string{"GET " + orgLabel, "DELETE " + orgLabel}}},
		{"a label the organization does not have", "gitea-owner", deleteIn(orgLabel, 404), "gitea_call_operation", orgArgs, notFound("acme", "orgGetLabel", orgLabel)},
		{"the read failing", "gitea-owner", deleteIn(orgLabel, 500), "gitea_call_operation", orgArgs, notFound("acme", "orgGetLabel", orgLabel)},
	})
}

// TestOwnerReads: deleting a public key that is not the caller's own
// (another user's, which a site administrator may delete, or a deploy key's)
// needs gitea.admin.user (TestE2ERedteam10OthersKey).
func TestOwnerReads(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"account","allowed_operations":["gitea.read","gitea.user.settings"]}]}`), 0o600)
	const keyPath = "/user/keys/3"
	key := func(status int, body string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) { f.user("alice").on("GET", keyPath, status, body).on("DELETE", keyPath, 204) }
	}
	args := map[string]any{"operation": "userCurrentDeleteKey", "arguments": map[string]any{"id": 3}}
	denied := func(reason string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.admin.user", Reason: reason, Sent: []string{"GET " + keyPath}}
	}
	others := func(login string) string {
		return `the key is "` + login + `"'s, not yours: deleting another user's key (or a deploy key's) is user administration; ` +
			"gitea.admin.user is not in the allowed operations of account; use a profile that allows it, such as gitea-owner"
	}
	runLiveCases(t, []liveCase{
		{"her own key", "account", key(200, `{"id":3,"key_type":"user","user":{"login":"alice"}}`), "gitea_call_operation", args, liveGot{Sent: []string{"GET " + keyPath, "DELETE " + keyPath}}},
		{"another user's key", "account", key(200, `{"id":3,"key_type":"user","user":{"login":"bob"}}`), "gitea_call_operation", args, denied(others("bob"))},
		{"a deploy key's", "account", key(200, `{"id":3,"key_type":"deploy"}`), "gitea_call_operation", args, denied(others(""))},
		{"the key unreadable", "account", key(404, `{"message":"not found"}`), "gitea_call_operation", args,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.user.settings", Reason: "cannot read the key from Gitea to tell whose it is; refusing", Sent: []string{"GET " + keyPath}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestOwnerReadsComments: any writer of a repository edits or deletes
// another's comment through Gitea's API, a review's included; through the
// server that needs gitea.issue.edit, which the reviewer and the author do
// not have, besides gitea.issue.comment for one's own.
func TestOwnerReadsComments(t *testing.T) {
	t.Parallel()
	const comment = "/repos/alice/demo/issues/comments/9"
	script := func(poster string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("alice").on("GET", comment, 200, `{"id":9,"body":"lgtm","user":{"login":"`+poster+`"}}`).
				on("PATCH", comment, 200, `{"id":9}`).on("DELETE", comment, 204).
				on("DELETE", "/repos/alice/demo/issues/3/comments/9", 204).on("DELETE", comment+"/assets/4", 204)
		}
	}
	call := func(op string, args map[string]any) map[string]any {
		return map[string]any{"operation": op, "arguments": args}
	}
	edit := call("issueEditComment", map[string]any{"owner": "alice", "repo": "demo", "id": 9, "body": map[string]any{"body": "approved, ship it"}})
	others := `the comment is "bob"'s, not yours: changing another's words, or what they attached, in their name is moderating the thread; ` +
		"gitea.issue.edit is not in the allowed operations of gitea-reviewer; use a profile that allows it, such as gitea-issue-manager"
	denied := liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.edit", Reason: others, Sent: []string{"GET " + comment}}
	runLiveCases(t, []liveCase{
		{"her own comment", "gitea-reviewer", script("alice"), "gitea_call_operation", edit, liveGot{Sent: []string{"GET " + comment, "PATCH " + comment}}},
		{"another's comment", "gitea-reviewer", script("bob"), "gitea_call_operation", edit, denied},
		{"another's comment, moderated", "gitea-issue-manager", script("bob"), "gitea_call_operation", edit, liveGot{Sent: []string{"GET " + comment, "PATCH " + comment}}},
		{"another's comment deleted by its issue", "gitea-reviewer", script("bob"), "gitea_call_operation",
			call("issueDeleteCommentDeprecated", map[string]any{"owner": "alice", "repo": "demo", "index": 3, "id": 9}), denied},
		{"another's attachment deleted", "gitea-reviewer", script("bob"), "gitea_call_operation",
			call("issueDeleteIssueCommentAttachment", map[string]any{"owner": "alice", "repo": "demo", "id": 9, "attachment_id": 4}), denied},
		{"the comment unreadable", "gitea-reviewer", func(f *scriptedGitea) { f.user("alice").on("GET", comment, 404, `{"message":"not found"}`) }, "gitea_call_operation", edit,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.comment", Reason: "cannot read the comment from Gitea to tell whose it is; refusing", Sent: []string{"GET " + comment}}},
	})
}
