package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ECloseCarriesNoEdit: against a real Gitea, which applies every field
// of an edit before it changes the state (and keeps them when the close
// fails), a close that sets another field needs the edit permission too, and
// deleting a pull request through the issue API needs gitea.repo.admin.
func TestE2ECloseCarriesNoEdit(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	s := &giteaSetup{g: g}
	s.commit("bob", "main", "names/close", "close probe", map[string][]byte{"names-close.txt": []byte("x\n")})
	pr := s.pull("bob", "names/close", "original title")
	var issue struct{ Number int }
	s.call("carol", "POST", "/repos/"+g.Repo+"/issues", map[string]any{"title": "original issue title"}, http.StatusCreated, &issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	edit := func(op string, index int) map[string]any {
		return map[string]any{"operation": op, "arguments": map[string]any{"owner": owner, "repo": repo, "index": index,
			"body": map[string]any{"state": "closed", "title": "retitled by a close", "body": "rewritten"}}}
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=prgs-reconciler")
	c.initialize("2025-11-25")
	for _, tc := range []struct {
		op, perm, path string
		index          int
	}{
		{"repoEditPullRequest", "gitea.pr.create", fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, pr), pr},
		{"issueEditIssue", "gitea.issue.edit", fmt.Sprintf("/repos/%s/issues/%d", g.Repo, issue.Number), issue.Number},
	} {
		out, isErr := c.callTool("gitea_call_operation", edit(tc.op, tc.index))
		if !isErr || get(out, "error.permission_report.required_permission") != tc.perm {
			t.Errorf("%s closing and retitling: isError %v, %v; want %s denied", tc.op, isErr, get(out, "error"), tc.perm)
		}
		var got struct{ Title, State string }
		s.call("alice", "GET", tc.path, nil, http.StatusOK, &got)
		if !strings.HasPrefix(got.Title, "original") || got.State != "open" {
			t.Errorf("%s: Gitea has title %q, state %q; want the original, open", tc.op, got.Title, got.State)
		}
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"issue-janitor","allowed_operations":["gitea.read","gitea.issue.delete"]}]}`), 0o600)
	j := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=issue-janitor", "GITEA_MCP_CONFIG="+config)
	j.initialize("2025-11-25")
	out, isErr := j.callTool("gitea_api_request", map[string]any{"method": "DELETE", "path": fmt.Sprintf("/repos/%s/issues/%d", g.Repo, pr)})
	if !isErr || get(out, "error.permission_report.required_permission") != "gitea.repo.admin" {
		t.Errorf("deleting pull request %d through the issue API: isError %v, %v; want gitea.repo.admin denied", pr, isErr, get(out, "error"))
	}
	if status, _, _, _ := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, pr), nil); status != http.StatusOK {
		t.Errorf("pull request %d: status %d after the refused delete", pr, status)
	}
}

// TestE2EWrittenNames: under repositories, the names Gitea writes into a
// commit message are judged as its text: the pull request author's full name
// (a squash's Co-authored-by trailer, written when no commit's author address
// is the author's), the approvers' (a template's ReviewedBy) and the
// caller's (a contents write's Signed-off-by line).
func TestE2EWrittenNames(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	other, _ := scratchRepo(t, g, "names-other", false)
	s := &giteaSetup{g: g}
	naming := func(login string) {
		var me struct {
			FullName string `json:"full_name"`
		}
		s.call(login, "GET", "/user", nil, http.StatusOK, &me)
		t.Cleanup(func() { g.api(login, "PATCH", "/user/settings", map[string]any{"full_name": me.FullName}) })
		s.call(login, "PATCH", "/user/settings", map[string]any{"full_name": "fixes " + other + "#1"}, http.StatusOK, nil)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"scoped","repositories":["`+g.Repo+`"],
		"allowed_operations":["gitea.read","gitea.pr.merge","gitea.branch.create","gitea.repo.commit"]}]}`), 0o600)
	merge := func(c *client, pr int, head string) (map[string]any, bool) {
		return c.callTool("gitea_call_operation", map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{
			"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"do": "squash", "head_commit_id": head, "delete_branch_after_merge": false}}})
	}

	// The author's name: bob's pull request of a commit another address authored.
	var res struct{ Commit struct{ SHA string } }
	someone := map[string]string{"name": "Someone", "email": "someone@example.org"}
	s.call("bob", "POST", "/repos/"+g.Repo+"/contents/names-squash.txt", map[string]any{"content": "aGkK", "message": "squash probe",
		"new_branch": "names/squash", "author": someone, "committer": someone}, http.StatusCreated, &res)
	pr := s.pull("bob", "names/squash", "squash probe")
	naming("bob")
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=scoped", "GITEA_MCP_CONFIG="+config)
	c.initialize("2025-11-25")
	out, isErr := merge(c, pr, res.Commit.SHA)
	refusedNaming(t, "a squash whose author's name names another repository's issue", out, isErr, other)

	// The approvers' names, in the squash template's ReviewedBy.
	const tplPath = ".gitea/default_merge_message/SQUASH_TEMPLATE.md"
	var tpl struct{ Content struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+g.Repo+"/contents/"+tplPath, map[string]any{"content": "JHtQdWxsUmVxdWVzdFRpdGxlfSAke1Jldmlld2VkQnl9Cg==", // ${PullRequestTitle} ${ReviewedBy}
		"message": "squash template"}, http.StatusCreated, &tpl)
	t.Cleanup(func() {
		g.api("alice", "DELETE", "/repos/"+g.Repo+"/contents/"+tplPath, map[string]any{"sha": tpl.Content.SHA, "message": "drop the squash template"})
	})
	head := s.commit("alice", "main", "names/tpl", "template probe", map[string][]byte{"names-tpl.txt": []byte("x\n")})
	tplPR := s.pull("alice", "names/tpl", "template probe")
	s.call("bob", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", g.Repo, tplPR), map[string]any{"event": "APPROVED", "commit_id": head, "body": "ok"}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	m := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=scoped", "GITEA_MCP_CONFIG="+config)
	m.initialize("2025-11-25")
	out, isErr = merge(m, tplPR, head)
	refusedNaming(t, "a squash whose template writes an approver's name naming another repository's issue", out, isErr, other)

	// The caller's name, in a sign-off.
	out, isErr = m.callTool("gitea_call_operation", map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": owner, "repo": repo,
		"filepath": "names-signoff.txt", "body": map[string]any{"content": "aGkK", "message": "plain", "new_branch": "names/signoff", "signoff": true}}})
	if isErr {
		t.Errorf("carol's clean sign-off refused: %v", get(out, "error"))
	}
	naming("carol")
	out, isErr = m.callTool("gitea_call_operation", map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": owner, "repo": repo,
		"filepath": "names-signoff2.txt", "body": map[string]any{"content": "aGkK", "message": "plain", "new_branch": "names/signoff2", "signoff": true}}})
	refusedNaming(t, "a sign-off by a caller whose name names another repository's issue", out, isErr, other)
}

