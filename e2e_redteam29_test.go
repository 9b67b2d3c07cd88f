package main

import (
	"cmp"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam29PushMarksMerged: found by the red team. Where a
// repository detects manual merges (autodetect_manual_merge), Gitea marks
// merged, by the branch's pusher, every open pull request whose head a push
// to its base brings in (services/pull/check.go manuallyMerged, from
// AddTestPullRequestTask's check of the pull requests based on the pushed
// branch): it closes it, as do: manually-merged does. Before the fix bob,
// under gitea-author (no gitea.pr.merge, no gitea.pr.close), moved dev to
// carol's pull request's head through repoUpdateBranch, and Gitea marked it
// merged by bob.
func TestE2ERedteam29PushMarksMerged(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt29mark", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "PATCH", "/repos/"+repo, map[string]any{"autodetect_manual_merge": true}, http.StatusOK, nil)
	s.call("alice", "POST", "/repos/"+repo+"/branches", map[string]any{"new_branch_name": "dev", "old_branch_name": "main"}, http.StatusCreated, nil)
	var other struct{ Commit struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "other", "message": "other", "files": fileOps("other.txt")}, http.StatusCreated, &other)
	s.call("carol", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "other", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	var pr openedPR
	s.call("carol", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "dev", "title": "into dev"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoUpdateBranch")
	// A commit that does not hold the pull request's head is bob's to move dev to.
	if res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": owner, "repo": name, "branch": "dev", "body": map[string]any{"new_commit_id": other.Commit.SHA}}); isErr {
		t.Fatalf("moving dev to a commit that holds no pull request's head: %v", res)
	}
	res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": owner, "repo": name, "branch": "dev", "body": map[string]any{"new_commit_id": pr.Head.SHA}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("!%d", pr.Number)) {
		t.Errorf("moved dev onto the head of an open pull request based on it: %v", res)
	}
	if by := markedMerged(t, s, repo, pr.Number); by != "" {
		t.Errorf("carol's pull request #%d into dev was marked merged (by %s) after bob's push", pr.Number, by)
	}
}

// markedMerged returns who Gitea marked the pull request full!n merged by, or
// "" where it is not merged once Gitea's queue had 5 s to check it: Gitea
// checks the pull requests a pushed branch bases or heads from a queue.
func markedMerged(t *testing.T, s *giteaSetup, full string, n int) string {
	t.Helper()
	var live struct {
		Merged   bool
		MergedBy struct{ Login string } `json:"merged_by"`
	}
	for range 20 {
		if s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", full, n), nil, http.StatusOK, &live); live.Merged || s.err != nil {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	if !live.Merged {
		return ""
	}
	return cmp.Or(live.MergedBy.Login, "someone")
}

// TestE2ERedteam29HeadMovedIntoBase: found by the red team. Gitea checks the
// open pull requests a pushed branch heads too, and marks merged (by the
// base's pusher) one whose head the base already holds (services/pull/
// check.go manuallyMerged, from AddTestPullRequestTask's check of the pull
// requests the pushed branch heads). Before the fix bob, under a profile
// that may force-move branches (gitea.branch.delete) but neither merge nor
// close pull requests, moved the head branch of carol's pull request to
// main's tip through repoUpdateBranch with force: true, and Gitea marked it
// merged, closing it: nothing of it landed.
func TestE2ERedteam29HeadMovedIntoBase(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt29head", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "PATCH", "/repos/"+repo, map[string]any{"autodetect_manual_merge": true}, http.StatusOK, nil)
	var tip struct{ Commit struct{ SHA string } }
	s.call("carol", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	var pr openedPR
	s.call("carol", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "into main"}, http.StatusCreated, &pr)
	var side struct{ Commit struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "side", "message": "side", "files": fileOps("side.txt")}, http.StatusCreated, &side)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "main moves on", "files": fileOps("main.txt")}, http.StatusCreated, &tip)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := allowlistConfig(t, "mover", repo, "gitea.branch.push", "gitea.branch.delete")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=mover", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoUpdateBranch")
	// A commit main does not hold is bob's to force the head branch to.
	if res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": owner, "repo": name, "branch": "topic", "body": map[string]any{"new_commit_id": side.Commit.SHA, "force": true}}); isErr {
		t.Fatalf("forcing topic to a commit main does not hold: %v", res)
	}
	res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": owner, "repo": name, "branch": "topic", "body": map[string]any{"new_commit_id": tip.Commit.SHA, "force": true}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("!%d", pr.Number)) {
		t.Errorf("moved the head of an open pull request into its base: %v", res)
	}
	if markedMerged(t, s, repo, pr.Number) != "" {
		t.Errorf("carol's pull request #%d was marked merged after bob moved its head into main", pr.Number)
	}
}
