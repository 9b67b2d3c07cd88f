package main

import "testing"

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
