package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// scratchUser creates a user of its own (alice is the administrator) with a
// token, known to g.api by its login until the test ends, when it is deleted
// with everything it owns.
func scratchUser(t *testing.T, g *giteaInstance, prefix string) string {
	t.Helper()
	login := prefix + "-" + strings.ToLower(rand.Text()[:8])
	password := rand.Text()
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/admin/users", map[string]any{"username": login, "email": login + "@example.com", "password": password,
		"must_change_password": false}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() {
		delete(g.Tokens, login)
		g.api("alice", "DELETE", "/admin/users/"+login+"?purge=true", nil)
	})
	req, _ := http.NewRequest("POST", g.URL+"/api/v1/users/"+login+"/tokens", strings.NewReader(`{"name":"rt","scopes":["all"]}`))
	req.SetBasicAuth(login, password)
	req.Header.Set("Content-Type", "application/json")
	resp, err := giteaHTTP.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tok struct{ SHA1 string }
	if err := json.NewDecoder(resp.Body).Decode(&tok); err != nil || resp.StatusCode != http.StatusCreated || tok.SHA1 == "" {
		t.Fatalf("token of %s: status %d, %v", login, resp.StatusCode, err)
	}
	g.Tokens[login] = tok.SHA1
	return login
}

// TestE2ERedteam5BlockUser: blocking a user is an account setting, but Gitea
// also removes the blocked user as a collaborator of every repository the
// caller owns and cancels the transfers between them: it needs
// gitea.repo.admin too. Found by the red team: a profile granting
// gitea.user.settings alone removed a collaborator from the caller's
// repositories.
func TestE2ERedteam5BlockUser(t *testing.T) {
	g := needGitea(t)
	owner, writer := scratchUser(t, g, "rt5owner"), scratchUser(t, g, "rt5writer")
	repo := owner + "/kept"
	s := &giteaSetup{g: g}
	s.call(owner, "POST", "/user/repos", map[string]any{"name": "kept", "auto_init": true}, http.StatusCreated, nil)
	s.call(owner, "PUT", "/repos/"+repo+"/collaborators/"+writer, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"settings","allowed_operations":["gitea.read","gitea.user.settings"]}]}`), 0o600)
	c := e2eClient(t, g, owner, "GITEA_MCP_PROFILE=settings", "GITEA_MCP_CONFIG="+config)
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"gitea_call_operation", map[string]any{"operation": "userBlockUser", "arguments": map[string]any{"username": writer}}},
		{"gitea_api_request", map[string]any{"method": "PUT", "path": "/user/blocks/" + writer}},
	} {
		out, isErr := c.callTool(call.tool, call.args)
		if !isErr || get(out, "error.permission_report.required_permission") != "gitea.repo.admin" {
			t.Errorf("%s: blocking a collaborator: isError %v, %v; want gitea.repo.admin denied", call.tool, isErr, get(out, "error"))
		}
	}
	if status, _, data, err := g.api(owner, "GET", "/repos/"+repo+"/collaborators/"+writer, nil); err != nil || status != http.StatusNoContent {
		t.Errorf("%s is no longer a collaborator of %s: status %d, %v %s", writer, repo, status, err, giteaTail(data))
	}
}

// TestE2ERedteam5DeleteBranchClosesPull: deleting a branch closes the open
// pull requests it heads, and retargets (or closes) those based on it: it
// needs gitea.pr.close, and for a base gitea.pr.create too, as closing or
// retargeting them does. Found by the red team: a profile granting
// gitea.branch.delete without gitea.pr.close closed a pull request by
// deleting its head branch.
func TestE2ERedteam5DeleteBranchClosesPull(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "prune", false)
	s := &giteaSetup{g: g}
	file := func(branch, from string) {
		s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": from, "new_branch": branch, "message": branch,
			"files": []map[string]string{{"operation": "create", "path": branch + ".txt", "content": base64.StdEncoding.EncodeToString([]byte(branch + "\n"))}}}, http.StatusCreated, nil)
	}
	file("pr-head", "main")
	file("pr-top", "pr-head")
	file("loose", "main")
	var headed, stacked struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "pr-head", "base": "main", "title": "headed"}, http.StatusCreated, &headed)
	s.call("alice", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "pr-top", "base": "pr-head", "title": "stacked"}, http.StatusCreated, &stacked)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"pruner","allowed_operations":["gitea.read","gitea.branch.delete"]},
		{"profile_name":"closer","allowed_operations":["gitea.read","gitea.branch.delete","gitea.pr.close"]}]}`), 0o600)
	del := func(c *client, branch string) (map[string]any, bool) {
		return c.callTool("gitea_api_request", map[string]any{"method": "DELETE", "path": "/repos/" + repo + "/branches/" + branch})
	}
	pruner := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=pruner", "GITEA_MCP_CONFIG="+config)
	if out, isErr := del(pruner, "pr-head"); !isErr || get(out, "error.permission_report.required_permission") != "gitea.pr.close" {
		t.Errorf("pruner: deleting pr-head, which heads !%d: isError %v, %v; want gitea.pr.close denied", headed.Number, isErr, get(out, "error"))
	}
	closer := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=closer", "GITEA_MCP_CONFIG="+config)
	if out, isErr := del(closer, "pr-head"); !isErr || get(out, "error.permission_report.required_permission") != "gitea.pr.create" {
		t.Errorf("closer: deleting pr-head, the base of !%d: isError %v, %v; want gitea.pr.create denied", stacked.Number, isErr, get(out, "error"))
	}
	if out, isErr := del(pruner, "loose"); isErr {
		t.Errorf("deleting a branch that heads and bases no pull request refused: %v", get(out, "error"))
	}
	// Gitea adjusts the pull requests of a deleted branch from a queue: wait
	// until it has handled the last deletion, that of loose.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		type activity struct {
			OpType  string `json:"op_type"`
			RefName string `json:"ref_name"`
		}
		var feed []activity
		if s.call("alice", "GET", "/repos/"+repo+"/activities/feeds", nil, http.StatusOK, &feed); slices.ContainsFunc(feed, func(a activity) bool {
			return a.OpType == "delete_branch" && strings.HasSuffix(a.RefName, "loose")
		}) {
			break
		}
	}
	for _, n := range []int{headed.Number, stacked.Number} {
		var got struct {
			State string
			Base  struct{ Ref string }
		}
		s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, n), nil, http.StatusOK, &got)
		if s.err != nil || got.State != "open" || n == stacked.Number && got.Base.Ref != "pr-head" {
			t.Errorf("%s!%d: state %q, base %q (%v); want open, as it was", repo, n, got.State, got.Base.Ref, s.err)
		}
	}
}

