package main

import (
	"crypto/rand"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
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

// TestE2ERedteam23AdminAccount: found by the red team. Making a site
// administrator needs gitea.admin.system (adminEditUser's admin: true), but a
// profile with gitea.admin.user alone could take over one that exists:
// Gitea's EditUser (routers/api/v1/admin/user.go) sets any user's password,
// e-mail, login source and login name, an administrator's too, and
// CreatePublicKey adds an SSH key to any user's account; whoever then signs
// in as them is a site administrator. Before the fix, under a profile of
// gitea.read and gitea.admin.user, alice set the password of rt23root, a site
// administrator, and signed in with it to run a cron task
// (/admin/cron/{task}, site administration).
func TestE2ERedteam23AdminAccount(t *testing.T) {
	g := needGitea(t)
	if g.Passwords["alice"] == "" {
		t.Skip("creating users needs a throwaway Gitea, not GITEA_TEST_URL")
	}
	suffix := strings.ToLower(rand.Text()[:8])
	root, plain := "rt23root-"+suffix, "rt23user-"+suffix
	s := &giteaSetup{g: g}
	for _, login := range []string{root, plain} {
		s.call("alice", "POST", "/admin/users", map[string]any{"username": login, "email": login + "@example.com", "password": rand.Text(), "must_change_password": false}, http.StatusCreated, nil)
		t.Cleanup(func() { g.api("alice", "DELETE", "/admin/users/"+login+"?purge=true", nil) })
	}
	s.call("alice", "PATCH", "/admin/users/"+root, map[string]any{"login_name": root, "source_id": 0, "admin": true}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"user-admin","allowed_operations":["gitea.read","gitea.admin.user"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=user-admin", "GITEA_MCP_CONFIG="+config)
	password := "Rt23-" + rand.Text()
	signIn := func(login string) int { // a site administrator's request, with the password set
		req, _ := http.NewRequest("POST", g.URL+"/api/v1/admin/cron/update_checker", nil)
		req.SetBasicAuth(login, password)
		resp, err := giteaHTTP.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	const key = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFzC4w8dRf8bOq4yqgOe5xZ8mZC3Wc6w1QxVfWl9y5Lx rt23"
	for _, call := range []map[string]any{
		{"operation": "adminEditUser", "arguments": map[string]any{"username": root, "body": map[string]any{"login_name": root, "source_id": 0, "password": password}}},
		{"operation": "adminEditUser", "arguments": map[string]any{"username": root, "body": map[string]any{"login_name": root, "source_id": 0, "email": "rt23-" + suffix + "@example.net"}}},
		{"operation": "adminCreatePublicKey", "arguments": map[string]any{"username": root, "key": map[string]any{"title": "rt23", "key": key}}},
	} {
		res, isErr := c.callTool("gitea_call_operation", call)
		if !isErr || get(res, "error.permission_report.required_permission") != "gitea.admin.system" {
			t.Errorf("%v of site administrator %s under gitea.admin.user: %v; want it refused for gitea.admin.system", call, root, res)
		}
	}
	if status := signIn(root); status != http.StatusUnauthorized {
		t.Errorf("signing in as %s with the password the profile set: %d, want 401", root, status)
	}
	res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "adminEditUser", "arguments": map[string]any{"username": plain,
		"body": map[string]any{"login_name": plain, "source_id": 0, "password": password}}})
	if isErr {
		t.Errorf("adminEditUser of %s, no administrator, under gitea.admin.user: %v", plain, res)
	} else if status := signIn(plain); status != http.StatusForbidden {
		t.Errorf("%s, no administrator, running a cron task: %d, want 403", plain, status)
	}
}

// TestE2ERedteam23CommentClosesOnMerge: found by the red team. A closing
// keyword in a pull request's thread (a comment, a review's body or line
// comment) closes the issue it names when the pull request is merged, as
// one in its description does: Gitea records the reference with its action
// for a writer or the issue's poster (models/issues/issue_xref.go
// verifyReferencedIssue) and the merge closes every issue the pull request
// references so (ResolveCrossReferences). A commit's or a merge's own
// message naming an issue needs gitea.issue.close; before the fix
// gitea-reviewer, which does not hold it, commented "Closes #N" on bob's pull
// request and carol's merge closed issue N.
func TestE2ERedteam23CommentClosesOnMerge(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt23close", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "keep open"}, http.StatusCreated, &issue)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	if s.err != nil {
		t.Fatal(s.err)
	}
	reviewer := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-reviewer", "GITEA_MCP_TOOLS=issueCreateComment,repoCreatePullReview")
	text := fmt.Sprintf("Closes #%d", issue.Number)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"issueCreateComment", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"body": text}}},
		{"repoCreatePullReview", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"event": "COMMENT", "body": text}}},
		{"repoCreatePullReview", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"event": "COMMENT", "body": "a line",
			"comments": []any{map[string]any{"path": "a.txt", "body": text, "new_position": 1}}}}},
	} {
		res, isErr := reviewer.callTool(call.tool, call.args)
		if !isErr || get(res, "error.permission_report.required_permission") != "gitea.issue.close" {
			t.Errorf("%s %v under gitea-reviewer: %v; want it refused for gitea.issue.close", call.tool, call.args["body"], res)
		}
	}
	if res, isErr := reviewer.callTool("issueCreateComment", map[string]any{"owner": owner, "repo": name, "index": issue.Number, "body": map[string]any{"body": "see !" + fmt.Sprint(pr.Number)}}); isErr {
		t.Errorf("a comment on an issue naming the pull request: %v", res)
	}
	if state := mergedIssueState(t, g, s, repo, pr, issue.Number); state != "open" {
		t.Errorf("issue %d after the merge: %q; want it open", issue.Number, state)
	}
}

// mergedIssueState merges pr as carol under gitea-merger and returns the
// state of issue n of repo afterwards.
func mergedIssueState(t *testing.T, g *giteaInstance, s *giteaSetup, repo string, pr openedPR, n int) string {
	t.Helper()
	owner, name, _ := strings.Cut(repo, "/")
	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, merger, owner, name, pr.Number)
	merge := map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)}
	if res, _ := merger.callTool("gitea_merge_pr", merge); get(res, "data.merged") != true {
		t.Fatalf("merge: %v", res)
	}
	var after struct{ State string }
	if s.call("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d", repo, n), nil, http.StatusOK, &after); s.err != nil {
		t.Fatal(s.err)
	}
	return after.State
}
