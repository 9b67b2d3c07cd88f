package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestPropJudge checks the property test's judge on made-up states: each row
// changes one key, and names the profile and whether the change is allowed.
func TestPropJudge(t *testing.T) {
	js := func(v any) string { b, _ := json.Marshal(v); return string(b) }
	issue := func(state string, pull bool, extra ...string) string {
		v := map[string]any{"title": "t", "state": state, "pull": pull, "labels": nil, "user.login": "bob"}
		for i := 0; i+1 < len(extra); i += 2 {
			v[extra[i]] = extra[i+1]
		}
		return js(v)
	}
	pull := js(map[string]any{"merged": "false", "head.sha": "abc", "base.ref": "main", "user.login": "bob"})
	carolPull := js(map[string]any{"merged": "false", "head.sha": "abc", "base.ref": "main", "user.login": "carol"})
	review := func(user, state string) string {
		return js(map[string]any{"user.login": user, "state": state, "dismissed": "false"})
	}
	reader := &profile{Name: "reader", AllowedOperations: []string{"gitea.read"}, Repositories: []string{"alice/a"}}
	if err := reader.compile(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, profile, key, before, after string
		bad                               string // "" when allowed
	}{
		{"a reviewer approves bob's pull request", "gitea-reviewer", "review alice/a#1/9", "", review("carol", "APPROVED"), ""},
		{"a reviewer approves their own", "gitea-reviewer", "review alice/a#2/9", "", review("carol", "APPROVED"), "carol approved their own pull request"},
		{"a reviewer comments", "gitea-reviewer", "comment alice/a 5", "", `{"body":"x"}`, ""},
		{"a reviewer closes an issue", "gitea-reviewer", "issue alice/a#3", issue("open", false), issue("closed", false), "needs gitea.issue.close"},
		{"a reviewer merges", "gitea-reviewer", "pull alice/a#1", pull, strings.Replace(pull, `"merged":"false"`, `"merged":"true"`, 1), "needs gitea.pr.merge"},
		{"a reviewer dismisses a review", "gitea-reviewer", "review alice/a#1/9", review("alice", "COMMENT"), strings.Replace(review("alice", "COMMENT"), `"dismissed":"false"`, `"dismissed":"true"`, 1), "needs gitea.repo.admin"},
		{"an issue manager closes an issue", "gitea-issue-manager", "issue alice/a#3", issue("open", false), issue("closed", false), ""},
		{"an issue manager closes a pull request", "gitea-issue-manager", "issue alice/a#1", issue("open", true), issue("closed", true), "needs gitea.pr.close or gitea.pr.merge"},
		{"an issue manager sets a pull request's deadline", "gitea-issue-manager", "issue alice/a#1", issue("open", true), issue("open", true, "due_date", "2030"), "needs gitea.pr.create"},
		{"an issue manager labels a pull request", "gitea-issue-manager", "issue alice/a#1", issue("open", true), issue("open", true, "labels", "bug"), ""},
		{"an issue manager opens an issue", "gitea-issue-manager", "issue alice/a#7", "", issue("open", false), ""},
		{"an issue manager opens a pull request", "gitea-issue-manager", "issue alice/a#7", "", issue("open", true), "needs gitea.pr.create"},
		{"an issue manager adds a label to the repository", "gitea-issue-manager", "label alice/a 4", "", `{"name":"x"}`, "needs gitea.issue.manage"},
		{"an author pushes a branch", "gitea-author", "branch alice/a feature", `{"commit":"a"}`, `{"commit":"b"}`, ""},
		{"an author writes to the default branch", "gitea-author", "branch alice/a main", `{"commit":"a"}`, `{"commit":"b"}`, "needs gitea.pr.merge"},
		{"an author deletes a branch", "gitea-author", "branch alice/a feature", `{"commit":"a"}`, "", "needs gitea.branch.delete"},
		{"an author edits the settings", "gitea-author", "repo alice/a", `{"private":true}`, `{"private":false}`, "needs gitea.repo.admin"},
		{"an author forks", "gitea-author", "user carol /user/repos", `["alice/a"]`, `["alice/a","carol/a"]`, "needs gitea.repo.create or gitea.repo.admin"},
		{"a reader changes nothing", "reader", "user carol /user/starred", `[]`, `[]`, ""},
		{"a reader's change outside its repositories", "reader", "comment alice/b 5", "", `{"body":"x"}`, "outside the profile's repositories"},
		{"a reader comments", "reader", "comment alice/a 5", "", `{"body":"x"}`, "needs gitea.issue.comment"},
	}
	for _, tt := range tests {
		p := reader
		if tt.profile != "reader" {
			p = builtin(t, tt.profile)
		}
		before, after := propState{"pull alice/a#1": pull, "pull alice/a#2": carolPull}, propState{"pull alice/a#1": pull, "pull alice/a#2": carolPull}
		if tt.before != "" {
			before[tt.key] = tt.before
		}
		if tt.after != "" {
			after[tt.key] = tt.after
		}
		bad := strings.Join(propJudge(p, before, after), "; ")
		if tt.bad == "" && bad != "" || tt.bad != "" && !strings.Contains(bad, tt.bad) {
			t.Errorf("%s: judged %q, want %q", tt.name, bad, tt.bad)
		}
	}
}
