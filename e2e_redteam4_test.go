package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ESignoffCloses: against a real Gitea, a contents write's Signed-off-by
// line is part of its message, whose closing keywords Gitea acts on: one
// naming an issue needs gitea.issue.close, as the message naming it does.
// Found by the red team: a committer named "closes #N" with signoff closed
// issue N through a profile without gitea.issue.close.
func TestE2ESignoffCloses(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "signoff", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("carol", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "to stay open"}, http.StatusCreated, &issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"committer","allow_default_branch_writes":true,
		"allowed_operations":["gitea.read","gitea.repo.commit"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=committer", "GITEA_MCP_CONFIG="+config)
	c.initialize("2025-11-25")
	write := func(file string, committer map[string]any) (map[string]any, bool) {
		return c.callTool("gitea_call_operation", map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": owner, "repo": name,
			"filepath": file, "body": map[string]any{"content": "aGkK", "message": "plain", "signoff": true, "committer": committer}}})
	}
	out, isErr := write("signoff-closes.txt", map[string]any{"name": fmt.Sprintf("closes #%d", issue.Number), "email": "bob@example.com"})
	if !isErr || get(out, "error.permission_report.required_permission") != "gitea.issue.close" {
		t.Errorf("a sign-off by a committer named after a closing keyword: isError %v, %v; want gitea.issue.close denied", isErr, get(out, "error"))
	}
	if out, isErr := write("signoff-clean.txt", map[string]any{"name": "Bob", "email": "bob@example.com"}); isErr {
		t.Errorf("a clean sign-off refused: %v", get(out, "error"))
	}
	var got struct{ State string }
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d", repo, issue.Number), nil, http.StatusOK, &got)
	if s.err != nil || got.State != "open" {
		t.Errorf("issue %d: state %q (%v); want open", issue.Number, got.State, s.err)
	}
}

// TestE2EDeleteForkBranch: under repositories, deleting or renaming a fork's
// branch that heads an open pull request of a parent outside them is
// refused, since Gitea closes that pull request or renames its head; a
// branch heading none is deleted or renamed. Found by the red team: a
// profile limited to a fork deleted its branch and closed the pull request
// it headed in the parent; renaming it moved that pull request's head.
func TestE2EDeleteForkBranch(t *testing.T) {
	g := needGitea(t)
	up, _ := scratchRepo(t, g, "forkbranch", false)
	_, upName, _ := strings.Cut(up, "/")
	fork := forkAs(t, g, "bob", up, upName+"-fork")
	s := &giteaSetup{g: g}
	for _, branch := range []string{"heads-one", "heads-none", "renames-none"} {
		s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": branch, "message": "from the fork",
			"files": []map[string]string{{"operation": "create", "path": branch + ".txt", "content": base64.StdEncoding.EncodeToString([]byte("fork\n"))}}}, http.StatusCreated, nil)
	}
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+up+"/pulls", map[string]string{"head": "bob:heads-one", "base": "main", "title": "from a fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=fork-only", "GITEA_MCP_CONFIG="+allowlistConfig(t, "fork-only", fork, "gitea.branch.delete"))
	c.initialize("2025-11-25")
	del := func(branch string) (map[string]any, bool) {
		return c.callTool("gitea_api_request", map[string]any{"method": "DELETE", "path": "/repos/" + fork + "/branches/" + branch})
	}
	out, isErr := del("heads-one")
	if reason, _ := get(out, "error.permission_report.reason").(string); !isErr || !strings.Contains(reason, fmt.Sprintf("closes the pull request %s!%d", up, pr.Number)) {
		t.Errorf("deleting the branch heading %s!%d: isError %v, %v; want it refused naming the pull request", up, pr.Number, isErr, get(out, "error"))
	}
	if out, isErr := del("heads-none"); isErr {
		t.Errorf("deleting a branch heading no pull request refused: %v", get(out, "error"))
	}
	rename := func(branch string) (map[string]any, bool) {
		return c.callTool("gitea_api_request", map[string]any{"method": "PATCH", "path": "/repos/" + fork + "/branches/" + branch, "body": map[string]any{"name": branch + "-renamed"}})
	}
	out, isErr = rename("heads-one")
	if reason, _ := get(out, "error.permission_report.reason").(string); !isErr || !strings.Contains(reason, fmt.Sprintf("retargets the pull request %s!%d", up, pr.Number)) {
		t.Errorf("renaming the branch heading %s!%d: isError %v, %v; want it refused naming the pull request", up, pr.Number, isErr, get(out, "error"))
	}
	if out, isErr := rename("renames-none"); isErr {
		t.Errorf("renaming a branch heading no pull request refused: %v", get(out, "error"))
	}
	var got struct {
		State string
		Head  struct{ Ref string }
	}
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", up, pr.Number), nil, http.StatusOK, &got)
	if s.err != nil || got.State != "open" || got.Head.Ref != "heads-one" {
		t.Errorf("%s!%d: state %q, head %q (%v); want open, heads-one", up, pr.Number, got.State, got.Head.Ref, s.err)
	}
}

