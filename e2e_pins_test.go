package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// reviewedPR makes a scratch repository and bob's pull request of one
// commit (c1) on topic, and returns them with a setup client.
func reviewedPR(t *testing.T, prefix string) (g *giteaInstance, repo string, s *giteaSetup, pr struct{ Number int }, c1 struct{ Commit struct{ SHA string } }) {
	g = needGitea(t)
	repo, _ = scratchRepo(t, g, prefix, false)
	s = &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "reviewed",
		"files": []map[string]string{{"operation": "create", "path": "a.txt", "content": "cmV2aWV3ZWQK"}}}, http.StatusCreated, &c1)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "reviewed change"}, http.StatusCreated, &pr)
	return g, repo, s, pr, c1
}

// pushAfterReview pushes bob's second commit to topic and returns its SHA.
func pushAfterReview(s *giteaSetup, repo string) string {
	var c2 struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "after the review",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": "bGF0ZXIK"}}}, http.StatusCreated, &c2)
	return c2.Commit.SHA
}

// TestE2EPinsEveryDoor: found by review. The workflow tools pinned an
// approval and a merge to the head reviewed, but through gitea_call_operation
// and gitea_api_request a reviewer approved, and a merger merged, whatever
// head Gitea had when the request arrived. Now every door needs the pin:
// unpinned or pinned to a head since moved, an approval and a merge
// (scheduled included) are refused and Gitea records nothing, and so is a
// pending review submitted as an approval, which names no commit; pinned to
// the head, each goes through (an approval created at the head submits the
// pending review). The controls, straight to Gitea: a pending review made at
// the old head is approved at the new one when submitted, and a merge naming
// the old head is refused (so head_commit_id pins it).
func TestE2EPinsEveryDoor(t *testing.T) {
	g, repo, s, pr, c1 := reviewedPR(t, "pins")
	owner, name, _ := strings.Cut(repo, "/")
	var c2 struct{ Commit struct{ SHA string } }
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number)
	type review struct {
		ID       int64
		State    string
		CommitID string `json:"commit_id"`
		Stale    bool
		User     struct{ Login string }
	}
	// carol and alice read c1 and start reviews there; then bob pushes c2.
	var pending, control review
	s.call("carol", "POST", prPath+"/reviews", map[string]any{"event": "PENDING", "commit_id": c1.Commit.SHA, "body": "reading"}, http.StatusOK, &pending)
	s.call("alice", "POST", prPath+"/reviews", map[string]any{"event": "PENDING", "commit_id": c1.Commit.SHA, "body": "reading"}, http.StatusOK, &control)
	c2.Commit.SHA = pushAfterReview(s, repo)
	s.call("alice", "POST", fmt.Sprintf("%s/reviews/%d", prPath, control.ID), map[string]any{"event": "APPROVED"}, http.StatusOK, &control)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if pending.CommitID != c1.Commit.SHA || control.State != "APPROVED" || control.CommitID != c2.Commit.SHA {
		t.Fatalf("control: a pending review made at %s and submitted straight to Gitea after the push approved %s (%s), want %s; carol's pending review is at %s",
			c1.Commit.SHA, control.CommitID, control.State, c2.Commit.SHA, pending.CommitID)
	}
	carolApproved := func(when string) {
		t.Helper()
		var reviews []review
		s.call("carol", "GET", prPath+"/reviews", nil, http.StatusOK, &reviews)
		if s.err != nil {
			t.Fatal(s.err)
		}
		for _, r := range reviews {
			if r.User.Login == "carol" && r.State == "APPROVED" {
				t.Errorf("%s: carol's review %d approved %s", when, r.ID, r.CommitID)
			}
		}
	}

	reviewer := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer", "GITEA_MCP_TOOLS=repoCreatePullReview,repoSubmitPullReview")
	args := func(kv ...any) map[string]any {
		return with(map[string]any{"owner": owner, "repo": name, "index": pr.Number}, kv...)
	}
	res, isErr := reviewer.callTool("gitea_check_pr_eligibility", args("action", "approve"))
	if isErr || str(get(res, "data.head_sha")) != c2.Commit.SHA || !strings.Contains(str(get(res, "data.pin")), "head_sha as commit_id") {
		t.Errorf("eligibility: want head_sha %s and the pin, got %v", c2.Commit.SHA, res)
	}
	redo := "read head_sha with gitea_check_pr_eligibility, review that commit and pass it as "
	wantDenied(t, reviewer, "repoCreatePullReview", "POST", prPath+"/reviews", args("body", map[string]any{"event": "APPROVED", "body": "lgtm"}),
		permApprove, redo+"commit_id; nothing was sent")
	wantDenied(t, reviewer, "repoCreatePullReview", "POST", prPath+"/reviews", args("body", map[string]any{"event": "APPROVED", "commit_id": c1.Commit.SHA}),
		permApprove, fmt.Sprintf("commit_id %q is not the pull request's head %s", c1.Commit.SHA, c2.Commit.SHA))
	submitted := "a submitted review names no commit"
	wantDenied(t, reviewer, "repoSubmitPullReview", "POST", fmt.Sprintf("%s/reviews/%d", prPath, pending.ID), args("id", pending.ID, "body", map[string]any{"event": "APPROVED"}),
		permApprove, submitted)
	if res, _ := reviewer.callTool("gitea_submit_pr_review", args("review_id", pending.ID, "event", "APPROVED", "commit_id", c1.Commit.SHA)); str(get(res, "error.kind")) != "permission_denied" {
		t.Errorf("gitea_submit_pr_review approving %s, no longer the head: %v", c1.Commit.SHA, res)
	}
	carolApproved("after the refusals")

	// Pinned to the head: created through gitea_call_operation (Gitea submits
	// carol's pending review with it); a pending review started at the head is
	// refused as an approval through gitea_api_request, and approved through
	// gitea_submit_pr_review, which creates the approval at commit_id.
	res, isErr = reviewer.callTool("gitea_call_operation", map[string]any{"operation": "repoCreatePullReview",
		"arguments": args("body", map[string]any{"event": "APPROVED", "commit_id": c2.Commit.SHA, "body": "read c2"})})
	if isErr || str(get(res, "data.state")) != "APPROVED" || str(get(res, "data.commit_id")) != c2.Commit.SHA || get(res, "data.stale") == true ||
		fmt.Sprint(get(res, "data.id")) != fmt.Sprint(pending.ID) {
		t.Errorf("approval pinned to the head through gitea_call_operation, submitting pending review %d: %v", pending.ID, res)
	}
	res, isErr = reviewer.callTool("gitea_call_operation", map[string]any{"operation": "repoCreatePullReview", "arguments": args("body", map[string]any{"event": "PENDING", "body": "again"})})
	again := get(res, "data.id")
	if isErr || str(get(res, "data.commit_id")) != c2.Commit.SHA {
		t.Fatalf("a pending review: %v", res)
	}
	wantDenied(t, reviewer, "repoSubmitPullReview", "POST", fmt.Sprintf("%s/reviews/%v", prPath, again), args("id", again, "body", map[string]any{"event": "APPROVED"}),
		permApprove, submitted)
	res, isErr = reviewer.callTool("gitea_submit_pr_review", args("review_id", again, "event", "APPROVED", "commit_id", c2.Commit.SHA, "body", "read c2"))
	if isErr || str(get(res, "data.state")) != "APPROVED" || str(get(res, "data.commit_id")) != c2.Commit.SHA || fmt.Sprint(get(res, "data.id")) != fmt.Sprint(again) {
		t.Errorf("pending review %v submitted as an approval of the head through gitea_submit_pr_review: %v", again, res)
	}

	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", "GITEA_MCP_TOOLS=repoMergePullRequest")
	merge := func(kv ...any) map[string]any {
		return args("body", with(map[string]any{"do": "merge", "delete_branch_after_merge": false}, kv...))
	}
	wantDenied(t, merger, "repoMergePullRequest", "POST", prPath+"/merge", merge(), permMerge, redo+"head_commit_id; nothing was sent")
	wantDenied(t, merger, "repoMergePullRequest", "POST", prPath+"/merge", merge("do", "squash", "head_commit_id", c1.Commit.SHA),
		permMerge, fmt.Sprintf("head_commit_id %q is not the pull request's head %s", c1.Commit.SHA, c2.Commit.SHA))
	wantDenied(t, merger, "repoMergePullRequest", "POST", prPath+"/merge", merge("head_commit_id", c2.Commit.SHA, "merge_when_checks_succeed", true),
		permMerge, "Gitea ignores head_commit_id for a scheduled merge")
	var state struct{ Merged bool }
	if s.call("alice", "GET", prPath, nil, http.StatusOK, &state); s.err != nil || state.Merged {
		t.Fatalf("after the refusals: merged %v, %v", state.Merged, s.err)
	}
	if status, _, data, err := g.api("alice", "DELETE", prPath+"/merge", nil); err != nil || status != http.StatusNotFound {
		t.Errorf("after the refusals, a merge is scheduled: DELETE answered %d %v %.200s, want 404", status, err, data)
	}
	// Control: straight to Gitea, a merge naming the old head is refused (409 Conflict).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		status, _, data, err := g.api("alice", "POST", prPath+"/merge", merge("head_commit_id", c1.Commit.SHA)["body"])
		if err == nil && status == http.StatusConflict {
			break
		}
		if err != nil || status != http.StatusMethodNotAllowed || time.Now().After(deadline) {
			t.Fatalf("control: a merge naming %s, no longer the head, answered %d %v %.200s; want 409", c1.Commit.SHA, status, err, data)
		}
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) { // 405 while Gitea still checks the merge
		res, isErr := merger.callTool("gitea_api_request", map[string]any{"method": "POST", "path": prPath + "/merge", "body": merge("head_commit_id", c2.Commit.SHA)["body"]})
		if !isErr {
			break
		}
		if !strings.Contains(str(get(res, "error.message")), "try again later") || time.Now().After(deadline) {
			t.Fatalf("merge pinned to the head through gitea_api_request: %v", res)
		}
	}
	if s.call("alice", "GET", prPath, nil, http.StatusOK, &state); s.err != nil || !state.Merged {
		t.Errorf("after the pinned merge: merged %v, %v", state.Merged, s.err)
	}
}
