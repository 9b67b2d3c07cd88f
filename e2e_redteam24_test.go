package main

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam24TrimmedBranch: found by the red team. A contents write
// landing on the default branch needs gitea.pr.merge, and the server read
// the branch it lands on as the body names it; but Gitea pushes the commit to
// refs/heads/ and the name strings.TrimSpace leaves
// (services/repository/files/temp_repo.go Push), which trims Unicode blanks
// too (U+00A0, U+2003), past GitRefName, which refuses ASCII ones only
// (modules/git/ref.go). Before the fix bob, gitea-author, wrote files to
// main with new_branch "main\u00a0" and "main\u2003": names Gitea finds no
// branch of, so it skips the old branch's protection check
// (services/repository/files/update.go ChangeRepoFiles) and pushes a
// fast-forward of main.
func TestE2ERedteam24TrimmedBranch(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt24trim", false)
	owner, name, _ := strings.Cut(repo, "/")
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_TOOLS=repoCreateFile")
	for file, body := range map[string]map[string]any{
		"nbsp.txt": {"new_branch": "main\u00a0"},
		"emsp.txt": {"branch": "main", "new_branch": "main\u2003"},
	} {
		body["content"], body["message"] = base64.StdEncoding.EncodeToString([]byte("landed\n")), "add "+file
		res, isErr := author.callTool("repoCreateFile", map[string]any{"owner": owner, "repo": name, "filepath": file, "body": body})
		status, _, _, err := g.api("alice", "GET", "/repos/"+repo+"/contents/"+file+"?ref=main", nil)
		if err != nil || status != http.StatusNotFound {
			t.Errorf("repoCreateFile %q under gitea-author: %s on main answers %d (%v): %v", body, file, status, err, res)
		}
		if !isErr || !strings.Contains(str(get(res, "error.message")), "begins or ends with a blank") {
			t.Errorf("repoCreateFile %q under gitea-author: %v; want it refused for the blank", body, res)
		}
	}
}
