package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// approvedIntoDev makes a repository whose main branch needs one approval,
// a branch dev, and bob's pull request from topic into dev, which carol
// approved; it returns the repository and the pull request.
func approvedIntoDev(t *testing.T, prefix string) (*giteaInstance, string, openedPR) {
	t.Helper()
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, prefix, false)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 1}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/branches", map[string]any{"new_branch_name": "dev", "old_branch_name": "main"}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic", "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	var pr openedPR
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "dev", "title": "into dev"}, http.StatusCreated, &pr)
	s.call("carol", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), map[string]string{"event": "APPROVED", "body": "fine for dev", "commit_id": pr.Head.SHA}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	return g, repo, pr
}

// liveBase returns the base branch Gitea holds for pull request n of repo.
func liveBase(t *testing.T, g *giteaInstance, repo string, n int) string {
	t.Helper()
	var pr struct{ Base struct{ Ref string } }
	(&giteaSetup{g: g}).call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, n), nil, http.StatusOK, &pr)
	return pr.Base.Ref
}

// TestE2ERedteam16RetargetCarriesApproval: Gitea keeps a pull request's
// approvals when its base changes (services/pull/pull.go ChangeTargetBranch),
// so carol's approval of bob's change for dev counted for main, whose
// protection needs one: bob (gitea-author) retargeting it is refused without
// gitea.repo.admin, and the base stays dev.
func TestE2ERedteam16RetargetCarriesApproval(t *testing.T) {
	g, repo, pr := approvedIntoDev(t, "rt16retarget")
	owner, name, _ := strings.Cut(repo, "/")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoEditPullRequest")
	res, isErr := c.callTool("repoEditPullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"base": "main"}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), `"carol"'s approval`) {
		t.Errorf("retargeted an approved pull request to main: %v", res)
	}
	if base := liveBase(t, g, repo, pr.Number); base != "dev" {
		t.Errorf("base is %q, want dev", base)
	}
}

// TestE2ERedteam16DeleteBaseCarriesApproval: deleting a branch retargets the
// pull requests based on it to the default branch (services/pull/pull.go
// AdjustPullsCausedByBranchDeleted), keeping their approvals: a profile that
// may delete branches, close and open pull requests, but not administer the
// repository, is refused the deletion of dev, which stays, as the base does.
func TestE2ERedteam16DeleteBaseCarriesApproval(t *testing.T) {
	g, repo, pr := approvedIntoDev(t, "rt16delbase")
	owner, name, _ := strings.Cut(repo, "/")
	config := allowlistConfig(t, "pruner", repo, "gitea.branch.delete", "gitea.pr.close", "gitea.pr.create")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=pruner", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoDeleteBranch")
	res, isErr := c.callTool("repoDeleteBranch", map[string]any{"owner": owner, "repo": name, "branch": "dev"})
	if !isErr || !strings.Contains(str(get(res, "error.message")), `"carol"'s approval`) {
		t.Errorf("deleted the base of an approved pull request: %v", res)
	}
	if status, _, _, err := g.api("alice", "GET", "/repos/"+repo+"/branches/dev", nil); err != nil || status != http.StatusOK {
		t.Errorf("dev: status %d, %v; want 200", status, err)
	}
	if base := liveBase(t, g, repo, pr.Number); base != "dev" {
		t.Errorf("base is %q, want dev", base)
	}
}

// TestE2ERedteam16MergeDeleteCarriesApproval: a merge that deletes its head
// branch retargets the pull requests based on it to the default branch with
// their approvals (AdjustPullsCausedByBranchDeleted, after the merge): alice,
// whose profile may merge and delete branches but not administer the
// repository, merging bob's dev into main with delete_branch_after_merge is
// refused while carol's approval of topic into dev stands; nothing merges,
// dev stays, and so does the base of topic.
func TestE2ERedteam16MergeDeleteCarriesApproval(t *testing.T) {
	g, repo, stacked := approvedIntoDev(t, "rt16mergedel")
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "dev", "message": "dev", "files": fileOps("dev.txt")}, http.StatusCreated, nil)
	var pr openedPR
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "dev", "base": "main", "title": "dev into main"}, http.StatusCreated, &pr)
	s.call("carol", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), map[string]string{"event": "APPROVED", "commit_id": pr.Head.SHA}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := allowlistConfig(t, "lander", repo, "gitea.pr.merge", "gitea.branch.delete")
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=lander", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoMergePullRequest")
	waitMergeable(t, c, owner, name, pr.Number)
	res, isErr := c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number,
		"body": map[string]any{"do": "merge", "head_commit_id": pr.Head.SHA, "delete_branch_after_merge": true}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), `"carol"'s approval`) {
		t.Errorf("merged, deleting the base of an approved pull request: %v", res)
	}
	if status, _, _, err := g.api("alice", "GET", "/repos/"+repo+"/branches/dev", nil); err != nil || status != http.StatusOK {
		t.Errorf("dev: status %d, %v; want 200", status, err)
	}
	if base := liveBase(t, g, repo, stacked.Number); base != "dev" {
		t.Errorf("base of the stacked pull request is %q, want dev", base)
	}
}
