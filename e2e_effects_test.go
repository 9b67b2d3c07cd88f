package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// effectTools are the generated tools the effect and allowlist tests call.
const effectTools = "GITEA_MCP_TOOLS=repoMergePullRequest,repoUpdatePullRequest,repoCreateFile,repoGetByID,repoSearch,issueSearchIssues,userListRepos,repoGet,getVersion,issueCreateIssueDependencies,repoUpdateBranch,repoCompareDiff,repoCreatePullRequest,repoMigrate"

// wantDenied calls one operation through all three doors and requires a
// permission_denied answer requiring perm whose reason contains reason.
func wantDenied(t *testing.T, c *client, op, method, path string, args map[string]any, perm, reason string) {
	t.Helper()
	for _, r := range routes(op, method, path, args) {
		res, isErr := c.callTool(r.tool, r.args)
		report, _ := get(res, "error.permission_report").(map[string]any)
		if !isErr || str(get(res, "error.kind")) != "permission_denied" || report == nil {
			t.Errorf("%s %s: not denied: %v", op, r.name, res)
			continue
		}
		if str(report["required_permission"]) != perm || !strings.Contains(str(report["reason"]), reason) {
			t.Errorf("%s %s: permission_report %v; want %s and a reason containing %q", op, r.name, report, perm, reason)
		}
	}
}

// scratchRepo creates a repository of alice's with bob and carol as writers,
// deleted when the test ends, and returns its full name and id.
func scratchRepo(t *testing.T, g *giteaInstance, prefix string, private bool) (string, int64) {
	t.Helper()
	name := prefix + "-" + strings.ToLower(rand.Text()[:8])
	s := &giteaSetup{g: g}
	var repo struct{ ID int64 }
	s.call("alice", "POST", "/user/repos", map[string]any{"name": name, "auto_init": true, "default_branch": "main", "private": private}, http.StatusCreated, &repo)
	for _, login := range giteaLogins[1:] {
		s.call("alice", "PUT", "/repos/alice/"+name+"/collaborators/"+login, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/alice/"+name, nil) })
	return "alice/" + name, repo.ID
}

// gitClone clones repository path (owner/name, or owner/name.wiki) as login
// into a new directory, and returns it and a function that runs git there as
// login: it fails the test on an error and returns git's output, trimmed.
func gitClone(t *testing.T, g *giteaInstance, login, path string) (string, func(args ...string) string) {
	t.Helper()
	dir := t.TempDir()
	u, err := url.Parse(g.URL)
	if err != nil {
		t.Fatal(err)
	}
	u.User, u.Path = url.UserPassword(login, g.Tokens[login]), "/"+path+".git"
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=" + login, "-c", "user.email=" + login + "@example.com"}, args...)...)
		cmd.Dir = dir
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args[0], err, out) // not the clone's address: it holds the token
		}
		return strings.TrimSpace(string(out))
	}
	git("clone", "-q", u.String(), ".")
	return dir, git
}

// branchSHA reads the head commit of branch in repo (owner/name) straight from Gitea.
func branchSHA(t *testing.T, g *giteaInstance, repo, branch string) string {
	t.Helper()
	var b struct{ Commit struct{ ID string } }
	s := &giteaSetup{g: g}
	s.call("alice", "GET", "/repos/"+repo+"/branches/"+branch, nil, http.StatusOK, &b)
	if s.err != nil {
		t.Fatal(s.err)
	}
	return b.Commit.ID
}

// TestE2EForceMerge: force_merge: true past a protection requiring two
// approvals is refused to gitea-merger on every door, and nothing is merged.
func TestE2EForceMerge(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "guarded", false)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", "required_approvals": 2}, http.StatusCreated, nil)
	pr := s.topicPR("bob", repo, "topic", "needs two approvals", "topic.txt")
	if s.err != nil {
		t.Fatal(s.err)
	}
	repoOwner, name, _ := strings.Cut(repo, "/")
	path := fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, pr.Number)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", effectTools)
	wantDenied(t, c, "repoMergePullRequest", "POST", path,
		map[string]any{"owner": repoOwner, "repo": name, "index": pr.Number, "body": map[string]any{"do": "merge", "force_merge": true}},
		"gitea.pr.force_merge", "force_merge: true merges past branch protection")
	wantDenied(t, c, "repoMergePullRequest", "POST", path,
		map[string]any{"owner": repoOwner, "repo": name, "index": pr.Number, "body": map[string]any{"do": "merge", "delete_branch_after_merge": true}},
		"gitea.branch.delete", "deletes the head branch")
	_, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil)
	if err != nil || !strings.Contains(string(data), `"merged":false`) || !strings.Contains(string(data), `"state":"open"`) {
		t.Fatalf("the pull request changed: %v %.300s", err, data)
	}
	// The protection is real: only gitea-owner's force_merge gets past it.
	owner := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner", effectTools)
	merge := func(body map[string]any) (map[string]any, bool) { // retried while Gitea still checks mergeability
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			res, isErr := owner.callTool("repoMergePullRequest", map[string]any{"owner": repoOwner, "repo": name, "index": pr.Number, "body": body})
			if !isErr || !strings.Contains(str(get(res, "error.message")), "try again later") || time.Now().After(deadline) {
				return res, isErr
			}
		}
	}
	if res, isErr := merge(map[string]any{"do": "merge", "head_commit_id": pr.Head.SHA}); !isErr || !strings.Contains(str(get(res, "error.message")), "enough approvals") {
		t.Errorf("a merge without approvals: %v", res)
	}
	if res, isErr := merge(map[string]any{"do": "merge", "head_commit_id": pr.Head.SHA, "force_merge": true}); isErr {
		t.Errorf("force merge under gitea-owner: %v", res)
	}
}