// TestE2EReconcileShadowBranch: a branch named after the head's or the
// base's commit id, which Gitea reads before the commit in a comparison,
// does not make gitea_reconcile_already_landed_pr close a pull request whose
// head is not in its base: the proof names both by object id.
func TestE2EReconcileShadowBranch(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	s := &giteaSetup{g: g}
	var main struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	s.call("alice", "GET", "/repos/"+g.Repo+"/branches/main", nil, http.StatusOK, &main)
	branch := func(name, from string) {
		s.call("bob", "POST", "/repos/"+g.Repo+"/branches", map[string]any{"new_branch_name": name, "old_ref_name": from}, http.StatusCreated, nil)
		t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+g.Repo+"/branches/"+name, nil) })
	}
	headPR, head := newPR(t, g, "bob", "names/shadow-head")
	branch(head, "main") // "head" at main: head...main compares equal
	basePR, _ := newPR(t, g, "bob", "names/shadow-base")
	branch(main.Commit.ID, "names/shadow-base") // "base" at the pull request's head
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=prgs-reconciler")
	c.initialize("2025-11-25")
	for _, pr := range []int{headPR, basePR} {
		out, isErr := c.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": repo, "index": pr})
		if !isErr || get(out, "data.closed") != false || prState(t, g, pr) != "open" {
			t.Errorf("pull request %d, not in main, closed as landed: %v", pr, out)
		}
	}
}
