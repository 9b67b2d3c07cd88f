package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam7RedirectOutside: Gitea answers a repository's old name
// (renamed or transferred) with a redirect to its new one, whoever asks:
// under repositories, a redirect to a repository outside them does not name
// it. Found by the red team: a profile limited to alice/* read, from the
// redirect of a repository alice had transferred, the private repository's
// new owner and name.
func TestE2ERedteam7RedirectOutside(t *testing.T) {
	g := needGitea(t)
	old, _ := scratchRepo(t, g, "moved", true)
	_, name, _ := strings.Cut(old, "/")
	secret := "bob/" + strings.Replace(name, "moved", "hidden", 1)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+old+"/transfer", map[string]string{"new_owner": "bob"}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+secret, nil) })
	s.call("bob", "PATCH", "/repos/bob/"+name, map[string]string{"name": strings.TrimPrefix(secret, "bob/")}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"alice-reader","repositories":["alice/*"],"allowed_operations":["gitea.read"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=alice-reader", "GITEA_MCP_CONFIG="+config)
	for _, path := range []string{"/repos/" + old, "/repos/" + old + "/contents/README.md"} {
		out, isErr := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": path})
		if msg := str(get(out, "error.message")); !isErr || get(out, "error.kind") != "redirect" || strings.Contains(msg, secret) || strings.Contains(msg, "bob/") {
			t.Errorf("GET %s: isError %v, %v; want a redirect that does not name %s", path, isErr, get(out, "error"), secret)
		}
	}
	// Within the list, the new place is named.
	c2 := e2eClient(t, g, "alice")
	out, _ := c2.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + old})
	if msg := str(get(out, "error.message")); !strings.Contains(msg, "/repos/"+secret) {
		t.Errorf("unrestricted GET /repos/%s: %v; want the redirect to name /repos/%s", old, get(out, "error"), secret)
	}
}

// TestE2ERedteam7VisibilityForkUnnamed: under repositories, a visibility
// change refused for a fork outside them does not name that fork, which
// listForks, refused under repositories, would have to. Found by the red
// team: a profile limited to a private repository read another user's
// private fork's name from the refusal.
func TestE2ERedteam7VisibilityForkUnnamed(t *testing.T) {
	g := needGitea(t)
	base, _ := scratchRepo(t, g, "visible", true)
	owner, name, _ := strings.Cut(base, "/")
	fork := forkAs(t, g, "bob", base, strings.Replace(name, "visible", "hidden", 1))
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=base-admin", "GITEA_MCP_CONFIG="+allowlistConfig(t, "base-admin", base, "gitea.repo.admin"))
	out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "repoEdit", "arguments": map[string]any{"owner": owner, "repo": name, "body": map[string]any{"private": false}}})
	if reason := str(get(out, "error.permission_report.reason")); !isErr || !strings.Contains(reason, "fork") || strings.Contains(reason, fork) || strings.Contains(reason, "bob") {
		t.Errorf("making %s public: isError %v, %v; want it refused without naming %s", base, isErr, get(out, "error"), fork)
	}
	if out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "listForks", "arguments": map[string]any{"owner": owner, "repo": name}}); !isErr || strings.Contains(str(out), fork) {
		t.Errorf("listForks of %s: isError %v; want it refused, %s not named", base, isErr, fork)
	}
}

// TestE2ERedteam7ForkConflictUnnamed: Gitea refuses a second fork of a
// repository into one owner with a message naming the first: under
// repositories, that fork is not named when it lies outside them. Found by
// the red team: a profile limited to alice's repository and bob/<its name>
// read, from the conflict, the name of bob's private fork of it.
func TestE2ERedteam7ForkConflictUnnamed(t *testing.T) {
	g := needGitea(t)
	base, _ := scratchRepo(t, g, "forked", true)
	owner, name, _ := strings.Cut(base, "/")
	fork := forkAs(t, g, "bob", base, strings.Replace(name, "forked", "hidden", 1))
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"forker","repositories":["`+base+`","bob/`+name+`"],
		"allowed_operations":["gitea.read","gitea.repo.create"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=forker", "GITEA_MCP_CONFIG="+config)
	out, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "createFork", "arguments": map[string]any{"owner": owner, "repo": name, "body": map[string]any{"name": name}}})
	if msg := str(get(out, "error.message")); !isErr || get(out, "error.kind") != "conflict" || strings.Contains(msg, fork) || !strings.Contains(msg, "outside the repositories of forker") {
		t.Errorf("a second fork of %s: isError %v, %v; want Gitea's conflict without naming %s", base, isErr, get(out, "error"), fork)
	}
}
