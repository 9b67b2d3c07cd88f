package main

import "testing"

// TestThreadReopensJudged: a text naming an issue written into a pull
// request's thread, whose merge reopens the closed issue after a reopening
// keyword, needs gitea.issue.edit too under a profile that may close issues
// (prgs-reconciler): reopening is editing. One in an issue's thread, or under
// a profile granting both (gitea-issue-manager), is sent; what cannot be read
// is refused.
func TestThreadReopensJudged(t *testing.T) {
	t.Parallel()
	script := func(f *scriptedGitea) {
		f.user("carol").on("GET", "/repos/alice/demo/issues/2", 200, `{"number":2,"pull_request":{"merged":false}}`).
			on("GET", "/repos/alice/demo/issues/3", 200, `{"number":3}`).on("GET", "/repos/alice/demo/issues/4", 500, `{}`).
			on("POST", "/repos/alice/demo/issues/2/comments", 201, `{}`).on("POST", "/repos/alice/demo/issues/3/comments", 201, `{}`).
			on("POST", "/repos/alice/demo/pulls/2/reviews", 200, `{}`)
	}
	comment := func(index int, text string) map[string]any {
		return map[string]any{"operation": "issueCreateComment", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": index, "body": map[string]any{"body": text}}}
	}
	const notEdit = "gitea.issue.edit is not in the allowed operations of prgs-reconciler; use a profile that allows it, such as gitea-issue-manager"
	denied := func(op string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.edit", Sent: sent,
			Reason: op + " writes into a pull request's thread a text naming an issue, and Gitea closes (or reopens) it after a closing (or reopening) keyword when the pull request is merged; " + notEdit + "; or leave the issue out of the text"}
	}
	runLiveCases(t, []liveCase{
		{"a comment on a pull request", "prgs-reconciler", script, "gitea_call_operation", comment(2, "Reopens #1"), denied("issueCreateComment", "GET /repos/alice/demo/issues/2")},
		{"a review's body", "prgs-reconciler", script, "gitea_call_operation",
			map[string]any{"operation": "repoCreatePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 2, "body": map[string]any{"event": "COMMENT", "body": "reopens #1"}}},
			denied("repoCreatePullReview")},
		{"a comment on an issue", "prgs-reconciler", script, "gitea_call_operation", comment(3, "Reopens #1"), liveGot{Sent: []string{"GET /repos/alice/demo/issues/3", "POST /repos/alice/demo/issues/3/comments"}}},
		{"unread", "prgs-reconciler", script, "gitea_call_operation", comment(4, "Reopens #1"), liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.edit",
			Sent: []string{"GET /repos/alice/demo/issues/4"}, Reason: "cannot read from Gitea whether issueCreateComment writes into a pull request's thread, where a closing keyword before the issue its text names closes it when the pull request is merged; refusing"}},
		{"naming no issue", "prgs-reconciler", script, "gitea_call_operation", comment(2, "already landed"), liveGot{Sent: []string{"POST /repos/alice/demo/issues/2/comments"}}},
		{"by a profile that closes and reopens", "gitea-issue-manager", script, "gitea_call_operation", comment(2, "Reopens #1"), liveGot{Sent: []string{"POST /repos/alice/demo/issues/2/comments"}}},
	})
}
