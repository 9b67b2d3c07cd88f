package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestRepoDeleteIssuesOutside: deleting a repository deletes its issues and
// pull requests as deleting each one does (services/issue/issue.go
// DeleteIssuesByRepoID, deleteIssue: their dependency links) and the
// cross-references their texts made elsewhere (services/repository/delete.go,
// Comment{RefRepoID}): under repositories it is refused while an issue's
// title or description, a comment, or a dependency link reaches outside them,
// or when Gitea does not list them all (TestE2ERedteam30RepoDeleteUnlinks).
func TestRepoDeleteIssuesOutside(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo"],
		"allowed_operations": ["gitea.read", "gitea.repo.admin"]}]}`), 0o600)
	const issues, comments = repoPath + "/issues", repoPath + "/issues/comments"
	const deps, blocks = repoPath + "/issues/4/dependencies", repoPath + "/issues/4/blocks"
	empty := fakeWith(200, "[]", "X-Total-Count", "0")
	listed := func(list string) fakeAnswer { // every item, as Gitea counts them
		var items []any
		json.Unmarshal([]byte(list), &items)
		return fakeWith(200, list, "X-Total-Count", strconv.Itoa(len(items)))
	}
	script := func(issueList, commentList, blockList string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"full_name": "alice/demo"}).on("DELETE", repoPath, 204).
				answer("GET", issues, listed(issueList)).
				answer("GET", comments, listed(commentList)).
				answer("GET", deps, empty).on("GET", blocks, 200, blockList)
		}
	}
	clean := `[{"number":4,"title":"one","body":"see #2 and alice/demo#3"}]`
	del := map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}
	const getRepo, getIssues, getComments, getDeps, getBlocks = "GET " + repoPath, "GET " + issues, "GET " + comments, "GET " + deps, "GET " + blocks
	denied := func(reason string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Reason: reason, Sent: sent}
	}
	runLiveCases(t, []liveCase{
		{"linked and referencing within", "demo-admin", script(clean, `[{"body":"alice/demo#4"}]`, `[{"number":3,"repository":{"full_name":"alice/demo"}}]`), "gitea_call_operation", del,
			liveGot{Sent: []string{getRepo, getIssues, getComments, getDeps, getBlocks, "DELETE " + repoPath}}},
		{"an issue blocking one outside", "demo-admin", script(clean, `[{"body":"fine"}]`, `[{"number":3,"repository":{"full_name":"bob/secret"}}]`), "gitea_call_operation", del,
			denied(`deleting alice/demo deletes the dependency link of its #4 with bob/secret#3, outside the repositories of demo-admin`, getRepo, getIssues, getComments, getDeps, getBlocks)},
		{"a comment referencing outside", "demo-admin", script(clean, `[{"body":"see bob/secret#1"}]`, `[]`), "gitea_call_operation", del,
			denied(`deleting alice/demo deletes the cross-references its issues and comments made, and one references "bob/secret", outside the repositories of demo-admin`, getRepo, getIssues, getComments)},
		{"a pull request's title referencing outside", "demo-admin", script(`[{"number":4,"title":"fixes bob/secret!2"}]`, `[]`, `[]`), "gitea_call_operation", del,
			denied(`deleting alice/demo deletes the cross-references its issues and comments made, and one references "bob/secret", outside the repositories of demo-admin`, getRepo, getIssues, getComments)},
		{"the issues unlisted", "demo-admin", func(f *scriptedGitea) {
			script(clean, `[]`, `[]`)(f)
			f.on("GET", issues, 404, `{"message":"not found"}`)
		}, "gitea_call_operation", del,
			denied(`cannot read from Gitea every issue and comment of alice/demo, whose dependency links and cross-references its deletion deletes; refusing`, getRepo, getIssues, getComments)},
		{"fewer comments than counted", "demo-admin", func(f *scriptedGitea) {
			script(clean, `[]`, `[]`)(f)
			f.answer("GET", comments, fakeWith(200, `[]`, "X-Total-Count", "3"))
		}, "gitea_call_operation", del,
			denied(`cannot read from Gitea every issue and comment of alice/demo, whose dependency links and cross-references its deletion deletes; refusing`, getRepo, getIssues, getComments)},
		{"the links unreadable", "demo-admin", func(f *scriptedGitea) {
			script(clean, `[]`, `[]`)(f)
			f.on("GET", blocks, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", del,
			denied(`cannot read from Gitea every issue #4 of alice/demo depends on or blocks, whose link the repository's deletion deletes; refusing`, getRepo, getIssues, getComments, getDeps, getBlocks)},
	}, "GITEA_MCP_CONFIG", config)
}
