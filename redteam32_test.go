package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// TestParentMarksMerged: Gitea checks the open pull requests a moved branch
// heads in a fork's parent too, and where the parent detects manual merges
// marks merged, closing it, each whose base holds the new head
// (services/pull/pull.go AddTestPullRequestTask, services/pull/check.go
// manuallyMerged): moving a fork's branch to a commit (repoUpdateBranch)
// needs gitea.pr.merge and gitea.pr.close while the parent's base of a pull
// request it heads holds that commit, or Gitea does not say
// (TestE2ERedteam32ForkHeadMovedIntoParentBase). A commit the parent lacks
// or its base does not hold, a pull request another fork heads, a parent
// that does not detect them, and a profile that may merge and close move it.
func TestParentMarksMerged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [
		{"profile_name": "pusher", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.issue.close"], "allow_default_branch_writes": true},
		{"profile_name": "closer", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.issue.close", "gitea.pr.merge", "gitea.pr.close"]}]}`), 0o600)
	const parent = "/repos/carol/demo"
	const getRepo, getParent, getPulls, getTip, getHeld, getCommits, moved = "GET " + repoPath, "GET " + parent, "GET " + parent + "/pulls",
		"GET " + repoPath + "/git/commits/abc", "GET " + parent + "/git/commits/abc0123", "GET " + parent + "/commits", "PUT " + repoPath + "/branches/dev"
	script := func(detects bool, headRepo string, parentHas int, outside ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			head := map[string]any{"ref": "dev", "repo": map[string]any{"full_name": headRepo}}
			if headRepo == "" {
				head["repo"] = nil // a deleted head repository
			}
			list, _ := json.Marshal([]any{map[string]any{"number": 3, "base": map[string]any{"ref": "main"}, "head": head}})
			held, _ := json.Marshal(outside)
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "autodetect_manual_merge": false, "parent": map[string]any{"full_name": "carol/demo", "default_branch": "main"}}).
				json(parent, map[string]any{"default_branch": "main", "autodetect_manual_merge": detects}).
				on("PUT", repoPath+"/branches/dev", 204).json(repoPath+"/git/commits/abc", map[string]any{"sha": "abc0123"}).
				on("GET", parent+"/git/commits/abc0123", parentHas, `{"sha":"abc0123"}`).
				answer("GET", parent+"/pulls", fakeWith(200, string(list), "X-Total-Count", "1")).
				answer("GET", parent+"/commits", fakeWith(200, string(held), "X-Total-Count", "1"))
		}
	}
	move := map[string]any{"operation": "repoUpdateBranch", "arguments": map[string]any{"owner": "alice", "repo": "demo", "branch": "dev", "body": map[string]any{"new_commit_id": "abc"}}}
	commit := map[string]any{"sha": "def"}
	refused := `"carol/demo" detects manual merges (autodetect_manual_merge), and after this write to "dev" of "alice/demo", which heads the pull request carol/demo!3, its base "main" would hold its head (or Gitea did not say): ` +
		`Gitea marks it merged and closes it, as do: manually-merged does; gitea.pr.merge is not in the allowed operations of pusher; use a profile that allows it, such as gitea-merger`
	runLiveCases(t, []liveCase{
		{"into the parent's base", "pusher", script(true, "alice/demo", 200), "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getParent, getPulls, getTip, getHeld, getCommits}, Reason: refused}},
		{"a head repository Gitea does not name", "pusher", script(true, "", 200), "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getParent, getPulls, getTip, getHeld, getCommits}, Reason: refused}},
		{"the parent's commit unreadable", "pusher", script(true, "alice/demo", 500), "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getParent, getPulls, getTip, getHeld}, Reason: refused}},
		{"not held by the parent's base", "pusher", script(true, "alice/demo", 200, commit), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getParent, getPulls, getTip, getHeld, getCommits, moved}}},
		{"a commit the parent lacks", "pusher", script(true, "alice/demo", 404), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getParent, getPulls, getTip, getHeld, moved}}},
		{"headed by another fork", "pusher", script(true, "dave/demo", 200), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getParent, getPulls, moved}}},
		{"a parent not detecting", "pusher", script(false, "alice/demo", 200), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getParent, moved}}},
		{"the parent's pull requests unreadable", "pusher", func(f *scriptedGitea) {
			script(true, "alice/demo", 200)(f)
			f.on("GET", parent+"/pulls", 500, `{"message":"boom"}`)
		}, "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getParent, getPulls},
				Reason: `cannot read from Gitea which open pull requests of "carol/demo", the repository "alice/demo" forks, the branch "dev" heads, which Gitea marks merged once their base holds their head; refusing`}},
		{"merging and closing", "closer", script(true, "alice/demo", 200), "gitea_call_operation", move,
			liveGot{Sent: []string{moved}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestRebaseUpdateMarksMerged: updating a pull request by rebase drops the
// head's commits whose change the base already holds, and where it holds
// every one the head becomes the base's tip, which Gitea, where the
// repository detects manual merges, marks merged (services/pull/check.go
// manuallyMerged): Gitea does not say beforehand, so style=rebase there needs
// gitea.pr.merge and gitea.pr.close (TestE2ERedteam32RebaseUpdateMarksMerged),
// on both doors; style=merge, a repository that does not detect them and a
// profile that may merge and close update it.
func TestRebaseUpdateMarksMerged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [
		{"profile_name": "rebaser", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.branch.delete", "gitea.issue.close"]},
		{"profile_name": "closer", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.branch.delete", "gitea.issue.close", "gitea.pr.merge", "gitea.pr.close"]}]}`), 0o600)
	const pulls, update = repoPath + "/pulls", repoPath + "/pulls/1/update"
	script := func(detects bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			list, _ := json.Marshal([]any{map[string]any{"number": 1, "base": map[string]any{"ref": "main"},
				"head": map[string]any{"ref": "topic", "repo": map[string]any{"full_name": "alice/demo"}}}})
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "full_name": "alice/demo", "autodetect_manual_merge": detects}).
				json(pulls+"/1", map[string]any{"number": 1, "state": "open", "user": map[string]any{"login": "carol"},
					"head": map[string]any{"ref": "topic", "sha": "aaa", "repo": map[string]any{"full_name": "alice/demo"}},
					"base": map[string]any{"ref": "main", "sha": "bbb", "repo": map[string]any{"full_name": "alice/demo"}}}).
				answer("GET", pulls, fakeWith(200, string(list), "X-Total-Count", "1")).
				answer("GET", repoPath+"/commits", fakeWith(200, `[]`, "X-Total-Count", "0")).
				on("POST", update, 200, `{}`)
		}
	}
	call := func(style string) map[string]any {
		return map[string]any{"operation": "repoUpdatePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "style": style}}
	}
	raw := map[string]any{"method": "POST", "path": update, "query": map[string]any{"style": "rebase"}}
	const getPR, getRepo, getPulls, getCommits, updated = "GET " + repoPath + "/pulls/1", "GET " + repoPath, "GET " + pulls, "GET " + repoPath + "/commits", "POST " + update
	refused := `"alice/demo" detects manual merges (autodetect_manual_merge), and after this write to "topic" the base "main" of the pull request alice/demo!1 would hold its head (or Gitea did not say): ` +
		`Gitea marks it merged by you and closes it, as do: manually-merged does; gitea.pr.merge is not in the allowed operations of rebaser; use a profile that allows it, such as gitea-merger`
	runLiveCases(t, []liveCase{
		{"by rebase", "rebaser", script(true), "gitea_call_operation", call("rebase"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getPR, getRepo, getPulls, getCommits}, Reason: refused}},
		{"by rebase, the raw door", "rebaser", script(true), "gitea_api_request", raw,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getPR, getRepo, getPulls, getCommits}, Reason: refused}},
		{"by merge", "rebaser", script(true), "gitea_call_operation", call("merge"),
			liveGot{Sent: []string{getPR, getRepo, getPulls, updated}}},
		{"not detecting", "rebaser", script(false), "gitea_call_operation", call("rebase"),
			liveGot{Sent: []string{getPR, getRepo, updated}}},
		{"merging and closing", "closer", script(true), "gitea_call_operation", call("rebase"),
			liveGot{Sent: []string{getPR, updated}}},
	}, "GITEA_MCP_CONFIG", config)
}
