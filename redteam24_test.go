package main

import (
	"fmt"
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
