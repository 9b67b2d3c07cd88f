package main

import (
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam28ActivateNoProfile: found by the red team. Before the fix
// bob, under a file's profile limited to one repository, called
// gitea_activate_profile with profile "" (what selectProfile reads as the
// start without GITEA_MCP_PROFILE: no profile, GITEA_TOKEN): it answered
// verified, and with no profile every read was allowed, so bob read a
// private repository outside the profile's repositories (its description,
// and its contents).
func TestE2ERedteam28ActivateNoProfile(t *testing.T) {
	g := needGitea(t)
	inside, _ := scratchRepo(t, g, "rt28in", false)
	outside, _ := scratchRepo(t, g, "rt28out", true)
	const marker = "rt28 outside the list"
	s := &giteaSetup{g: g}
	if s.call("alice", "PATCH", "/repos/"+outside, map[string]any{"description": marker}, http.StatusOK, nil); s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true, "profiles": [
		{"profile_name": "bob-narrow", "allowed_operations": ["gitea.read", "gitea.issue.comment"], "repositories": ["`+inside+`"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=bob-narrow", "GITEA_MCP_CONFIG="+config)
	owner, name, _ := strings.Cut(outside, "/")
	read := func() string {
		res, _ := c.callTool("repoGet", map[string]any{"owner": owner, "repo": name})
		return str(get(res, "data.description"))
	}
	if d := read(); d == marker {
		t.Fatalf("bob-narrow read %s before any switch", outside)
	}
	res, isErr := c.callTool("gitea_activate_profile", map[string]any{"profile": ""})
	if !isErr || str0(get(res, "error.kind")) != "invalid_profile" {
		t.Errorf("gitea_activate_profile \"\" was not refused: %v", res)
	}
	if d := read(); d == marker {
		t.Errorf("after gitea_activate_profile \"\", bob read %s (%q), outside the repositories of bob-narrow", outside, d)
	}
}
