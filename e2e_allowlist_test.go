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

// refusedNaming fails t unless a tool call was refused by the policy with a
// reason that names repository repo.
func refusedNaming(t *testing.T, what string, out map[string]any, isErr bool, repo string) {
	t.Helper()
	if reason := str(get(out, "error.permission_report.reason")); !isErr || !strings.Contains(reason, `"`+repo+`"`) {
		t.Errorf("%s: isError %v, %v; want refused as naming %s", what, isErr, get(out, "error"), repo)
	}
}

// forkAs forks repository repo (owner/name) as login under name, deleted when
// the test ends, and returns the fork's owner/name.
func forkAs(t *testing.T, g *giteaInstance, login, repo, name string) string {
	t.Helper()
	s := &giteaSetup{g: g}
	s.call(login, "POST", "/repos/"+repo+"/forks", map[string]string{"name": name}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api(login, "DELETE", "/repos/"+login+"/"+name, nil) })
	if s.err != nil {
		t.Fatal(s.err)
	}
	return login + "/" + name
}

// allowlistConfig writes a profile file of one profile limited to repo.
func allowlistConfig(t *testing.T, name, repo string, ops ...string) string {
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(fmt.Sprintf(`{"profiles":[{"profile_name":%q,"repositories":[%q],"allowed_operations":["gitea.read","%s"]}]}`,
		name, repo, strings.Join(ops, `","`))), 0o600)
	return config
}

// TestE2EAllowlistMergeTemplateExpansion: a merge template whose raw text
// names no issue outside the list, but whose expansion as Gitea expands it
// ("Fixes ${BaseRepoOwnerName}/<secret>#N", or across "${}") does, is refused:
// the merge would close that issue. Nothing reaches it.
func TestE2EAllowlistMergeTemplateExpansion(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6tpl")
	owner, name, _ := strings.Cut(repo, "/")
	_, secretName, _ := strings.Cut(secret, "/")
	var p struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "plain", "message": "clean",
		"files": fileOps("plain.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "plain", "base": "main", "title": "clean plain"}, http.StatusCreated, &p)
	tpl := fmt.Sprintf("Fixes ${BaseRepoOwnerName}/%s#%d\n", secretName, far.Number)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "merge template", "files": []map[string]string{{"operation": "create",
		"path": ".gitea/default_merge_message/MERGE_TEMPLATE.md", "content": base64.StdEncoding.EncodeToString([]byte(tpl))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=merger", "GITEA_MCP_CONFIG="+allowlistConfig(t, "merger", repo, "gitea.pr.merge"), "GITEA_MCP_TOOLS=repoMergePullRequest")
	res, isErr := c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": p.Number,
		"body": map[string]any{"do": "merge", "head_commit_id": p.Head.SHA, "delete_branch_after_merge": false}})
	refusedNaming(t, "a merge whose expanded template names an issue outside", res, isErr, secret)
	if state := issueState(t, g, secret, far.Number); state != "open" || len(timeline(t, g, secret, far.Number)) != 0 {
		t.Errorf("%s#%d is %s, with a timeline: the refused merge reached it", secret, far.Number, state)
	}
}

// TestE2EAllowlistForkDeleteClosesUpstreamPR: deleting a fork inside the list
// would close the parent's pull requests (outside it) whose head is in the
// fork: it is refused, and the pull request stays open.
func TestE2EAllowlistForkDeleteClosesUpstreamPR(t *testing.T) {
	g := needGitea(t)
	s := &giteaSetup{g: g}
	upName := "rt6del-" + strings.ToLower(rand.Text()[:8])
	up, fork := "bob/"+upName, "alice/"+upName+"-fork"
	s.call("bob", "POST", "/user/repos", map[string]any{"name": upName, "auto_init": true, "default_branch": "main"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+up, nil) })
	s.call("alice", "POST", "/repos/"+up+"/forks", map[string]string{"name": upName + "-fork"}, http.StatusAccepted, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+fork, nil) })
	s.call("alice", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "feat", "message": "feat", "files": fileOps("feat.txt")}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("alice", "POST", "/repos/"+up+"/pulls", map[string]string{"head": "alice:feat", "base": "main", "title": "from fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=forkadmin", "GITEA_MCP_CONFIG="+allowlistConfig(t, "forkadmin", fork, "gitea.repo.admin"), "GITEA_MCP_TOOLS=repoDelete")
	owner, name, _ := strings.Cut(fork, "/")
	res, isErr := c.callTool("repoDelete", map[string]any{"owner": owner, "repo": name})
	refusedNaming(t, "deleting a fork whose parent is outside", res, isErr, up)
	if state := issueState(t, g, up, pr.Number); state != "open" {
		t.Errorf("%s#%d is %s after the refused deletion", up, pr.Number, state)
	}
}

