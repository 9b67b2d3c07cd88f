package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam32ForkHeadMovedIntoParentBase: found by the red team. Gitea
// checks the open pull requests a pushed branch heads in every repository,
// a fork's parent's included (services/pull/pull.go AddTestPullRequestTask:
// GetUnmergedPullRequestsByHeadInfo, PushToBaseRepo, then
// StartPullRequestCheckImmediately), and where the parent detects manual
// merges marks merged, by its base's pusher, one whose head its base holds
// (services/pull/check.go manuallyMerged). Before the fix bob, under a profile
// listing the parent and his fork that may force-move branches
// (gitea.branch.delete) but neither merge nor close pull requests, forced the
// fork's topic, the head of his own pull request on the parent, to the fork's
// main (a commit the parent's main holds), and Gitea marked it merged:
// nothing of it landed and no one reviewed it.
func TestE2ERedteam32ForkHeadMovedIntoParentBase(t *testing.T) {
	g := needGitea(t)
	upstream, _ := scratchRepo(t, g, "rt32up", false)
	_, upName, _ := strings.Cut(upstream, "/")
	forkName := upName + "-fork"
	s := &giteaSetup{g: g}
	s.call("alice", "PATCH", "/repos/"+upstream, map[string]any{"autodetect_manual_merge": true}, http.StatusOK, nil)
	s.call("bob", "POST", "/repos/"+upstream+"/forks", map[string]any{"name": forkName}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/bob/"+forkName, nil) })
	var side struct{ Commit struct{ SHA string } }
	var base struct{ Commit struct{ ID string } } // the branch's answer names it id
	s.call("bob", "POST", "/repos/bob/"+forkName+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/bob/"+forkName+"/contents", map[string]any{"branch": "main", "new_branch": "side", "message": "side", "files": fileOps("side.txt")}, http.StatusCreated, &side)
	s.call("bob", "GET", "/repos/bob/"+forkName+"/branches/main", nil, http.StatusOK, &base)
	var pr openedPR
	s.call("bob", "POST", "/repos/"+upstream+"/pulls", map[string]string{"head": "bob/" + forkName + ":topic", "base": "main", "title": "topic"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"mover","allowed_operations":["gitea.read","gitea.branch.push","gitea.branch.delete"],
		"repositories":["`+upstream+`","bob/`+forkName+`"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=mover", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoUpdateBranch")
	// A commit the parent's main does not hold is bob's to force topic to.
	if res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": "bob", "repo": forkName, "branch": "topic", "body": map[string]any{"new_commit_id": side.Commit.SHA, "force": true}}); isErr {
		t.Fatalf("forcing topic to a commit the parent's main does not hold: %v", res)
	}
	res, isErr := c.callTool("repoUpdateBranch", map[string]any{"owner": "bob", "repo": forkName, "branch": "topic", "body": map[string]any{"new_commit_id": base.Commit.ID, "force": true}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("%s!%d", upstream, pr.Number)) {
		t.Errorf("moved the head of a pull request on the parent into its base: %v", res)
	}
	if markedMerged(t, s, upstream, pr.Number) != "" {
		t.Errorf("bob's pull request %s!%d was marked merged after he moved its head in his fork into the parent's main", upstream, pr.Number)
	}
}

// TestE2ERedteam32RebaseUpdateMarksMerged: found by the red team. Updating a
// pull request by rebase (repoUpdatePullRequest style=rebase) runs git rebase
// of its head onto its base (services/pull/update.go updateHeadByRebaseOnToBase,
// services/pull/merge_prepare.go rebaseTrackingOnToBase), which drops the
// commits whose change the base already holds: where every one is, the head
// becomes the base's tip, and where the repository detects manual merges
// Gitea marks the pull request merged and closes it (services/pull/check.go
// manuallyMerged). Before the fix bob, under a profile that may force-push
// (gitea.branch.delete) but neither merge nor close pull requests, updated
// carol's pull request by rebase after its change had landed on main as
// another commit, and Gitea marked it merged.
func TestE2ERedteam32RebaseUpdateMarksMerged(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt32reb", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "PATCH", "/repos/"+repo, map[string]any{"autodetect_manual_merge": true}, http.StatusOK, nil)
	s.call("carol", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	var pr openedPR
	s.call("carol", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "into main"}, http.StatusCreated, &pr)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "the same change, landed another way", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := allowlistConfig(t, "rebaser", repo, "gitea.branch.push", "gitea.branch.delete")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=rebaser", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoUpdatePullRequest")
	res, isErr := c.callTool("repoUpdatePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "style": "rebase"})
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("!%d", pr.Number)) {
		t.Errorf("updated by rebase a pull request whose change its base holds: %v", res)
	}
	if markedMerged(t, s, repo, pr.Number) != "" {
		t.Errorf("carol's pull request #%d was marked merged after bob updated it by rebase", pr.Number)
	}
}
