package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
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

// TestRenameBaseApproved: renaming a branch renames the base of the open
// pull requests based on it (models/git/branch.go RenameBranch), which keep
// their approvals: without gitea.repo.admin it is refused while an official
// approval stands on one (read live, every page), or when the pull requests
// or their reviews cannot be read (TestE2ERedteam28RenameCarriesApproval).
// A branch basing none, an approval dismissed, and a profile that
// administers the repository rename it.
func TestRenameBaseApproved(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "renamer", "allowed_operations": ["gitea.read", "gitea.branch.delete"]},
		{"profile_name": "admin", "allowed_operations": ["gitea.read", "gitea.branch.delete", "gitea.repo.admin"]}]}`), 0o600)
	const pulls = repoPath + "/pulls"
	approval := map[string]any{"user": map[string]any{"login": "carol"}, "state": "APPROVED", "official": true}
	script := func(based bool, reviews ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			var list []any
			if based {
				list = append(list, map[string]any{"number": 7, "head": map[string]any{"ref": "topic", "repo": map[string]any{"full_name": "alice/demo"}}, "base": map[string]any{"ref": "dev"}})
			}
			b, _ := json.Marshal(list)
			b2, _ := json.Marshal(reviews)
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main"}).on("PATCH", repoPath+"/branches/dev", 204).
				answer("GET", pulls, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(list)))).
				answer("GET", pulls+"/7/reviews", fakeWith(200, string(b2), "X-Total-Count", strconv.Itoa(len(reviews))))
		}
	}
	rename := map[string]any{"operation": "repoRenameBranch", "arguments": map[string]any{"owner": "alice", "repo": "demo", "branch": "dev", "body": map[string]any{"name": "release-2"}}}
	const getPulls, getReviews, renamed = "GET " + pulls, "GET " + pulls + "/7/reviews", "PATCH " + repoPath + "/branches/dev"
	runLiveCases(t, []liveCase{
		{"the base of an approved pull request", "renamer", script(true, approval), "gitea_call_operation", rename,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPulls, getReviews},
				Reason: `renaming the branch "dev" to "release-2" retargets the pull request alice/demo!7 based on it, and Gitea keeps "carol"'s approval, which branch protection then counts for a base it was not given for; ` +
					`gitea.repo.admin is not in the allowed operations of renamer; use a profile that allows it, such as gitea-owner; ask for a new review on the new base instead`}},
		{"approved and dismissed", "renamer", script(true, with(approval, "dismissed", true)), "gitea_call_operation", rename,
			liveGot{Sent: []string{getPulls, getReviews, renamed}}},
		{"basing none", "renamer", script(false), "gitea_call_operation", rename,
			liveGot{Sent: []string{getPulls, renamed}}},
		{"the pull requests unreadable", "renamer", func(f *scriptedGitea) {
			script(false)(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", rename,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPulls},
				Reason: `cannot read from Gitea which open pull requests of "alice/demo" are based on the branch "dev", which its renaming retargets with their approvals; refusing`}},
		{"administering the repository", "admin", script(true, approval), "gitea_call_operation", rename,
			liveGot{Sent: []string{renamed}}},
	}, "GITEA_MCP_CONFIG", config)
}