// TestE2EAllowlistTitleEditReparsesBody: editing only an issue's title makes
// Gitea parse its stored description again, as the editor: a reference
// another writer planted (who could not read the issue outside, so nothing
// was recorded) would be recorded as the profile's user. It is refused.
func TestE2EAllowlistTitleEditReparsesBody(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6title")
	owner, name, _ := strings.Cut(repo, "/")
	var issue struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "planted", "body": fmt.Sprintf("closes %s#%d", secret, far.Number)}, http.StatusCreated, &issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	before := len(timeline(t, g, secret, far.Number))
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=editor", "GITEA_MCP_CONFIG="+allowlistConfig(t, "editor", repo, "gitea.issue.edit"), "GITEA_MCP_TOOLS=issueEditIssue")
	res, isErr := c.callTool("issueEditIssue", map[string]any{"owner": owner, "repo": name, "index": issue.Number, "body": map[string]any{"title": "retitled"}})
	refusedNaming(t, "a new title over a description naming an issue outside", res, isErr, secret)
	if after := len(timeline(t, g, secret, far.Number)); after != before {
		t.Errorf("the refused title edit wrote into %s#%d (%d -> %d events)", secret, far.Number, before, after)
	}
}

// TestE2EAllowlistHardBreakReference: Gitea reads issue and pull request
// texts as Markdown stripped of markup, and a hard line break ("  \n" or
// "\\\n") joins the two lines with nothing between: "alice/  \nsecret#1" is
// alice/secret#1 to Gitea. Both are refused, and nothing reaches the issue.
func TestE2EAllowlistHardBreakReference(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6br")
	owner, name, _ := strings.Cut(repo, "/")
	sOwner, sName, _ := strings.Cut(secret, "/")
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "work", "message": "work", "files": fileOps("work.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := allowlistConfig(t, "writer", repo, "gitea.issue.create", "gitea.pr.create")
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=writer", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=issueCreateIssue,repoCreatePullRequest")
	res, isErr := c.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"title": "notes", "body": fmt.Sprintf("see %s/  \n%s#%d", sOwner, sName, far.Number)}})
	refusedNaming(t, "an issue naming one outside across two spaces and a newline", res, isErr, secret)
	res, isErr = c.callTool("repoCreatePullRequest", map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"title": "work", "head": "work", "base": "main", "body": fmt.Sprintf("Closes %s/\\\n%s#%d", sOwner, sName, far.Number)}})
	refusedNaming(t, "a pull request closing one outside across a backslash and a newline", res, isErr, secret)
	if events := timeline(t, g, secret, far.Number); len(events) != 0 {
		t.Errorf("%s#%d has %d events after the refused writes", secret, far.Number, len(events))
	}
}

// TestE2EAllowlistRebaseTemplateCommitTitle: a rebase amends the last commit
// with the repository's REBASE_TEMPLATE.md expanded with that commit's own
// title and body (CommitTitle, CommitBody): a template "Fixes
// ${BaseRepoOwnerName}/${CommitTitle}#N" and a commit titled after a
// repository outside the list name an issue there that neither names alone.
// The merge is refused, and nothing reaches the issue.
func TestE2EAllowlistRebaseTemplateCommitTitle(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt7tpl")
	owner, name, _ := strings.Cut(repo, "/")
	_, secretName, _ := strings.Cut(secret, "/")
	var p struct {
		Number int
		Head   struct{ SHA string }
	}
	// The template first: a rebase merge is judged only where the head starts at the base's tip.
	tpl := fmt.Sprintf("Fixes ${BaseRepoOwnerName}/${CommitTitle}#%d\n", far.Number)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "rebase template", "files": []map[string]string{{"operation": "create",
		"path": ".gitea/default_merge_message/REBASE_TEMPLATE.md", "content": base64.StdEncoding.EncodeToString([]byte(tpl))}}}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "plain", "message": secretName + "\n\nplain work",
		"files": fileOps("plain.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "plain", "base": "main", "title": "clean plain"}, http.StatusCreated, &p)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=merger", "GITEA_MCP_CONFIG="+allowlistConfig(t, "merger", repo, "gitea.pr.merge"), "GITEA_MCP_TOOLS=repoMergePullRequest")
	waitMergeable(t, e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-merger"), owner, name, p.Number) // else Gitea answers 405 without merging
	res, isErr := c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": p.Number,
		"body": map[string]any{"do": "rebase", "head_commit_id": p.Head.SHA, "delete_branch_after_merge": false}})
	refusedNaming(t, "a rebase whose template joins the commit's title into an issue outside", res, isErr, secret)
	if state := issueState(t, g, secret, far.Number); state != "open" || len(timeline(t, g, secret, far.Number)) != 0 {
		t.Errorf("%s#%d is %s, with a timeline: the refused merge reached it", secret, far.Number, state)
	}
}
