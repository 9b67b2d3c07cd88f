package main

import (
	"strings"
	"testing"
)

// TestFetchedRef: under repositories, a ref naming FETCH_HEAD in the path,
// the query or a body's ref field is refused (TestE2ERedteam14FetchHead on
// Gitea); other refs, the same word in a text, and no repositories are not.
func TestFetchedRef(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	params := func(kv ...string) map[string]string {
		m := map[string]string{"owner": "acme", "repo": "app"}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		id      string
		args    map[string]any
		params  map[string]string
		refused bool
	}{
		{"repoGetSingleCommit", nil, params("sha", "FETCH_HEAD"), true},
		{"repoGetSingleCommit", nil, params("sha", "main-worktree/fetch_head^0"), true},
		{"repoGetSingleCommit", nil, params("sha", "main"), false},
		{"repoGetAllCommits", map[string]any{"sha": "FETCH_HEAD~1"}, params(), true},
		{"repoGetAllCommits", map[string]any{"sha": "my_topic..FETCH_HEAD"}, params(), true},      // an underscore before it
		{"repoGetAllCommits", map[string]any{"sha": "main", "not": "FETCH_HEAD"}, params(), true}, // which of main's commits it holds
		{"repoGetContents", map[string]any{"ref": "FETCH_HEAD"}, params("filepath", "a"), true},
		{"repoCreateTag", map[string]any{"body": map[string]any{"tag_name": "t", "target": "FETCH_HEAD"}}, params(), true},
		{"repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "b", "old_ref_name": "FETCH_HEAD"}}, params(), true},
		{"repoCreateRelease", map[string]any{"body": map[string]any{"tag_name": "t", "target_commitish": "FETCH_HEAD"}}, params(), true},
		{"issueCreateIssue", map[string]any{"body": map[string]any{"title": "FETCH_HEAD is stale"}}, params(), false},
	}
	for _, tt := range tests {
		for _, repos := range [][]string{{"acme/*"}, nil} {
			d := decide(allBut(t, "", repos...), "bot", "t", ops[tt.id], tt.args, tt.params)
			if refused := !d.Allowed && strings.Contains(d.Reason, "FETCH_HEAD is the commit"); refused != (tt.refused && repos != nil) {
				t.Errorf("%s %v %v under %v: allowed %v, %q", tt.id, tt.args, tt.params, repos, d.Allowed, d.Reason)
			}
		}
	}
}
