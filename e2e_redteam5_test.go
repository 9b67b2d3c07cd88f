package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