// TestE2EBlockPullRequest: a block whose body names a pull request is written
// into that pull request's dependencies, which hold back its merge: it needs
// gitea.pr.create, as editing them by the pull request's own number does.
// Found by the red team: gitea-issue-manager removed a pull request's
// dependency through /issues/{issue}/blocks.
func TestE2EBlockPullRequest(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "blocks", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issue, pr struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "a blocker"}, http.StatusCreated, &issue)
	s.call("alice", "POST", "/repos/"+repo+"/contents/blocked.txt", map[string]any{"content": "aGkK", "message": "blocked", "new_branch": "blocked"}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "blocked", "base": "main", "title": "blocked"}, http.StatusCreated, &pr)
	deps := fmt.Sprintf("/repos/%s/issues/%d/dependencies", repo, pr.Number)
	s.call("alice", "POST", deps, map[string]any{"owner": owner, "repo": name, "index": issue.Number}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-issue-manager")
	c.initialize("2025-11-25")
	for _, method := range []string{"DELETE", "POST"} {
		out, isErr := c.callTool("gitea_api_request", map[string]any{"method": method, "path": fmt.Sprintf("/repos/%s/issues/%d/blocks", repo, issue.Number),
			"body": map[string]any{"owner": owner, "repo": name, "index": pr.Number}})
		if !isErr || get(out, "error.permission_report.required_permission") != "gitea.pr.create" {
			t.Errorf("%s a block of pull request %d: isError %v, %v; want gitea.pr.create denied", method, pr.Number, isErr, get(out, "error"))
		}
	}
	var got []struct{ Number int }
	s.call("alice", "GET", deps, nil, http.StatusOK, &got)
	if s.err != nil || len(got) != 1 || got[0].Number != issue.Number {
		t.Errorf("pull request %d depends on %v (%v); want issue %d alone", pr.Number, got, s.err, issue.Number)
	}
}

// TestE2EAcceptTransferOutside: under repositories, accepting a transfer is
// judged by the owner it moves the repository to, as repoTransfer's
// new_owner is. Found by the red team: a profile limited to carol's
// repository accepted its transfer to bob, outside the list.
func TestE2EAcceptTransferOutside(t *testing.T) {
	g := needGitea(t)
	name := "gift-" + strings.ToLower(rand.Text()[:8])
	s := &giteaSetup{g: g}
	s.call("carol", "POST", "/user/repos", map[string]any{"name": name, "auto_init": true}, http.StatusCreated, nil)
	t.Cleanup(func() {
		g.api("alice", "DELETE", "/repos/carol/"+name, nil)
		g.api("alice", "DELETE", "/repos/bob/"+name, nil)
	})
	s.call("carol", "POST", "/repos/carol/"+name+"/transfer", map[string]any{"new_owner": "bob"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"gift-admin","repositories":["carol/`+name+`"],
		"allowed_operations":["gitea.read","gitea.repo.admin"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gift-admin", "GITEA_MCP_CONFIG="+config)
	c.initialize("2025-11-25")
	out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "acceptRepoTransfer", "arguments": map[string]any{"owner": "carol", "repo": name}})
	if reason, _ := get(out, "error.permission_report.reason").(string); !isErr || !strings.Contains(reason, `to "bob/`+name+`", outside the repositories`) {
		t.Errorf("accepting the transfer to bob: isError %v, %v; want it refused naming bob/%s", isErr, get(out, "error"), name)
	}
	if status, _, _, _ := g.api("alice", "GET", "/repos/bob/"+name, nil); status != http.StatusNotFound {
		t.Errorf("bob/%s: status %d after the refused accept; want 404", name, status)
	}
}
