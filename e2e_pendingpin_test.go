package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2EPendingReviewPin: found by review. A pending review submitted as an
// approval was judged by the commit it was made at, but starting one named no
// commit: Gitea made it at whatever head the pull request had then. A reviewer
// who read c1 started one after the author pushed c2 (through any door, with
// no commit_id) and submitted it as an approval, and Gitea approved c2, which
// nobody named. Now starting a pending review names the head as commit_id on
// every door; a comment review still needs none. The control, straight to
// Gitea: the two steps without a commit approve the head pushed in between.
func TestE2EPendingReviewPin(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "pendingpin", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var c1, c2 struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "reviewed",
		"files": []map[string]string{{"operation": "create", "path": "a.txt", "content": "cmV2aWV3ZWQK"}}}, http.StatusCreated, &c1)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "reviewed change"}, http.StatusCreated, &pr)
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number)
	reviewer := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer", "GITEA_MCP_TOOLS=repoCreatePullReview,repoSubmitPullReview")
	args := func(kv ...any) map[string]any {
		return with(map[string]any{"owner": owner, "repo": name, "index": pr.Number}, kv...)
	}
	if res, isErr := reviewer.callTool("gitea_check_pr_eligibility", args("action", "approve")); isErr || str(get(res, "data.head_sha")) != c1.Commit.SHA {
		t.Fatalf("carol reads c1 %s: %v", c1.Commit.SHA, res)
	}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "after the review",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": "bGF0ZXIK"}}}, http.StatusCreated, &c2)
	type review struct {
		ID       int64
		State    string
		CommitID string `json:"commit_id"`
		User     struct{ Login string }
	}
	var control review
	s.call("alice", "POST", prPath+"/reviews", map[string]any{"event": "PENDING", "body": "reading"}, http.StatusOK, &control)
	s.call("alice", "POST", fmt.Sprintf("%s/reviews/%d", prPath, control.ID), map[string]any{"event": "APPROVED"}, http.StatusOK, &control)
	if s.err != nil || control.State != "APPROVED" || control.CommitID != c2.Commit.SHA {
		t.Fatalf("control: a pending review started without a commit and submitted approved %s (%s), want %s; %v", control.CommitID, control.State, c2.Commit.SHA, s.err)
	}

	redo := "read head_sha with gitea_check_pr_eligibility, review that commit and pass it as commit_id; nothing was sent"
	wantDenied(t, reviewer, "repoCreatePullReview", "POST", prPath+"/reviews", args("body", map[string]any{"event": "PENDING", "body": "reading"}), "gitea.pr.review", redo)
	wantDenied(t, reviewer, "repoCreatePullReview", "POST", prPath+"/reviews", args("body", map[string]any{"body": "reading"}), "gitea.pr.review", redo)
	wantDenied(t, reviewer, "repoCreatePullReview", "POST", prPath+"/reviews", args("body", map[string]any{"event": "PENDING", "commit_id": c1.Commit.SHA, "body": "reading"}),
		"gitea.pr.review", fmt.Sprintf("commit_id %q is not the pull request's head %s", c1.Commit.SHA, c2.Commit.SHA))
	if res, _ := reviewer.callTool("gitea_review_pr", args("event", "PENDING", "body", "reading")); str(get(res, "error.kind")) != "permission_denied" {
		t.Errorf("gitea_review_pr PENDING without commit_id: %v", res)
	}
	var reviews []review
	if s.call("carol", "GET", prPath+"/reviews", nil, http.StatusOK, &reviews); s.err != nil {
		t.Fatal(s.err)
	}
	for _, r := range reviews {
		if r.User.Login == "carol" {
			t.Errorf("after the refusals Gitea has carol's review %d (%s at %s)", r.ID, r.State, r.CommitID)
		}
	}

	// A comment review names no commit; a pending review naming the head is
	// made there, and submitted as an approval.
	if res, isErr := reviewer.callTool("gitea_review_pr", args("event", "COMMENT", "body", "nit")); isErr {
		t.Errorf("comment review without commit_id: %v", res)
	}
	res, isErr := reviewer.callTool("gitea_call_operation", map[string]any{"operation": "repoCreatePullReview",
		"arguments": args("body", map[string]any{"event": "PENDING", "commit_id": c2.Commit.SHA, "body": "reading c2"})})
	if isErr || str(get(res, "data.commit_id")) != c2.Commit.SHA || str(get(res, "data.state")) != "PENDING" {
		t.Fatalf("a pending review naming the head: %v", res)
	}
	res, isErr = reviewer.callTool("gitea_api_request", map[string]any{"method": "POST", "path": fmt.Sprintf("%s/reviews/%v", prPath, get(res, "data.id")),
		"body": map[string]any{"event": "APPROVED", "body": "read c2"}})
	if isErr || str(get(res, "data.state")) != "APPROVED" || str(get(res, "data.commit_id")) != c2.Commit.SHA {
		t.Errorf("the pending review naming the head, submitted: %v", res)
	}
}
