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

// TestE2EAllowlistMergeTemplateExpansion: a merge template whose raw text names no
// issue outside the list, but whose expansion (os.Expand of ${...} and $x)
// does: "Fixes ${BaseRepoOwnerName}/<secret>#N" or "Fixes alice/se${}cret#N".
func TestE2EAllowlistMergeTemplateExpansion(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6tpl")
	owner, name, _ := strings.Cut(repo, "/")
	_, secretName, _ := strings.Cut(secret, "/")
	type pr struct {
		Number int
		Head   struct{ SHA string }
	}
	var p pr
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "plain", "message": "clean",
		"files": fileOps("plain.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "plain", "base": "main", "title": "clean plain"}, http.StatusCreated, &p)
	tpl := os.Getenv("RT6_TPL")
	if tpl == "" {
		tpl = "Fixes ${BaseRepoOwnerName}/" + secretName + "#%d"
	}
	tpl = fmt.Sprintf(tpl, far.Number)
	tpl = strings.ReplaceAll(tpl, "SECRET", secretName)
	t.Logf("template: %q", tpl)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "merge template", "files": []map[string]string{{"operation": "create",
		"path": ".gitea/default_merge_message/MERGE_TEMPLATE.md", "content": base64.StdEncoding.EncodeToString([]byte(tpl + "\n"))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"merger","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.pr.merge"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=merger", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoMergePullRequest")
	var res map[string]any
	var isErr bool
	for i := 0; i < 20; i++ {
		res, isErr = c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": p.Number,
			"body": map[string]any{"do": "merge", "head_commit_id": p.Head.SHA, "delete_branch_after_merge": false}})
		if !isErr || str(get(res, "error.kind")) == "permission_denied" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("merge: isErr=%v %v", isErr, res)
	time.Sleep(3 * time.Second)
	var refs int
	for _, e := range timeline(t, g, secret, far.Number) {
		t.Logf("timeline of %s#%d: %v %v", secret, far.Number, e["type"], e["body"])
		if e["type"] == "commit_ref" {
			refs++
		}
	}
	state := issueState(t, g, secret, far.Number)
	t.Logf("%s#%d is %s with %d commit references", secret, far.Number, state, refs)
	if !isErr && (state != "open" || refs != 0) {
		t.Errorf("allowed merge wrote to %s#%d outside the list: state %s, %d commit refs", secret, far.Number, state, refs)
	}
}

// randSuffix makes a repository name unique to a run.
func randSuffix() string { return fmt.Sprintf("%x", time.Now().UnixNano())[8:] }

// TestE2EAllowlistForkDeleteClosesUpstreamPR: deleting a fork inside the list closes
// the parent's pull requests (outside it) whose head is in the fork.
func TestE2EAllowlistForkDeleteClosesUpstreamPR(t *testing.T) {
	g := needGitea(t)
	s := &giteaSetup{g: g}
	up := "rt6del-" + strings.ToLower(randSuffix())
	s.call("bob", "POST", "/user/repos", map[string]any{"name": up, "auto_init": true, "default_branch": "main"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/bob/"+up, nil) })
	fork := "alice/" + up + "-fork"
	s.call("alice", "POST", "/repos/bob/"+up+"/forks", map[string]string{"name": up + "-fork"}, http.StatusAccepted, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+fork, nil) })
	time.Sleep(time.Second)
	s.call("alice", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "feat", "message": "feat", "files": fileOps("feat.txt")}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("alice", "POST", "/repos/bob/"+up+"/pulls", map[string]string{"head": "alice:feat", "base": "main", "title": "from fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"forkadmin","repositories":["`+fork+`"],
		"allowed_operations":["gitea.read","gitea.repo.admin"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=forkadmin", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoDelete")
	owner, name, _ := strings.Cut(fork, "/")
	res, isErr := c.callTool("repoDelete", map[string]any{"owner": owner, "repo": name})
	t.Logf("delete: isErr=%v %v", isErr, get(res, "error"))
	time.Sleep(2 * time.Second)
	for _, e := range timeline(t, g, "bob/"+up, pr.Number) {
		t.Logf("timeline of bob/%s#%d: %v by %v", up, pr.Number, e["type"], get(e, "user.login"))
	}
	state := issueState(t, g, "bob/"+up, pr.Number)
	t.Logf("bob/%s#%d is %s", up, pr.Number, state)
	if !isErr && state != "open" {
		t.Errorf("deleting %s closed bob/%s#%d outside the list", fork, up, pr.Number)
	}
}

// TestE2EAllowlistTitleEditReparsesBody: editing only an issue's title makes Gitea
// parse its existing description again, as the editor: a reference another
// writer planted (who could not read the issue outside, so nothing was
// recorded) is recorded as the profile's user.
func TestE2EAllowlistTitleEditReparsesBody(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6title")
	owner, name, _ := strings.Cut(repo, "/")
	var issue struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "planted", "body": fmt.Sprintf("closes %s#%d", secret, far.Number)}, http.StatusCreated, &issue)
	if s.err != nil {
		t.Fatal(s.err)
	}
	time.Sleep(time.Second)
	before := len(timeline(t, g, secret, far.Number))
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"editor","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.issue.edit"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=editor", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=issueEditIssue")
	res, isErr := c.callTool("issueEditIssue", map[string]any{"owner": owner, "repo": name, "index": issue.Number, "body": map[string]any{"title": "retitled"}})
	t.Logf("edit: isErr=%v %v", isErr, get(res, "error"))
	time.Sleep(time.Second)
	events := timeline(t, g, secret, far.Number)
	for _, e := range events {
		t.Logf("timeline of %s#%d: %v by %v ref_issue=%v", secret, far.Number, e["type"], get(e, "user.login"), get(e, "ref_issue.number"))
	}
	if !isErr && len(events) > before {
		t.Errorf("a title edit in %s wrote into %s#%d (%d -> %d events)", repo, secret, far.Number, before, len(events))
	}
}

