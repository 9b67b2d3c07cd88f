package main

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
)

// TestE2EWriteFileHiddenPath: found by attacking gitea_write_file with file
// names. A path with a hidden character ("README<U+200B>.md") was written as
// a new file beside README.md, and the answer, its hidden characters removed
// like every answer's, said "path": "README.md": the tool reported writing a
// file it did not write. A path or branch with a character the result
// pipeline removes is refused now, and nothing is written.
func TestE2EWriteFileHiddenPath(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "zwwrite", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/branches", map[string]string{"new_branch_name": "topic", "old_branch_name": "main"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author")
	for _, path := range []string{"README\u200b.md", "docs/\u202eevil.md", "notes\U000E0041.md"} {
		res, isErr := c.callTool("gitea_write_file", map[string]any{"owner": owner, "repo": name, "path": path, "branch": "topic",
			"text": "changed\n", "message": "edit"})
		if !isErr || str(get(res, "error.kind")) != "invalid_arguments" || !strings.Contains(str(get(res, "error.message")), "hidden characters") {
			t.Errorf("write of %q: not refused: %v", path, res)
		}
		if status, _, _, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/contents/%s?ref=topic", repo, url.PathEscape(path)), nil); err != nil || status != http.StatusNotFound {
			t.Errorf("%q on topic: status %d, %v; want 404 (nothing written)", path, status, err)
		}
	}
}
