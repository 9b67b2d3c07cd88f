package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// TestE2ERedteam24ForkPushUpdatesParentPull: found by the red team. Under
// repositories, deleting or renaming a fork's branch that heads an open pull
// request of a parent outside them is refused (Gitea closes or renames it
// there), but a push to that branch was not judged: Gitea then updates the
// parent's pull request (services/pull/pull.go AddTestPullRequestTask: it
// pushes the new head to the parent's refs/pull/N/head, writes a comment
// of the pushed commits there and marks its reviews stale), so what alice's
// repository would merge changes. Before the fix bob, under a profile of
// his fork alone, put a file into alice's pull request !N through
// repoCreateFile on his fork's branch.
func TestE2ERedteam24ForkPushUpdatesParentPull(t *testing.T) {
	g := needGitea(t)
	upstream, _ := scratchRepo(t, g, "rt24up", false)
	_, upName, _ := strings.Cut(upstream, "/")
	forkName := upName + "-fork"
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+upstream+"/forks", map[string]any{"name": forkName}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/bob/"+forkName, nil) })
	s.call("bob", "POST", "/repos/bob/"+forkName+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic",
		"files": []map[string]string{{"operation": "create", "path": "topic.txt", "content": base64.StdEncoding.EncodeToString([]byte("topic\n"))}}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+upstream+"/pulls", map[string]string{"head": "bob/" + forkName + ":topic", "base": "main", "title": "topic"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"fork-author","allowed_operations":["gitea.read","gitea.repo.commit","gitea.branch.create","gitea.branch.push"],
		"repositories":["bob/`+forkName+`"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=fork-author", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoCreateFile")
	res, isErr := c.callTool("repoCreateFile", map[string]any{"owner": "bob", "repo": forkName, "filepath": "pushed.txt",
		"body": map[string]any{"branch": "topic", "message": "pushed", "content": base64.StdEncoding.EncodeToString([]byte("pushed\n"))}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("%s!%d", upstream, pr.Number)) {
		t.Errorf("repoCreateFile on bob/%s:topic, the head of %s!%d, under fork-author: %v; want it refused", forkName, upstream, pr.Number, res)
	}
	// Gitea updates the pull request from a queue: a write sent is waited for.
	var files []struct{ Filename string }
	for deadline := time.Now().Add(5 * time.Second); s.err == nil && (len(files) == 0 || !isErr && len(files) == 1 && time.Now().Before(deadline)); time.Sleep(100 * time.Millisecond) {
		s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d/files", upstream, pr.Number), nil, http.StatusOK, &files)
	}
	if len(files) != 1 || s.err != nil {
		t.Errorf("the files of %s!%d after the write: %v (%v); want topic.txt alone", upstream, pr.Number, files, s.err)
	}
}
