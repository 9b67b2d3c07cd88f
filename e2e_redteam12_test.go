package main

import (
	"crypto/rand"
	"encoding/base64"
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
