package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPickedUpCommitsClose: without gitea.issue.close, a write that brings
// commits made elsewhere onto a branch (repoUpdateBranch, repoUpdatePullRequest,
// repoMergeUpstream, repoCreateBranch from a ref) is refused where one of them
// names an issue, read live: Gitea closes it after a keyword where the branch
// is the one its ref names (TestE2ERedteam26PickedUpCommitsClose on Gitea).
// One naming only pull requests (Gitea's merge commits), or issues missing
// from a repository whose own issues the caller sees or that has none, is sent, and so is any
// under a profile that may close issues; a reference Gitea does not answer
// for is refused.
func TestPickedUpCommitsClose(t *testing.T) {
	t.Parallel()
	commits := func(msgs ...string) string {
		var list []string
		for i, m := range msgs {
			list = append(list, fmt.Sprintf(`{"sha":"%040d","commit":{"message":%q}}`, i+1, m))
		}
		return "[" + strings.Join(list, ",") + "]"
	}
	compare := func(msgs ...string) string {
		return fmt.Sprintf(`{"total_commits":%d,"commits":%s}`, len(msgs), commits(msgs...))
	}
	const update, sync, create, branch = prPath + "/update", repoPath + "/merge-upstream", repoPath + "/branches", repoPath + "/branches/feature"
	script := func(f *scriptedGitea, msgs ...string) {
		f.user("bob").json(repoPath, map[string]any{"autodetect_manual_merge": false, "default_branch": "main", "parent": map[string]any{"full_name": "carol/demo", "default_branch": "main"}}).
			json(prPath, map[string]any{"number": 1, "state": "open", "user": map[string]any{"login": "bob"}, "head": map[string]any{"ref": "topic", "repo": map[string]any{"full_name": "alice/demo"}},
				"base": map[string]any{"ref": "main", "repo": map[string]any{"full_name": "alice/demo"}}}).
			json(repoPath+"/issues/4", map[string]any{"number": 4}).json(repoPath+"/issues/5", map[string]any{"number": 5, "pull_request": map[string]any{}}).
			json("/repos/carol/other/issues/2", map[string]any{"number": 2}).json("/repos/carol/tracked", map[string]any{"has_issues": true, "internal_tracker": map[string]any{}}).
			json("/repos/carol/untracked", map[string]any{"has_issues": false}).json("/repos/carol/external", map[string]any{"has_issues": true, "external_tracker": map[string]any{}}).json("/repos/carol/other/issues/5", map[string]any{"number": 5}).json("/repos/carol/demo/branches/feature", map[string]any{"name": "feature"}).
			json("/repos/carol/demo", map[string]any{"autodetect_manual_merge": false}). // the parent, read by marksMerged for a branch moved
			answer("GET", repoPath+"/commits", fakeWith(200, commits(msgs...), "X-Total-Count", fmt.Sprint(len(msgs)))).
			on("GET", repoPath+"/compare/topic...alice/demo:main", 200, compare(msgs...)).on("GET", repoPath+"/compare/feature...carol/demo:feature", 200, compare(msgs...)).
			on("PUT", branch, 204).on("POST", update, 200, `{}`).on("POST", sync, 200, `{}`).on("POST", create, 201, `{}`)
	}
	call := func(op string, args map[string]any) map[string]any {
		args["owner"], args["repo"] = "alice", "demo"
		return map[string]any{"operation": op, "arguments": args}
	}
	writes := map[string]struct {
		args  map[string]any
		write string
	}{
		"repoUpdateBranch":      {call("repoUpdateBranch", map[string]any{"branch": "feature", "body": map[string]any{"new_commit_id": "abc"}}), "PUT " + branch},
		"repoUpdatePullRequest": {call("repoUpdatePullRequest", map[string]any{"index": 1, "style": "merge"}), "POST " + update},
		"repoMergeUpstream":     {call("repoMergeUpstream", map[string]any{"body": map[string]any{"branch": "feature"}}), "POST " + sync},
		"repoCreateBranch":      {call("repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "fresh", "old_ref_name": "v1"}}), "POST " + create},
	}
	for _, tc := range []struct {
		name, profile, msg string
		ref                string // the reference refused, "" for sent
	}{
		{"an issue", "gitea-author", "fixes #4", "alice/demo#4"},
		{"an issue of another repository", "gitea-author", "Closes carol/other#2", "carol/other#2"},
		{"an issue by its address", "gitea-author", "Resolves http://gitea/carol/other/issues/2", "carol/other#2"},
		{"an issue across a hard line break, a pull request without", "gitea-author", "Closes carol/other\\\n#5", "carol/other#5"},
		{"a reference Gitea does not answer for", "gitea-author", "see !9", "alice/demo#9"},
		{"a pull request only", "gitea-author", "Merge pull request 'x' (#5) from x into main", ""},
		{"no such issue where the repository's own are shown", "gitea-author", "fixes carol/tracked#8", ""},
		{"no such issues where the repository has none", "gitea-author", "fixes carol/untracked#8, carol/untracked#9", ""},
		{"no such issue where an external tracker stands for them", "gitea-author", "fixes carol/external#8", "carol/external#8"},
		{"no reference", "gitea-author", "tidy up", ""},
		{"an issue, under a profile that closes issues", "gitea-owner", "fixes #4", ""},
	} {
		for op, w := range writes {
			t.Run(tc.name+"/"+op, func(t *testing.T) {
				t.Parallel()
				f := newScriptedGitea(t)
				script(f, "Merge branch 'main' into topic", tc.msg)
				f.otherwise(fakeAnswer{status: http.StatusNotFound, body: `{"message":"not found"}`})
				out, _ := fakeCall(t, t.Context(), f.server(t, "GITEA_MCP_PROFILE", tc.profile, "GITEA_MCP_CONFIG", ""), "gitea_call_operation", w.args)
				sent := strings.Contains(strings.Join(f.writes(), "\n"), w.write)
				perm, reason := str0(get(out, "error.permission_report.required_permission")), str0(get(out, "error.permission_report.reason"))
				if tc.ref == "" && !sent || tc.ref != "" && (sent || perm != "gitea.issue.close" || !strings.Contains(reason, " name "+tc.ref+", an issue")) {
					t.Errorf("commit %q under %s: sent %v, refused for %q (%s); want refused for %q: %v", tc.msg, tc.profile, sent, perm, reason, tc.ref, out)
				}
				if n := f.count("GET", "/repos/carol/untracked"); n > 1 {
					t.Errorf("commit %q: the repository read %d times, want once", tc.msg, n)
				}
			})
		}
	}
	// A contents write forced onto an existing branch gains what the branch
	// written from has.
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "forcer", "allowed_operations": ["gitea.read", "gitea.repo.commit", "gitea.branch.create", "gitea.branch.delete"]}]}`), 0o600)
	for msg, refused := range map[string]bool{"fixes #4": true, "tidy up": false} {
		f := newScriptedGitea(t)
		script(f, msg)
		f.json(branch, map[string]any{"name": "feature"}).on("POST", repoPath+"/contents/a.md", 201, `{}`)
		out, _ := fakeCall(t, t.Context(), f.server(t, "GITEA_MCP_PROFILE", "forcer", "GITEA_MCP_CONFIG", config), "gitea_call_operation", call("repoCreateFile",
			map[string]any{"filepath": "a.md", "body": map[string]any{"content": "aGk=", "message": "add", "branch": "main", "new_branch": "feature", "force_push": true}}))
		if sent := f.count("POST", repoPath+"/contents/a.md") == 1; sent == refused || refused && str0(get(out, "error.permission_report.required_permission")) != "gitea.issue.close" {
			t.Errorf("a forced contents write gaining %q: %v", msg, out)
		}
	}
}

// TestUpdateHeadsParentPull: under repositories, repoUpdatePullRequest pushes
// to the head branch, so it is judged as a push to it is: refused while the
// branch heads an open pull request of its repository's parent outside them
// (TestE2ERedteam26UpdateHeadsParentPull on Gitea), for a head in the path's
// repository and in another one, whose own parent is read; a head that heads
// none there is sent, an unreadable head repository refused.
func TestUpdateHeadsParentPull(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "fork-author", "repositories": ["bob/demo", "carol/*"],
		"allowed_operations": ["gitea.read", "gitea.repo.commit", "gitea.branch.create", "gitea.branch.push", "gitea.issue.close"]}]}`), 0o600)
	const fork, pulls, update = "/repos/bob/demo", "/repos/alice/demo/pulls", "/repos/bob/demo/pulls/1/update"
	script := func(headRepo, headed string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			parent := map[string]any{"full_name": "alice/demo", "default_branch": "main"}
			b, _ := json.Marshal([]any{map[string]any{"number": 7, "head": map[string]any{"ref": headed, "repo": map[string]any{"full_name": headRepo}}}})
			f.user("bob").json(fork, map[string]any{"autodetect_manual_merge": false, "default_branch": "main", "parent": parent}).json("/repos/carol/x", map[string]any{"autodetect_manual_merge": false, "default_branch": "main", "parent": map[string]any{"full_name": "alice/other"}}).
				json(fork+"/pulls/1", map[string]any{"number": 1, "state": "open", "user": map[string]any{"login": "bob"},
					"head": map[string]any{"ref": "feat", "repo": map[string]any{"full_name": headRepo, "default_branch": "main"}}, "base": map[string]any{"ref": "main"}}).
				on("GET", "/repos/"+headRepo+"/compare/feat...bob/demo:main", 200, `{"total_commits":0,"commits":[]}`).
				answer("GET", pulls, fakeWith(200, string(b), "X-Total-Count", "1")).answer("GET", "/repos/alice/other/pulls", fakeWith(200, string(b), "X-Total-Count", "1")).
				on("POST", update, 200, `{}`)
		}
	}
	call := map[string]any{"operation": "repoUpdatePullRequest", "arguments": map[string]any{"owner": "bob", "repo": "demo", "index": 1, "style": "merge"}}
	for _, tc := range []struct {
		name, headRepo, headed string
		reason                 string // "" for sent
	}{
		{"a head here heading the parent's pull request", "bob/demo", "feat", `pushing to the branch "feat" of "bob/demo" updates the pull request alice/demo!7 it heads, outside the repositories of fork-author`},
		{"a head in another fork heading its parent's", "carol/x", "feat", `pushing to the branch "feat" of "carol/x" updates the pull request alice/other!7 it heads, outside the repositories of fork-author`},
		{"a head heading none there", "bob/demo", "other", ""},
		{"a head repository unreadable", "carol/y", "feat", `cannot read from Gitea whether "carol/y" forks another repository, where the branch may head pull requests pushing to it updates; refusing`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newScriptedGitea(t)
			script(tc.headRepo, tc.headed)(f)
			f.otherwise(fakeAnswer{status: http.StatusNotFound, body: `{"message":"not found"}`})
			out, _ := fakeCall(t, t.Context(), f.server(t, "GITEA_MCP_PROFILE", "fork-author", "GITEA_MCP_CONFIG", config), "gitea_call_operation", call)
			sent := slicesContainsPath(f.requests(), update)
			if reason := str0(get(out, "error.permission_report.reason")); sent != (tc.reason == "") || reason != tc.reason {
				t.Errorf("sent %v, refused for %q; want %q: %v", sent, reason, tc.reason, out)
			}
		})
	}
}
