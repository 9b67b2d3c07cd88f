package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestE2ERedteam18DeleteRestoresApproval: found by attacking the review
// fence through one's own review. Deleting an official review makes Gitea
// mark the reviewer's latest remaining approval, rejection or review request
// official again (models/issues/review.go DeleteReview,
// restoreLatestOfficialReview), and branch protection counts an official
// approval: carol, who approved and then requested changes, deleted her
// rejection through a profile without gitea.pr.approve (gitea.pr.review
// deletes one's own review) and her approval counted again; through
// gitea-reviewer, once bob had pushed, it counted for a head it was not
// given at.
func TestE2ERedteam18DeleteRestoresApproval(t *testing.T) {
	s, repo, pr := approvedTopic(t, "restore", map[string]any{"block_on_rejected_reviews": true})
	g, reviews := s.g, fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number)
	owner, name, _ := strings.Cut(repo, "/")
	var rejection struct{ ID int64 }
	s.call("carol", "POST", reviews, map[string]string{"event": "PENDING", "body": "no", "commit_id": pr.Head.SHA}, http.StatusOK, &rejection)
	s.call("carol", "POST", fmt.Sprintf("%s/%d", reviews, rejection.ID), map[string]string{"event": "REQUEST_CHANGES", "body": "no"}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	approved := func() bool {
		var rs []review
		s.call("alice", "GET", reviews, nil, http.StatusOK, &rs)
		for _, r := range rs {
			if r.Official && !r.Dismissed && r.State == "APPROVED" {
				return true
			}
		}
		return false
	}
	if approved() || s.err != nil {
		t.Fatalf("carol's approval counts past her rejection (%v)", s.err)
	}
	del := map[string]any{"operation": "repoDeletePullReview", "arguments": map[string]any{"owner": owner, "repo": name, "index": pr.Number, "id": rejection.ID}}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"blocker","allowed_operations":["gitea.read","gitea.pr.review","gitea.pr.request_changes","gitea.pr.comment"]}]}`), 0o600)
	blocker := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=blocker", "GITEA_MCP_CONFIG="+config)
	if res, isErr := blocker.callTool("gitea_call_operation", del); !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.pr.approve") {
		t.Errorf("carol's rejection deleted without gitea.pr.approve: %v", res)
	}
	if approved() {
		t.Fatalf("carol's approval counts again after the blocker profile deleted her rejection")
	}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "more", "files": fileOps("b.txt")}, http.StatusCreated, nil)
	reviewer := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	if res, isErr := reviewer.callTool("gitea_call_operation", del); !isErr || !strings.Contains(str(get(res, "error.message")), pr.Head.SHA) {
		t.Errorf("carol's rejection deleted, restoring her approval of %s past a push: %v", pr.Head.SHA, res)
	}
	if approved() || s.err != nil {
		t.Errorf("carol's approval of %s counts again for the pushed head (%v)", pr.Head.SHA, s.err)
	}
}

// TestE2ERedteam18UnrequestRestoresApproval: found with the one above.
// Removing a review request makes Gitea mark the reviewer's latest remaining
// review official when they are an official reviewer by then
// (models/issues/review.go RemoveReviewRequest), whatever the request was:
// carol approved while the approvals whitelist left her out (unofficial),
// alice asked her for a review (unofficial too) and then whitelisted her;
// bob (gitea-author) removed the request, and carol's approval, which
// branch protection had not counted, counted.
func TestE2ERedteam18UnrequestRestoresApproval(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "unrequest", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 1,
		"enable_approvals_whitelist": true, "approvals_whitelist_username": []string{"alice"}}, http.StatusCreated, nil)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	reviews := fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number)
	s.call("carol", "POST", reviews, map[string]string{"event": "APPROVED", "body": "fine", "commit_id": pr.Head.SHA}, http.StatusOK, nil)
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/pulls/%d/requested_reviewers", repo, pr.Number), map[string]any{"reviewers": []string{"carol"}}, http.StatusCreated, nil)
	s.call("alice", "PATCH", "/repos/"+repo+"/branch_protections/main", map[string]any{"approvals_whitelist_username": []string{"alice", "carol"}}, http.StatusOK, nil)
	approved := func() bool {
		var rs []review
		s.call("alice", "GET", reviews, nil, http.StatusOK, &rs)
		return slices.ContainsFunc(rs, func(r review) bool { return r.Official && !r.Dismissed && r.State == "APPROVED" })
	}
	if approved() || s.err != nil {
		t.Fatalf("carol's approval counts before the request is removed (%v)", s.err)
	}
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoDeletePullReviewRequests")
	res, isErr := author.callTool("repoDeletePullReviewRequests", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"reviewers": []string{"carol"}}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.repo.admin") {
		t.Errorf("the review asked of carol removed: %v", res)
	}
	if approved() || s.err != nil {
		t.Errorf("carol's approval counts after bob removed the request (%v)", s.err)
	}
}

// approvedTopic makes a scratch repository named after prefix whose main
// branch needs one approval, with the settings of rule besides, bob's pull
// request from topic adding a.txt, and carol's approval of its head.
func approvedTopic(t *testing.T, prefix string, rule map[string]any) (*giteaSetup, string, openedPR) {
	t.Helper()
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, prefix, false)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", with(rule, "rule_name", "main", "required_approvals", 1), http.StatusCreated, nil)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	s.call("carol", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), map[string]string{"event": "APPROVED", "body": "fine", "commit_id": pr.Head.SHA}, http.StatusOK, nil)
	return s, repo, pr
}
