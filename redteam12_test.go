package main

import "testing"

// TestEmptyRepoLanding: in a repository with no commit yet, a contents write
// to any branch lands on the default branch, since Gitea makes the branch of
// the first commit the default branch (TestE2ERedteam12EmptyRepoDefault on
// Gitea); once the repository has a commit, only the default branch is.
func TestEmptyRepoLanding(t *testing.T) {
	t.Parallel()
	write := map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
		"body": map[string]any{"content": "aGk=", "new_branch": "topic"}}}
	repo := func(empty bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "empty": empty}).on("POST", repoPath+"/contents/a.md", 201, `{}`)
		}
	}
	runLiveCases(t, []liveCase{
		{"a new branch of an empty repository", "gitea-author", repo(true), "gitea_call_operation", write,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permMerge, Reason: `repoCreateFile lands on "topic", the branch Gitea makes the default branch of the empty repository "alice/demo": that is landing code without review, which also needs gitea.pr.merge (` +
				reasonOf(t, "gitea-author", permMerge) + `) or allow_default_branch_writes in the profile; write to a new branch (new_branch) and open a pull request`, Sent: []string{"GET " + repoPath}}},
		{"a new branch of a repository with commits", "gitea-author", repo(false), "gitea_call_operation", write,
			liveGot{Sent: []string{"GET " + repoPath, "POST " + repoPath + "/contents/a.md"}}},
	})
}