// TestE2ERepositoryAllowlist: with repositories ["alice/demo"], routes that
// name no single repository are refused, and so is updating a pull request
// whose head is in a fork outside the list; the fork branch is untouched.
func TestE2ERepositoryAllowlist(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	secret, secretID := scratchRepo(t, g, "secret", true)
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"demo-only","repositories":["`+g.Repo+`"],
		"allowed_operations":["gitea.read","gitea.branch.push","gitea.pr.create","gitea.issue.edit","gitea.repo.create"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=demo-only", "GITEA_MCP_CONFIG="+config, effectTools)
	for _, tc := range []struct {
		op, path string
		args     map[string]any
	}{
		{"repoGetByID", fmt.Sprintf("/repositories/%d", secretID), map[string]any{"id": secretID}},
		{"repoSearch", "/repos/search", map[string]any{}},
		{"issueSearchIssues", "/repos/issues/search", map[string]any{}},
		{"userListRepos", "/users/alice/repos", map[string]any{"username": "alice"}},
	} {
		wantDenied(t, c, tc.op, "GET", tc.path, tc.args, "gitea.read", "names no single repository")
	}
	for op, args := range map[string]map[string]any{"repoGet": {"owner": owner, "repo": name}, "getVersion": {}} {
		if res, isErr := c.callTool(op, args); isErr {
			t.Errorf("%s under demo-only: %v", op, res)
		}
	}

	// A migration into the list whose source is a repository of this Gitea
	// outside it, under any spelling of Gitea's host (the policy compared the
	// host name only, so localhost or [::ffff:127.0.0.1] went unjudged).
	port := g.URL[strings.LastIndex(g.URL, ":"):]
	for _, base := range []string{g.URL, "http://localhost" + port, "http://LOCALHOST." + port, "http://[::ffff:127.0.0.1]" + port, "http://127.1" + port, "http://0.0.0.0" + port} {
		wantDenied(t, c, "repoMigrate", "POST", "/repos/migrate", map[string]any{"body": map[string]any{
			"clone_addr": base + "/" + secret + ".git", "repo_owner": owner, "repo_name": name, "auth_token": "x"}},
			"gitea.repo.create", `repoMigrate reads "`+secret+`", which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of demo-only`)
	}
	// Found by review: this Gitea may answer at an address the server does not
	// know (a public address in front of an internal GITEA_URL), under a path
	// prefix, and serves a repository's wiki too: a source whose owner/name
	// this Gitea has is judged whatever the host (192.0.2.10, a documentation
	// address, is never reached). And a migration naming its owner by id (uid)
	// put the repository under that owner, outside the list.
	for _, src := range []string{"http://192.0.2.10/" + secret + ".git", "https://192.0.2.10/gitea/" + strings.ToUpper(secret) + ".wiki.GIT"} {
		wantDenied(t, c, "repoMigrate", "POST", "/repos/migrate", map[string]any{"body": map[string]any{"clone_addr": src, "repo_owner": owner, "repo_name": name}},
			"gitea.repo.create", "which is on this Gitea or may be")
	}
	wantDenied(t, c, "repoMigrate", "POST", "/repos/migrate", map[string]any{"body": map[string]any{"clone_addr": "http://192.0.2.10/" + g.Repo + ".git", "repo_name": name, "uid": 2}},
		"gitea.repo.create", "repoMigrate names its owner by id (uid 2)")

	// bob's fork, a branch in it and a pull request from it into the fixture repository.
	fork := "bob/" + name + "-fork"
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+g.Repo+"/forks", map[string]string{"name": name + "-fork"}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "fork-topic", "message": "from the fork",
		"files": []map[string]string{{"operation": "create", "path": "fork.txt", "content": base64.StdEncoding.EncodeToString([]byte("fork\n"))}}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+g.Repo+"/pulls", map[string]string{"head": "bob:fork-topic", "base": "main", "title": "from a fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	before := branchSHA(t, g, fork, "fork-topic")
	wantDenied(t, c, "repoUpdatePullRequest", "POST", fmt.Sprintf("/repos/%s/pulls/%d/update", g.Repo, pr.Number),
		map[string]any{"owner": owner, "repo": name, "index": pr.Number}, "gitea.branch.push", `writes to the head branch "fork-topic" of "`+fork+`", outside the repositories of demo-only`)
	if after := branchSHA(t, g, fork, "fork-topic"); after != before {
		t.Errorf("the fork branch moved from %s to %s", before, after)
	}
	// Comparing with the fork's branch, or opening a pull request from it, reveals the fork.
	basehead := "main..." + fork + ":fork-topic"
	wantDenied(t, c, "repoCompareDiff", "GET", "/repos/"+g.Repo+"/compare/"+basehead,
		map[string]any{"owner": owner, "repo": name, "basehead": basehead}, "gitea.read", `in "`+fork+`", outside the repositories of demo-only`)
	wantDenied(t, c, "repoCreatePullRequest", "POST", "/repos/"+g.Repo+"/pulls",
		map[string]any{"owner": owner, "repo": name, "body": map[string]any{"base": "main", "head": "bob:fork-topic", "title": "again"}},
		"gitea.pr.create", "in a fork Gitea finds by its owner")
	// An issue dependency on the fork's issue tracker names a repository outside the list.
	deps := fmt.Sprintf("/repos/%s/issues/%d/dependencies", g.Repo, g.Issues[0])
	wantDenied(t, c, "issueCreateIssueDependencies", "POST", deps,
		map[string]any{"owner": owner, "repo": name, "index": fmt.Sprint(g.Issues[0]), "body": map[string]any{"owner": "bob", "repo": name + "-fork", "index": 1}},
		"gitea.issue.edit", `links an issue of "`+fork+`", outside the repositories of demo-only`)
	if _, _, data, _ := g.api("alice", "GET", deps, nil); strings.TrimSpace(string(data)) != "[]" {
		t.Errorf("dependencies after the refusals: %s", data)
	}
}

// TestE2EDefaultBranchWrites: a file written to the default branch, named or
// left out, needs gitea.pr.merge under gitea-author; a new branch is fine, and
// so is the default branch with allow_default_branch_writes.
func TestE2EDefaultBranchWrites(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	file := "e2e-direct-" + strings.ToLower(rand.Text()[:6]) + ".txt"
	content := base64.StdEncoding.EncodeToString([]byte("direct\n"))
	write := func(body map[string]any) map[string]any {
		body["content"], body["message"] = content, "direct write"
		return map[string]any{"owner": owner, "repo": name, "filepath": file, "body": body}
	}
	path := "/repos/" + g.Repo + "/contents/" + file
	author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", effectTools)
	wantDenied(t, author, "repoCreateFile", "POST", path, write(map[string]any{}), "gitea.pr.merge", `lands on "main", the default branch of "`+g.Repo+`"`)
	wantDenied(t, author, "repoCreateFile", "POST", path, write(map[string]any{"branch": "feature/x", "new_branch": "main"}), "gitea.pr.merge", "landing code without review")
	if status, _, _, _ := g.api("alice", "GET", path+"?ref=main", nil); status != http.StatusNotFound {
		t.Fatalf("a refused write reached main: GET %s status %d", path, status)
	}
	mainSHA := branchSHA(t, g, g.Repo, "main")
	wantDenied(t, author, "repoUpdateBranch", "PUT", "/repos/"+g.Repo+"/branches/main",
		map[string]any{"owner": owner, "repo": name, "branch": "main", "body": map[string]any{"new_commit_id": g.FeatureSHA, "force": true}},
		"gitea.branch.delete", "force: true moves the branch")
	wantDenied(t, author, "repoUpdateBranch", "PUT", "/repos/"+g.Repo+"/branches/main",
		map[string]any{"owner": owner, "repo": name, "branch": "main", "body": map[string]any{"new_commit_id": g.FeatureSHA}},
		"gitea.pr.merge", `lands on "main", the default branch`)
	if after := branchSHA(t, g, g.Repo, "main"); after != mainSHA {
		t.Fatalf("main moved from %s to %s", mainSHA, after)
	}
	if res, isErr := author.callTool("repoCreateFile", write(map[string]any{"new_branch": "e2e/" + file})); isErr {
		t.Errorf("a write to a new branch under gitea-author: %v", res)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"direct-author","allow_default_branch_writes":true,
		"allowed_operations":["gitea.read","gitea.repo.commit"],"forbidden_operations":["gitea.pr.merge"]}]}`), 0o600)
	direct := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=direct-author", "GITEA_MCP_CONFIG="+config, effectTools)
	if res, isErr := direct.callTool("gitea_api_request", map[string]any{"method": "POST", "path": path, "body": write(map[string]any{"branch": "main"})["body"]}); isErr {
		t.Errorf("a write to main with allow_default_branch_writes: %v", res)
	}
	if status, _, _, _ := g.api("alice", "GET", path+"?ref=main", nil); status != http.StatusOK {
		t.Errorf("the allowed write is not on main: status %d", status)
	}
}
