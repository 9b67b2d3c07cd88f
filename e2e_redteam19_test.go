package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam19ReopenCarriesApproval: found by attacking the stale
// approval fence through a closed pull request. Gitea judges a push to a
// head branch (marks the reviews stale, dismisses the approvals where branch
// protection says so) only for the open pull requests it heads
// (services/pull/pull.go AddTestPullRequestTask,
// GetUnmergedPullRequestsByHeadInfo), reopening judges nothing, and the next
// push is judged against the commit it replaces: carol approved a.txt,
// alice closed the pull request, bob pushed evil.txt, reopened it through
// gitea-author and pushed an empty commit; under dismiss_stale_approvals
// carol's approval still counted, and alice (gitea-merger) merged evil.txt.
func TestE2ERedteam19ReopenCarriesApproval(t *testing.T) {
	s, repo, pr := approvedTopic(t, "reopen19", map[string]any{"dismiss_stale_approvals": true})
	g, reviews := s.g, fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number)
	owner, name, _ := strings.Cut(repo, "/")
	edit := fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number)
	s.call("alice", "PATCH", edit, map[string]string{"state": "closed"}, http.StatusCreated, nil)
	var pushed struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "while closed", "files": fileOps("evil.txt")}, http.StatusCreated, &pushed)
	if s.err != nil {
		t.Fatal(s.err)
	}
	// Gitea handles the push from a queue: it must find the pull request closed.
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		if _, _, feed, err := g.api("alice", "GET", "/repos/"+repo+"/activities/feeds", nil); err == nil && strings.Contains(string(feed), pushed.Commit.SHA) {
			break
		}
	}
	time.Sleep(time.Second)
	approved := func() bool {
		var rs []struct {
			State               string
			Official, Dismissed bool
			Stale               bool
		}
		s.call("alice", "GET", reviews, nil, http.StatusOK, &rs)
		return slices.ContainsFunc(rs, func(r struct {
			State               string
			Official, Dismissed bool
			Stale               bool
		}) bool {
			return r.Official && !r.Dismissed && !r.Stale && r.State == "APPROVED"
		})
	}
	if !approved() || s.err != nil {
		t.Fatalf("control: carol's approval no longer counts after the push while closed (%v)", s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"editor","allowed_operations":["gitea.read","gitea.pr.create","gitea.issue.edit"]}]}`), 0o600)
	for _, c := range []struct{ profile, tool string }{{"GITEA_MCP_PROFILE=gitea-author", "repoEditPullRequest"}, {"GITEA_MCP_PROFILE=editor", "issueEditIssue"}} {
		author := e2eClient(t, g, "bob", c.profile, "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS="+c.tool)
		res, isErr := author.callTool(c.tool, map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"state": "open"}})
		if !isErr || !strings.Contains(str(get(res, "error.message")), "gitea.repo.admin") {
			t.Errorf("%s reopened the pull request with carol's approval of %s at the head %s pushed while it was closed: %v", c.tool, pr.Head.SHA, pushed.Commit.SHA, res)
		}
	}
	var state struct{ State string }
	s.call("alice", "GET", edit, nil, http.StatusOK, &state)
	if state.State != "open" { // the fence held: alice, an administrator, reopens it to show what it holds off
		s.call("alice", "PATCH", edit, map[string]string{"state": "open"}, http.StatusCreated, nil)
	}
	_, git := gitClone(t, g, "bob", repo)
	git("checkout", "-q", "topic")
	git("commit", "-q", "--allow-empty", "-m", "nothing")
	git("push", "-q", "origin", "topic")
	empty := git("rev-parse", "HEAD")
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		var refs []struct{ Object struct{ SHA string } }
		if s.call("alice", "GET", fmt.Sprintf("/repos/%s/git/refs/pull/%d/head", repo, pr.Number), nil, http.StatusOK, &refs); len(refs) == 1 && refs[0].Object.SHA == empty {
			break
		}
	}
	time.Sleep(time.Second)
	if !approved() || s.err != nil {
		t.Fatalf("Gitea no longer counts carol's approval after the push while open (%v): the gap this test holds off is closed in Gitea", s.err)
	}
	if state.State == "open" {
		merger := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-merger")
		var res map[string]any
		for deadline := time.Now().Add(30 * time.Second); get(res, "data.merged") != true && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
			res, _ = merger.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": empty, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)})
		}
		status, _, _, _ := g.api("alice", "GET", "/repos/"+repo+"/contents/evil.txt?ref=main", nil)
		t.Errorf("the pull request reopened by bob, merged on carol's approval of a.txt: %v; evil.txt on main: status %d; %v", get(res, "data.merged"), status, res)
	}
}
