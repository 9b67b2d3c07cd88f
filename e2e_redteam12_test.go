package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam12EmptyRepoDefault: found by attacking the default-branch
// fence through a repository with no commit yet. Gitea makes the branch the
// first contents write creates the repository's default branch, whatever it
// is named (services/repository/files/update.go: is_empty, default_branch),
// so gitea-author, refused a write naming "main", wrote to "topic" and its
// unreviewed commit became the default branch.
func TestE2ERedteam12EmptyRepoDefault(t *testing.T) {
	g := needGitea(t)
	name := "empty-" + strings.ToLower(rand.Text()[:8])
	repo := "alice/" + name
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/user/repos", map[string]any{"name": name, "default_branch": "main"}, http.StatusCreated, nil)
	s.call("alice", "PUT", "/repos/"+repo+"/collaborators/bob", map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+repo, nil) })
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoChangeFiles")
	content := base64.StdEncoding.EncodeToString([]byte("unreviewed\n"))
	for _, body := range []map[string]any{{"branch": "main"}, {"new_branch": "topic"}, {"branch": "topic"}} {
		body["message"] = "first"
		body["files"] = []any{map[string]any{"operation": "create", "path": "a.txt", "content": content}}
		res, isErr := c.callTool("repoChangeFiles", map[string]any{"owner": "alice", "repo": name, "body": body})
		if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.pr.merge") {
			t.Errorf("write %v into the empty repository: %v", body, res)
		}
	}
	var r struct {
		Empty         bool   `json:"empty"`
		DefaultBranch string `json:"default_branch"`
	}
	s.call("alice", "GET", "/repos/"+repo, nil, http.StatusOK, &r)
	if s.err != nil || !r.Empty || r.DefaultBranch != "main" {
		t.Errorf("the repository after the refused writes: %+v (%v); want still empty, default main", r, s.err)
	}
}

// TestE2ERedteam12ReRequestUndoesRejection: found by attacking the review
// fence through requested reviewers. Gitea clears the official flag of every
// review a reviewer gave when their review is requested again
// (models/issues/review.go AddReviewRequest), and branch protection counts
// only official reviews: bob (gitea-author, gitea.pr.create) asked carol
// again for a review, and her rejection no longer blocked the merge of his
// pull request, undone as dismissing it (gitea.repo.admin) would.
func TestE2ERedteam12ReRequestUndoesRejection(t *testing.T) {
	g := needGitea(t)
	repo, pr, s := protectedPull(t, g, "rerequest", "block_on_rejected_reviews")
	owner, name, _ := strings.Cut(repo, "/")
	s.call("carol", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), map[string]string{"event": "REQUEST_CHANGES", "body": "no", "commit_id": pr.Head.SHA}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, merger, owner, name, pr.Number)
	merge := map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != false {
		t.Fatalf("merge past carol's rejection: %v", res)
	}
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoCreatePullReviewRequests")
	res, isErr := author.callTool("repoCreatePullReviewRequests", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"reviewers": []string{"Carol"}}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.repo.admin") {
		t.Errorf("review asked again of carol, who rejected: %v", res)
	}
	if res, isErr := author.callTool("repoCreatePullReviewRequests", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"reviewers": []string{"alice"}}}); isErr {
		t.Errorf("review asked of alice, who has not reviewed: %v", res)
	}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != false {
		t.Errorf("merge past carol's rejection, after bob asked her again: %v", res)
	}
}

// TestE2ERedteam12RemoveOfficialRequest: found with the one above. A review
// requested of an official reviewer holds back the merge under
// block_on_official_review_requests until they review, and Gitea lets the
// pull request's author remove the request (services/issue/assignee.go
// CanDoerChangeReviewRequests): bob (gitea-author) removed the review alice
// had asked of carol, and the merge went through unreviewed.
func TestE2ERedteam12RemoveOfficialRequest(t *testing.T) {
	g := needGitea(t)
	repo, pr, s := protectedPull(t, g, "unrequest", "block_on_official_review_requests")
	owner, name, _ := strings.Cut(repo, "/")
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/pulls/%d/requested_reviewers", repo, pr.Number), map[string]any{"reviewers": []string{"carol"}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, merger, owner, name, pr.Number)
	merge := map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != false {
		t.Fatalf("merge past the review asked of carol: %v", res)
	}
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoDeletePullReviewRequests")
	res, isErr := author.callTool("repoDeletePullReviewRequests", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"reviewers": []string{"carol"}}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.repo.admin") {
		t.Errorf("the review asked of carol removed: %v", res)
	}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != false {
		t.Errorf("merge past the review asked of carol, after bob removed the request: %v", res)
	}
}

// protectedPull makes a repository whose main branch protection sets the
// flag rule, and bob's pull request from topic (a.txt) into main; it returns
// the repository, the pull request, and the setup to go on with.
func protectedPull(t *testing.T, g *giteaInstance, prefix, rule string) (string, openedPR, *giteaSetup) {
	t.Helper()
	repo, _ := scratchRepo(t, g, prefix, false)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", rule: true}, http.StatusCreated, nil)
	return repo, s.topicPR("bob", repo, "topic", "a.txt", "a.txt"), s
}
