package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2EAllowlistReach: found by attacking the allowlist. With repositories
// set, an issue's timeline in the list quotes an issue of a private
// repository outside it that references it (cross-references), so it is
// refused; and merging a fork's upstream into a fork in the list, from a
// parent outside it, is refused with the fork unchanged.
func TestE2EAllowlistReach(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	secret, _ := scratchRepo(t, g, "secret", true)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "secret title", "body": fmt.Sprintf("see %s#%d", g.Repo, g.Issues[0])}, http.StatusCreated, nil)
	fork := secret + "-fork"
	fork = "bob/" + strings.TrimPrefix(fork, "alice/")
	forkOwner, forkName, _ := strings.Cut(fork, "/")
	s.call("bob", "POST", "/repos/"+secret+"/forks", map[string]string{"name": forkName}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("alice", "POST", "/repos/"+secret+"/contents", map[string]any{"branch": "main", "message": "upstream only",
		"files": []map[string]string{{"operation": "create", "path": "upstream.txt", "content": base64.StdEncoding.EncodeToString([]byte("upstream\n"))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[
		{"profile_name":"demo-only","repositories":["`+g.Repo+`"],"allowed_operations":["gitea.read"]},
		{"profile_name":"fork-only","repositories":["`+fork+`"],"allow_default_branch_writes":true,"allowed_operations":["gitea.read","gitea.branch.push"]}]}`), 0o600)
	tools := "GITEA_MCP_TOOLS=issueGetCommentsAndTimeline,repoMergeUpstream"

	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=demo-only", "GITEA_MCP_CONFIG="+config, tools)
	wantDenied(t, c, "issueGetCommentsAndTimeline", "GET", fmt.Sprintf("/repos/%s/issues/%d/timeline", g.Repo, g.Issues[0]),
		map[string]any{"owner": owner, "repo": name, "index": g.Issues[0]}, "gitea.read", "quote issues and pull requests of other repositories")

	before := branchSHA(t, g, fork, "main")
	c = e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=fork-only", "GITEA_MCP_CONFIG="+config, tools)
	wantDenied(t, c, "repoMergeUpstream", "POST", "/repos/"+fork+"/merge-upstream",
		map[string]any{"owner": forkOwner, "repo": forkName, "body": map[string]any{"branch": "main"}},
		"gitea.branch.push", fmt.Sprintf("from %q, the repository it forks, outside the repositories of fork-only", secret))
	if after := branchSHA(t, g, fork, "main"); after != before {
		t.Errorf("the fork's main moved from %s to %s", before, after)
	}
}
