package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam15MergeRename: found by attacking gitea_merge_pr's
// expected_changed_files. Gitea lists a renamed file by its new name alone,
// the old one in previous_filename (services/convert ToChangedFile), so a
// pull request renaming README.md to docs.md merged as changing exactly
// "docs.md", though README.md is gone from the base after it. Now a rename
// changes both names: it merges only with both expected.
func TestE2ERedteam15MergeRename(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rename", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "mv", "message": "move the readme",
		"files": []map[string]string{{"operation": "rename", "from_path": "README.md", "path": "docs.md"}}}, http.StatusCreated, nil)
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "mv", "base": "main", "title": "docs"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, c, owner, name, pr.Number)
	merge := func(files ...string) (map[string]any, bool) {
		return c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA,
			"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": files})
	}
	res, isErr := merge("docs.md")
	if !isErr || get(res, "data.merged") != false || !strings.Contains(str(get(res, "data.gates")), "gate:changed files are exactly expected_changed_files passed:false") {
		t.Errorf("merge of a rename of README.md expected as docs.md alone: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Fatalf("the pull request was merged: %v %.200s", err, data)
	}
	if res, isErr := merge("docs.md", "README.md"); isErr || get(res, "data.merged") != true {
		t.Errorf("merge of the rename expected with both names: %v", res)
	}
}
