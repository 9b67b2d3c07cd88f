package main

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam23TeamRequestUnofficial: checked by the red team, not a
// gap on Gitea 1.26.0. Removing an official review request needs
// gitea.repo.admin (it holds back the merge under
// block_on_official_review_requests), and reviewUndone judges only the
// body's reviewers, not its team_reviewers. That holds because Gitea never
// records a team's request as official: AddTeamReviewRequest
// (models/issues/review.go) creates it official when the team (or the
// doer) may write the base's code, then clears the official flag of every
// review of that team on the pull request, the new request included. So a
// team's request never holds back a merge, and removing it undoes nothing.
// This test fails if Gitea starts keeping the flag: then reviewUndone must
// judge team_reviewers as it judges reviewers.
func TestE2ERedteam23TeamRequestUnofficial(t *testing.T) {
	g := needGitea(t)
	org := "rt23-" + strings.ToLower(rand.Text()[:8])
	repo := org + "/gate"
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/orgs", map[string]string{"username": org}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/orgs/"+org, nil) })
	s.call("alice", "POST", "/orgs/"+org+"/repos", map[string]any{"name": "gate", "auto_init": true, "default_branch": "main"}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+repo, nil) })
	var team struct{ ID int64 }
	s.call("alice", "POST", "/orgs/"+org+"/teams", map[string]any{"name": "core", "permission": "write",
		"units": []string{"repo.code", "repo.pulls", "repo.issues"}}, http.StatusCreated, &team)
	s.call("alice", "PUT", fmt.Sprintf("/teams/%d/repos/%s", team.ID, repo), nil, http.StatusNoContent, nil)
	s.call("alice", "PUT", fmt.Sprintf("/teams/%d/members/carol", team.ID), nil, http.StatusNoContent, nil)
	for _, login := range giteaLogins[1:] {
		s.call("alice", "PUT", "/repos/"+repo+"/collaborators/"+login, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", "block_on_official_review_requests": true}, http.StatusCreated, nil)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/pulls/%d/requested_reviewers", repo, pr.Number), map[string]any{"team_reviewers": []string{"core"}}, http.StatusCreated, nil)
	var reviews []struct {
		State    string `json:"state"`
		Official bool   `json:"official"`
		Team     *struct {
			Name string `json:"name"`
		} `json:"team"`
	}
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), nil, http.StatusOK, &reviews)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if len(reviews) != 1 || reviews[0].State != "REQUEST_REVIEW" || reviews[0].Team == nil || reviews[0].Official {
		t.Fatalf("the review asked of team core: %+v; want one request, not official (else reviewUndone must judge team_reviewers)", reviews)
	}
	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, merger, org, "gate", pr.Number)
	merge := map[string]any{"owner": org, "repo": "gate", "index": pr.Number, "head_sha": pr.Head.SHA, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != true {
		t.Errorf("merge with the review asked of team core standing: %v; want it merged, the request not holding it back", res)
	}
}

// TestE2ERedteam23EditPullLabels: found by the red team. Labelling an issue
// or a pull request is gitea.issue.label, which gitea-author does not hold
// (issueAddLabel or issueReplaceLabels on its pull request are refused), but
// repoEditPullRequest, gitea.pr.create, passed its labels unjudged: Gitea's
// EditPullRequest (routers/api/v1/repo/pull.go) replaces the pull request's
// labels with them for a writer (ReplaceIssueLabels), an empty list clearing
// them. Before the fix bob (gitea-author) cleared the do-not-merge label
// alice had put on his pull request, and put it back.
func TestE2ERedteam23EditPullLabels(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt23labels", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var label struct{ ID int64 }
	s.call("alice", "POST", "/repos/"+repo+"/labels", map[string]any{"name": "do-not-merge", "color": "#ee0701"}, http.StatusCreated, &label)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	issue := fmt.Sprintf("/repos/%s/issues/%d", repo, pr.Number)
	s.call("alice", "POST", issue+"/labels", map[string]any{"labels": []int64{label.ID}}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	labels := func() int {
		var ls []struct{ ID int64 }
		s.call("alice", "GET", issue+"/labels", nil, http.StatusOK, &ls)
		return len(ls)
	}
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoEditPullRequest,issueReplaceLabels")
	res, isErr := author.callTool("issueReplaceLabels", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"labels": []any{}}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.issue.label") {
		t.Fatalf("issueReplaceLabels under gitea-author: %v; want it refused for gitea.issue.label", res)
	}
	for _, body := range []map[string]any{{"labels": []any{}}, {"title": "a.txt, edited", "labels": []any{label.ID}}, {"state": "open", "labels": []any{}}} {
		res, isErr := author.callTool("repoEditPullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": body})
		if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.issue.label") {
			t.Errorf("repoEditPullRequest %v under gitea-author: %v; want it refused for gitea.issue.label", body, res)
		}
		if n := labels(); s.err != nil || n != 1 {
			t.Fatalf("pull request %d has %d labels after bob's edit %v (%v); want do-not-merge alone", pr.Number, n, body, s.err)
		}
	}
	res, isErr = author.callTool("repoEditPullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"title": "a.txt, edited"}})
	if isErr || labels() != 1 {
		t.Errorf("repoEditPullRequest of the title alone under gitea-author: %v", res)
	}
}
