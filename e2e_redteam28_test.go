package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam28ActivateNoProfile: found by the red team. Before the fix
// bob, under a file's profile limited to one repository, called
// gitea_activate_profile with profile "" (what selectProfile reads as the
// start without GITEA_MCP_PROFILE: no profile, GITEA_TOKEN): it answered
// verified, and with no profile every read was allowed, so bob read a
// private repository outside the profile's repositories (its description,
// and its contents).
func TestE2ERedteam28ActivateNoProfile(t *testing.T) {
	g := needGitea(t)
	inside, _ := scratchRepo(t, g, "rt28in", false)
	outside, _ := scratchRepo(t, g, "rt28out", true)
	const marker = "rt28 outside the list"
	s := &giteaSetup{g: g}
	if s.call("alice", "PATCH", "/repos/"+outside, map[string]any{"description": marker}, http.StatusOK, nil); s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true, "profiles": [
		{"profile_name": "bob-narrow", "allowed_operations": ["gitea.read", "gitea.issue.comment"], "repositories": ["`+inside+`"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=bob-narrow", "GITEA_MCP_CONFIG="+config)
	owner, name, _ := strings.Cut(outside, "/")
	read := func() string {
		res, _ := c.callTool("repoGet", map[string]any{"owner": owner, "repo": name})
		return str(get(res, "data.description"))
	}
	if d := read(); d == marker {
		t.Fatalf("bob-narrow read %s before any switch", outside)
	}
	res, isErr := c.callTool("gitea_activate_profile", map[string]any{"profile": ""})
	if !isErr || str0(get(res, "error.kind")) != "invalid_profile" {
		t.Errorf("gitea_activate_profile \"\" was not refused: %v", res)
	}
	if d := read(); d == marker {
		t.Errorf("after gitea_activate_profile \"\", bob read %s (%q), outside the repositories of bob-narrow", outside, d)
	}
}

// TestE2ERedteam28RenameCarriesApproval: found by the red team. Gitea
// renames the base of the open pull requests based on a renamed branch
// (models/git/branch.go RenameBranch) and keeps their approvals, official
// as given: carol's approval of bob's change for dev, unprotected (where
// any writer's review is official), then counted for release-2 under the
// rule release*, whose approvals only alice may give. Before the fix bob,
// under a profile that may delete and rename branches but not administer the
// repository, renamed dev to release-2 through repoRenameBranch, and Gitea
// let the pull request merge into release-2 on carol's approval.
func TestE2ERedteam28RenameCarriesApproval(t *testing.T) {
	g, repo, pr := approvedIntoDev(t, "rt28rename")
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	if s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "release*", "required_approvals": 1, "enable_push": true,
		"enable_approvals_whitelist": true, "approvals_whitelist_username": []string{"alice"}}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	config := allowlistConfig(t, "renamer", repo, "gitea.branch.delete")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=renamer", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoRenameBranch")
	res, isErr := c.callTool("repoRenameBranch", map[string]any{"owner": owner, "repo": name, "branch": "dev", "body": map[string]any{"name": "release-2"}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), `"carol"'s approval`) {
		t.Errorf("renamed the base of an approved pull request: %v", res)
	}
	if base := liveBase(t, g, repo, pr.Number); base != "dev" {
		status, _, data, _ := g.api("alice", "POST", fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, pr.Number), map[string]any{"Do": "merge"})
		t.Errorf("base is %q, want dev; alice's merge into it on carol's approval: status %d %s", base, status, giteaTail(data))
	}
}
