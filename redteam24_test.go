package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// TestTrimmedBranchRefused: a contents write naming a branch with a blank
// at either end (Unicode ones too, which Gitea's GitRefName lets through) is
// refused on every door, whatever the profile: Gitea pushes to the name
// strings.TrimSpace leaves, so "main\u00a0" lands on main
// (TestE2ERedteam24TrimmedBranch on Gitea). A blank inside a name is sent.
func TestTrimmedBranchRefused(t *testing.T) {
	t.Parallel()
	script := func(f *scriptedGitea) {
		f.user("bob").json(repoPath, map[string]any{"default_branch": "main"}).
			on("POST", repoPath+"/contents/a.md", 201, `{}`).on("POST", repoPath+"/contents", 201, `{}`)
	}
	write := func(body map[string]any) map[string]any {
		body["content"], body["message"] = "aGk=", "add a.md"
		return map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md", "body": body}}
	}
	trimmed := func(field, name, to string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit",
			Reason: fmt.Sprintf("%s %q begins or ends with a blank, which Gitea trims when it pushes the commit (services/repository/files/temp_repo.go Push): it would write to %q, not to the branch named; name the branch without it", field, name, to)}
	}
	raw := map[string]any{"method": "POST", "path": repoPath + "/contents", "body": map[string]any{"branch": "topic", "new_branch": "\u3000topic",
		"files": []any{map[string]any{"operation": "create", "path": "a.md", "content": "aGk="}}}}
	runLiveCases(t, []liveCase{
		{"new_branch main and a no-break space", "gitea-author", script, "gitea_call_operation", write(map[string]any{"new_branch": "main\u00a0"}), trimmed("new_branch", "main\u00a0", "main")},
		{"branch main and an em space", "gitea-author", script, "gitea_call_operation", write(map[string]any{"branch": "main\u2003"}), trimmed("branch", "main\u2003", "main")},
		{"an ideographic space, raw, by the owner", "gitea-owner", script, "gitea_api_request", raw, trimmed("new_branch", "\u3000topic", "topic")},
		{"a blank inside", "gitea-author", script, "gitea_call_operation", write(map[string]any{"new_branch": "my\u00a0topic"}),
			liveGot{Sent: []string{"GET " + repoPath, "POST " + repoPath + "/contents/a.md"}}},
	})
}

// TestForkPushJudged: under repositories, a push to a fork's branch (a
// contents write, repoUpdateBranch) is refused while the branch heads an
// open pull request of a parent outside them, which Gitea updates
// (TestE2ERedteam24ForkPushUpdatesParentPull on Gitea); the default branch
// where the write names none; another branch, or a parent within them, is
// sent, and an unreadable parent's list is a refusal.
func TestForkPushJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "fork-author", "repositories": ["bob/demo", "carol/*"], "allow_default_branch_writes": true,
		"allowed_operations": ["gitea.read", "gitea.repo.commit", "gitea.branch.create", "gitea.branch.push"]}]}`), 0o600)
	const fork, pulls = "/repos/bob/demo", "/repos/alice/demo/pulls"
	forkOf := func(parent string, heads ...string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			var list []any
			for i, ref := range heads {
				list = append(list, map[string]any{"number": i + 7, "head": map[string]any{"ref": ref, "repo": map[string]any{"full_name": "bob/demo"}}})
			}
			b, _ := json.Marshal(list)
			f.user("bob").json(fork, map[string]any{"default_branch": "main", "parent": map[string]any{"full_name": parent}}).
				answer("GET", pulls, fakeWith(200, string(b), "X-Total-Count", fmt.Sprint(len(list)))).
				on("POST", fork+"/contents/a.md", 201, `{}`).on("PUT", fork+"/branches/feat", 204).answer("GET", fork+"/commits", fakeWith(200, `[]`, "X-Total-Count", "0"))
		}
	}
	write := func(body map[string]any) map[string]any {
		body["content"], body["message"] = "aGk=", "add a.md"
		return map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "bob", "repo": "demo", "filepath": "a.md", "body": body}}
	}
	update := map[string]any{"operation": "repoUpdateBranch", "arguments": map[string]any{"owner": "bob", "repo": "demo", "branch": "feat", "body": map[string]any{"new_commit_id": "abc"}}}
	updates := func(branch string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit", Sent: []string{"GET " + fork, "GET " + pulls},
			Reason: `pushing to the branch "` + branch + `" of "bob/demo" updates the pull request alice/demo!7 it heads, outside the repositories of fork-author`}
	}
	sent := liveGot{Sent: []string{"GET " + fork, "GET " + pulls, "POST " + fork + "/contents/a.md"}}
	runLiveCases(t, []liveCase{
		{"a contents write to a branch heading the parent's pull request", "fork-author", forkOf("alice/demo", "feat"), "gitea_call_operation", write(map[string]any{"branch": "feat"}), updates("feat")},
		{"new_branch naming it", "fork-author", forkOf("alice/demo", "feat"), "gitea_call_operation", write(map[string]any{"branch": "main", "new_branch": "feat"}), updates("feat")},
		{"the default branch, named by none", "fork-author", forkOf("alice/demo", "main"), "gitea_call_operation", write(map[string]any{}), updates("main")},
		{"another branch", "fork-author", forkOf("alice/demo", "feat"), "gitea_call_operation", write(map[string]any{"branch": "other"}), sent},
		{"a parent within the repositories", "fork-author", forkOf("carol/demo", "feat"), "gitea_call_operation", write(map[string]any{"branch": "feat"}),
			liveGot{Sent: []string{"GET " + fork, "POST " + fork + "/contents/a.md"}}},
		{"the parent's pull requests unreadable", "fork-author", func(f *scriptedGitea) {
			forkOf("alice/demo")(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", write(map[string]any{"branch": "feat"}),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit", Sent: []string{"GET " + fork, "GET " + pulls},
				Reason: `cannot read from Gitea which pull requests of "alice/demo", the repository "bob/demo" forks, the branch "feat" heads, which pushing to it updates; refusing`}},
	}, "GITEA_MCP_CONFIG", config)
	t.Run("repoUpdateBranch", func(t *testing.T) {
		got := updates("feat")
		got.Perm, got.Sent = "gitea.branch.push", append([]string{"GET " + fork + "/commits"}, got.Sent...)
		runLiveCases(t, []liveCase{{"moving a branch heading the parent's pull request", "fork-author", forkOf("alice/demo", "feat"), "gitea_call_operation", update, got}}, "GITEA_MCP_CONFIG", config)
	})
}
