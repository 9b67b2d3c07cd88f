package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestPushMarksMerged: where a repository detects manual merges
// (autodetect_manual_merge), Gitea marks merged, by the pusher, and closes
// each open pull request based on a pushed branch whose head
// (refs/pull/N/head) the branch then holds (services/pull/check.go
// manuallyMerged): a write moving a branch onto commits made elsewhere
// needs gitea.pr.merge and gitea.pr.close while it would then hold such a
// head, or Gitea does not say (TestE2ERedteam29PushMarksMerged), and so does
// moving a branch to a commit the base of a pull request it heads holds
// (TestE2ERedteam29HeadMovedIntoBase). A commit that holds none, a base that
// does not hold it, a repository that does not detect them, and a profile
// that may merge and close move it.
func TestPushMarksMerged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [
		{"profile_name": "pusher", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.issue.close"], "allow_default_branch_writes": true},
		{"profile_name": "closer", "allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.issue.close", "gitea.pr.merge", "gitea.pr.close"]}]}`), 0o600)
	const pulls, commits = repoPath + "/pulls", repoPath + "/commits"
	script := func(detects bool, base string, outside ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			list, _ := json.Marshal([]any{map[string]any{"number": 7, "base": map[string]any{"ref": base},
				"head": map[string]any{"ref": "dev", "repo": map[string]any{"full_name": "alice/demo"}}}})
			held, _ := json.Marshal(outside)
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "autodetect_manual_merge": detects}).
				on("PUT", repoPath+"/branches/dev", 204).on("POST", repoPath+"/merge-upstream", 200, `{}`).
				answer("GET", pulls, fakeWith(200, string(list), "X-Total-Count", "1")).
				answer("GET", commits, fakeWith(200, string(held), "X-Total-Count", strconv.Itoa(len(outside))))
		}
	}
	move := map[string]any{"operation": "repoUpdateBranch", "arguments": map[string]any{"owner": "alice", "repo": "demo", "branch": "dev", "body": map[string]any{"new_commit_id": "abc"}}}
	sync := map[string]any{"operation": "repoMergeUpstream", "arguments": map[string]any{"owner": "alice", "repo": "demo", "body": map[string]any{"branch": "dev"}}}
	const getRepo, getPulls, getCommits, moved = "GET " + repoPath, "GET " + pulls, "GET " + commits, "PUT " + repoPath + "/branches/dev"
	commit := map[string]any{"sha": "def"}
	runLiveCases(t, []liveCase{
		{"holding a pull request's head", "pusher", script(true, "dev"), "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getPulls, getCommits},
				Reason: `"alice/demo" detects manual merges (autodetect_manual_merge), and after this write to "dev" the base "dev" of the pull request alice/demo!7 would hold its head (or Gitea did not say): ` +
					`Gitea marks it merged by you and closes it, as do: manually-merged does; gitea.pr.merge is not in the allowed operations of pusher; use a profile that allows it, such as gitea-merger`}},
		{"holding none", "pusher", script(true, "dev", commit), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getPulls, getCommits, moved}}},
		{"headed, into a base that holds the new head", "pusher", script(true, "main"), "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getPulls, getCommits},
				Reason: `"alice/demo" detects manual merges (autodetect_manual_merge), and after this write to "dev" the base "main" of the pull request alice/demo!7 would hold its head (or Gitea did not say): ` +
					`Gitea marks it merged by you and closes it, as do: manually-merged does; gitea.pr.merge is not in the allowed operations of pusher; use a profile that allows it, such as gitea-merger`}},
		{"headed, into a base that does not hold it", "pusher", script(true, "main", commit), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, getPulls, getCommits, moved}}},
		{"headed, its head's history only synced", "pusher", script(true, "main"), "gitea_call_operation", sync,
			liveGot{Sent: []string{getRepo, getPulls, "POST " + repoPath + "/merge-upstream"}}},
		{"not detecting", "pusher", script(false, "dev"), "gitea_call_operation", move,
			liveGot{Sent: []string{getRepo, moved}}},
		{"the pull requests unreadable", "pusher", func(f *scriptedGitea) {
			script(true, "dev")(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", move,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getPulls},
				Reason: `cannot read from Gitea which open pull requests of "alice/demo" the branch "dev" bases or heads, which Gitea marks merged once their base holds their head; refusing`}},
		{"a parent's branch, unknown", "pusher", script(true, "dev", commit), "gitea_call_operation", sync,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.merge", Sent: []string{getRepo, getPulls},
				Reason: `"alice/demo" detects manual merges (autodetect_manual_merge), and after this write to "dev" the base "dev" of the pull request alice/demo!7 would hold its head (or Gitea did not say): ` +
					`Gitea marks it merged by you and closes it, as do: manually-merged does; gitea.pr.merge is not in the allowed operations of pusher; use a profile that allows it, such as gitea-merger`}},
		{"merging and closing", "closer", script(true, "dev"), "gitea_call_operation", move,
			liveGot{Sent: []string{moved}}},
	}, "GITEA_MCP_CONFIG", config)
}