// TestE2EAllowlistHardBreakReference: Gitea reads issue, comment and pull request
// texts as Markdown stripped of markup, and a hard line break ("  \n" or
// "\\\n") joins the two lines with nothing between them: "alice/  \nsecret#1"
// is alice/secret#1 to Gitea, and no owner/name#N to crossRef.
func TestE2EAllowlistHardBreakReference(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "rt6br")
	owner, name, _ := strings.Cut(repo, "/")
	sOwner, sName, _ := strings.Cut(secret, "/")
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"writer","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.issue.create","gitea.pr.create"]},
		{"profile_name":"merger","repositories":["`+repo+`"],"allowed_operations":["gitea.read","gitea.pr.merge"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=writer", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=issueCreateIssue,repoCreatePullRequest")
	res, isErr := c.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"title": "notes", "body": fmt.Sprintf("see %s/  \n%s#%d", sOwner, sName, far.Number)}})
	t.Logf("issue: isErr=%v %v", isErr, get(res, "error"))
	time.Sleep(time.Second)
	refs := 0
	for _, e := range timeline(t, g, secret, far.Number) {
		t.Logf("timeline of %s#%d: %v by %v", secret, far.Number, e["type"], get(e, "user.login"))
		refs++
	}
	if !isErr && refs > 0 {
		t.Errorf("an allowed issue in %s wrote %d events into %s#%d", repo, refs, secret, far.Number)
	}

	// A pull request by alice whose description closes it, merged by carol.
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "work", "message": "work", "files": fileOps("work.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	res, isErr = c.callTool("repoCreatePullRequest", map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"title": "work", "head": "work", "base": "main", "body": fmt.Sprintf("Closes %s/\\\n%s#%d", sOwner, sName, far.Number)}})
	t.Logf("pr: isErr=%v %v", isErr, get(res, "error"))
	if isErr {
		return
	}
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	var list []struct {
		Number int
		Head   struct{ SHA string }
	}
	s2 := &giteaSetup{g: g}
	s2.call("alice", "GET", "/repos/"+repo+"/pulls?state=open", nil, http.StatusOK, &list)
	if s2.err != nil || len(list) == 0 {
		t.Fatalf("list pulls: %v %v", s2.err, list)
	}
	pr.Number, pr.Head.SHA = list[0].Number, list[0].Head.SHA
	cm := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=merger", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoMergePullRequest")
	for i := 0; i < 20; i++ {
		res, isErr = cm.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number,
			"body": map[string]any{"do": "merge", "head_commit_id": pr.Head.SHA, "delete_branch_after_merge": false, "merge_title_field": "work"}})
		if !isErr || str(get(res, "error.kind")) == "permission_denied" {
			break
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("merge #%d: isErr=%v %v", pr.Number, isErr, get(res, "error"))
	time.Sleep(2 * time.Second)
	for _, e := range timeline(t, g, secret, far.Number) {
		t.Logf("timeline of %s#%d: %v by %v", secret, far.Number, e["type"], get(e, "user.login"))
	}
	if state := issueState(t, g, secret, far.Number); !isErr && state != "open" {
		t.Errorf("carol's allowed merge closed %s#%d", secret, far.Number)
	}
}