// TestE2ERedteam5VisibilityForks: Gitea gives a repository's forks its
// visibility when it changes, forks of forks too: under repositories, a
// visibility change is refused while a fork lies outside them. Found by the
// red team: a profile limited to a private repository made it public, and
// with it another user's private fork.
func TestE2ERedteam5VisibilityForks(t *testing.T) {
	g := needGitea(t)
	base, _ := scratchRepo(t, g, "visible", true)
	_, name, _ := strings.Cut(base, "/")
	fork := forkAs(t, g, "bob", base, name+"-fork")
	s := &giteaSetup{g: g}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=base-admin", "GITEA_MCP_CONFIG="+allowlistConfig(t, "base-admin", base, "gitea.repo.admin"))
	owner, _, _ := strings.Cut(base, "/")
	edit := func(body map[string]any) (map[string]any, bool) {
		return c.callTool("gitea_call_operation", map[string]any{"operation": "repoEdit", "arguments": map[string]any{"owner": owner, "repo": name, "body": body}})
	}
	out, isErr := edit(map[string]any{"private": false})
	if reason, _ := get(out, "error.permission_report.reason").(string); !isErr || !strings.Contains(reason, "a fork of it") {
		t.Errorf("making %s public: isError %v, %v; want it refused for a fork outside", base, isErr, get(out, "error"))
	}
	var got struct{ Private bool }
	s.call("bob", "GET", "/repos/"+fork, nil, http.StatusOK, &got)
	if s.err != nil || !got.Private {
		t.Errorf("%s: private %v (%v); want private, as it was", fork, got.Private, s.err)
	}
	for _, body := range []map[string]any{{"private": true, "description": "unchanged visibility"}, {"description": "no visibility"}} {
		if out, isErr := edit(body); isErr {
			t.Errorf("repoEdit %v refused: %v", body, get(out, "error"))
		}
	}
}

// TestE2ERedteam5TeamRepoOrg: Gitea finds the repository of
// /teams/{id}/repos/{org}/{repo} in the team's organization, whatever {org}
// says: under repositories, the repository judged is the team's
// organization's, read live. Found by the red team: a profile limited to one
// organization's repositories added another organization's repository to
// that organization's team by naming its own organization in the path.
func TestE2ERedteam5TeamRepoOrg(t *testing.T) {
	g := needGitea(t)
	suffix := strings.ToLower(rand.Text()[:8])
	allowed, other := "rt5a-"+suffix, "rt5b-"+suffix
	s := &giteaSetup{g: g}
	var team struct{ ID int64 }
	for _, org := range []string{allowed, other} {
		s.call("alice", "POST", "/orgs", map[string]string{"username": org}, http.StatusCreated, nil)
		t.Cleanup(func() { g.api("alice", "DELETE", "/orgs/"+org, nil) })
	}
	s.call("alice", "POST", "/orgs/"+other+"/repos", map[string]any{"name": "secret", "private": true}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+other+"/secret", nil) })
	s.call("alice", "POST", "/orgs/"+other+"/teams", map[string]any{"name": "crew", "permission": "read", "units": []string{"repo.code"}}, http.StatusCreated, &team)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"org-a","repositories":["`+allowed+`/*"],
		"allowed_operations":["gitea.read","gitea.org.admin"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=org-a", "GITEA_MCP_CONFIG="+config)
	path := fmt.Sprintf("/teams/%d/repos/%s/secret", team.ID, allowed)
	for _, method := range []string{"PUT", "GET"} {
		out, isErr := c.callTool("gitea_api_request", map[string]any{"method": method, "path": path})
		if reason, _ := get(out, "error.permission_report.reason").(string); !isErr || !strings.Contains(reason, other+"/secret") {
			t.Errorf("%s %s: isError %v, %v; want it refused naming %s/secret", method, path, isErr, get(out, "error"), other)
		}
	}
	var repos []struct {
		FullName string `json:"full_name"`
	}
	s.call("alice", "GET", fmt.Sprintf("/teams/%d/repos", team.ID), nil, http.StatusOK, &repos)
	if s.err != nil || len(repos) != 0 {
		t.Errorf("team %d of %s: repositories %v (%v); want none", team.ID, other, repos, s.err)
	}
}
