package main

import "testing"

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
