package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// TestMergeRename: a renamed file changes its old name too (previous_filename,
// which Gitea lists apart): expected_changed_files must name both; a name
// listed twice (a type change) leaves files out of Gitea's list: refused.
func TestMergeRename(t *testing.T) {
	t.Parallel()
	args := func(files ...any) map[string]any {
		return map[string]any{"owner": "alice", "repo": "demo", "index": 1, "head_sha": headSHA, "confirm": "MERGE PR 1", "expected_changed_files": files}
	}
	renamed := func(f *scriptedGitea) {
		f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("POST", prPath+"/merge", 200).
			json(prPath+"/files", []any{map[string]any{"filename": "docs.md", "status": "renamed", "previous_filename": "README.md"}}, []any{})
	}
	typeChanged := func(f *scriptedGitea) {
		f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("POST", prPath+"/merge", 200).
			json(prPath+"/files", []any{map[string]any{"filename": "x", "status": "deleted"}, map[string]any{"filename": "x", "status": "added"}}, []any{})
	}
	const getPR, files, doMerge = "GET " + prPath, "GET " + prPath + "/files", "POST " + prPath + "/merge"
	runLiveCases(t, []liveCase{
		{"new name alone", "gitea-merger", renamed, "gitea_merge_pr", args("docs.md"),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: []string{getPR, getPR, files, files}}},
		{"both names", "gitea-merger", renamed, "gitea_merge_pr", args("README.md", "docs.md"),
			liveGot{Sent: []string{getPR, getPR, files, files, getPR, doMerge, getPR}}},
		{"a name listed twice", "gitea-merger", typeChanged, "gitea_merge_pr", args("x", "x"),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: []string{getPR, getPR, files, files}}},
	})
}

// TestRebaseMergeCommits: a rebase merge (do: rebase or rebase-merge)
// replays the pull request's commits without its merge commits and those
// whose change the base has: a merge or root commit among them, a base with
// commits the head lacks, or commits that cannot be read, is a refusal.
func TestRebaseMergeCommits(t *testing.T) {
	t.Parallel()
	args := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "head_sha": headSHA, "confirm": "MERGE PR 1", "merge_method": "rebase"}
	answer := func(parents ...int) fakeAnswer {
		var list []any
		for _, n := range parents {
			list = append(list, map[string]any{"sha": otherSHA, "parents": make([]map[string]string, n)})
		}
		body, _ := json.Marshal(list)
		return fakeAnswer{status: 200, body: string(body), header: http.Header{"X-Total-Count": {strconv.Itoa(len(list))}}}
	}
	commits := func(ahead int, parents ...int) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("POST", prPath+"/merge", 200).
				answer("GET", prPath+"/commits", answer(parents...)).answer("GET", repoPath+"/commits", answer(make([]int, ahead)...))
		}
	}
	const getPR, list, base, doMerge = "GET " + prPath, "GET " + prPath + "/commits", "GET " + repoPath + "/commits", "POST " + prPath + "/merge"
	refused := liveGot{IsError: true, Blocked: []string{"policy allows gitea.pr.merge"}, Sent: []string{getPR, getPR, list, base}}
	runLiveCases(t, []liveCase{
		{"linear from the base's tip", "gitea-merger", commits(0, 1, 1), "gitea_merge_pr", args, liveGot{Sent: []string{getPR, getPR, list, base, getPR, list, base, doMerge, getPR}}},
		{"a merge commit", "gitea-merger", commits(0, 1, 2), "gitea_merge_pr", args, refused},
		{"a root commit", "gitea-merger", commits(0, 0), "gitea_merge_pr", args, refused},
		{"the base moved past the head's start", "gitea-merger", commits(1, 1), "gitea_merge_pr", args, refused},
		{"unreadable", "gitea-merger", func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("GET", prPath+"/commits", 500, `{"message":"boom"}`).
				answer("GET", repoPath+"/commits", answer())
		}, "gitea_merge_pr", args, refused},
	})
}
