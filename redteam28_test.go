package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestActivateNoProfile: gitea_activate_profile with an empty name (what
// selectProfile reads as "no profile", the start without GITEA_MCP_PROFILE)
// is refused: with no profile every read is allowed, on any repository, and
// with GITEA_TOKEN (TestE2ERedteam28ActivateNoProfile).
func TestActivateNoProfile(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true, "profiles": [
		{"profile_name": "narrow", "allowed_operations": ["gitea.read"], "repositories": ["alice/demo"]}]}`), 0o600)
	f := newScriptedGitea(t).user("bob").json("/repos/carol/secret", map[string]any{"full_name": "carol/secret"})
	s := f.server(t, "GITEA_MCP_PROFILE", "narrow", "GITEA_MCP_CONFIG", config)
	out, isErr := fakeCall(t, t.Context(), s, "gitea_activate_profile", map[string]any{"profile": ""})
	if kind := str0(get(out, "error.kind")); !isErr || kind != "invalid_profile" {
		t.Errorf("activate \"\": %v; want error kind invalid_profile", out)
	}
	if p, _ := s.exec.active(t.Context()); p == nil || p.Name != "narrow" {
		t.Errorf("active profile %v, want narrow", p)
	}
	fakeCall(t, t.Context(), s, "gitea_call_operation", map[string]any{"operation": "repoGet", "arguments": map[string]any{"owner": "carol", "repo": "secret"}})
	if n := f.count("GET", "/repos/carol/secret"); n != 0 {
		t.Errorf("carol/secret, outside narrow's repositories, was read %d times", n)
	}
}
