package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ESubmitApprovalRefused: found by review. A pending review submitted
// as an approval was judged by the commit of the review its path names, but
// Gitea submits the caller's own pending review, whatever review the path
// names (a site administrator may name anyone's), at the head it has when the
// submit arrives, and records that approval as current, not stale: alice,
// a site administrator under gitea-reviewer, started a review at c1, named
// bob's pending review made at c2, and approved c2, which nobody named. A
// push between the server's reads and the submit did the same. Now no door
// submits a pending review as an approval; the approval created at commit_id
// does (TestE2EPinsEveryDoor), and a pending review needs no commit_id. The
// control, straight to Gitea, is that submit.
func TestE2ESubmitApprovalRefused(t *testing.T) {
	g, repo, s, pr, c1 := reviewedPR(t, "submitpin")
	owner, name, _ := strings.Cut(repo, "/")
	var c2 struct{ Commit struct{ SHA string } }
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number)
	reviewer := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-reviewer", "GITEA_MCP_TOOLS=repoCreatePullReview,repoSubmitPullReview")
	args := func(kv ...any) map[string]any {
		return with(map[string]any{"owner": owner, "repo": name, "index": pr.Number}, kv...)
	}
	type review struct {
		ID       int64
		State    string
		CommitID string `json:"commit_id"`
		Stale    bool
	}
	var mine, bobs review
	res, isErr := reviewer.callTool("gitea_review_pr", args("event", "PENDING", "body", "reading c1"))
	if isErr || str(get(res, "data.commit_id")) != c1.Commit.SHA {
		t.Fatalf("a pending review started without commit_id, at c1 %s: %v", c1.Commit.SHA, res)
	}
	fmt.Sscan(str(get(res, "data.id")), &mine.ID)
	c2.Commit.SHA = pushAfterReview(s, repo)
	s.call("bob", "POST", prPath+"/reviews", map[string]any{"event": "PENDING", "body": "note to self"}, http.StatusOK, &bobs)
	if s.err != nil || bobs.CommitID != c2.Commit.SHA {
		t.Fatalf("bob's pending review at c2 %s: %+v %v", c2.Commit.SHA, bobs, s.err)
	}
	for _, id := range []int64{bobs.ID, mine.ID} {
		wantDenied(t, reviewer, "repoSubmitPullReview", "POST", fmt.Sprintf("%s/reviews/%d", prPath, id), args("id", id, "body", map[string]any{"event": "APPROVED"}),
			permApprove, "a submitted review names no commit")
	}
	if s.call("alice", "GET", fmt.Sprintf("%s/reviews/%d", prPath, mine.ID), nil, http.StatusOK, &mine); s.err != nil || mine.State != "PENDING" {
		t.Fatalf("after the refusals alice's review is %q, want PENDING; %v", mine.State, s.err)
	}
	// Control: the same submit straight to Gitea approves c2 as current.
	s.call("alice", "POST", fmt.Sprintf("%s/reviews/%d", prPath, bobs.ID), map[string]any{"event": "APPROVED"}, http.StatusOK, nil)
	s.call("alice", "GET", fmt.Sprintf("%s/reviews/%d", prPath, mine.ID), nil, http.StatusOK, &mine)
	if s.err != nil || mine.State != "APPROVED" || mine.CommitID != c2.Commit.SHA || mine.Stale {
		t.Fatalf("control: alice's review submitted naming bob's is %+v, want APPROVED at %s and not stale; %v", mine, c2.Commit.SHA, s.err)
	}
}
