package main

import "testing"

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
