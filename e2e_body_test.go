package main

import (
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ECanonicalBody replays the case-folded bodies of issue 11 against the
// real Gitea, through the three doors and the workflow tools, under a profile
// that may edit pull requests and issues and review, but not close either or
// approve. Before bodies were canonical, each of these closed or approved:
// the policy read "state" and "event", Gitea folded "State", "STATE", "ſtate"
// and "Event" into them. Each is now refused, and Gitea is unchanged.
func TestE2ECanonicalBody(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	pr, _ := newPR(t, g, "bob", "e2e/canonical-body")
	reviewed, _ := newPR(t, g, "bob", "e2e/canonical-review") // open whatever becomes of pr
	issue := g.Issues[0]
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"editor","token_source_name":"GITEA_TOKEN","audit_label":"e",
		"allowed_operations":["gitea.read","gitea.pr.create","gitea.pr.review","gitea.pr.comment","gitea.issue.edit"],
		"forbidden_operations":["gitea.pr.close","gitea.pr.approve","gitea.issue.close"]}]}`), 0o600)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=editor", "GITEA_MCP_CONFIG="+config, policyTools)
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, pr)
	issuePath := fmt.Sprintf("/repos/%s/issues/%d", g.Repo, issue)
	target := func(n int, body map[string]any) map[string]any {
		return map[string]any{"owner": owner, "repo": repo, "index": n, "body": body}
	}
	for _, tc := range []struct {
		name, op, method, path string
		args                   map[string]any
		want                   string
	}{
		{"State closes a pull request", "repoEditPullRequest", "PATCH", prPath, target(pr, map[string]any{"State": "closed"}),
			`body.State: unknown property; did you mean "state"?`},
		{"Event approves", "repoCreatePullReview", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", g.Repo, reviewed), target(reviewed, map[string]any{"Event": "APPROVED", "body": "lgtm"}),
			`body.Event: unknown property; did you mean "event"?`},
		{"STATE closes an issue", "issueEditIssue", "PATCH", issuePath, target(issue, map[string]any{"STATE": "closed"}),
			`body.STATE: unknown property; did you mean "state"?`},
		{"a decoy beside state", "repoEditPullRequest", "PATCH", prPath, target(pr, map[string]any{"state": "open", "ſtate": "closed"}),
			`body["ſtate"]: unknown property; did you mean "state"?`},
		{"a decoy beside an issue's state", "issueEditIssue", "PATCH", issuePath, target(issue, map[string]any{"state": "open", "ſtate": "closed"}),
			`body["ſtate"]: unknown property; did you mean "state"?`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, r := range routes(tc.op, tc.method, tc.path, tc.args) {
				res, isErr := c.callTool(r.tool, r.args)
				if !isErr || str(get(res, "error.kind")) != "invalid_arguments" || str(get(res, "error.message")) != tc.want {
					t.Errorf("%s: got %v, want invalid_arguments %q", r.name, res, tc.want)
				}
			}
		})
	}
	t.Run("workflow tools", func(t *testing.T) {
		for tool, args := range map[string]map[string]any{
			"gitea_edit_pr":   {"owner": owner, "repo": repo, "index": pr, "State": "closed"},
			"gitea_review_pr": {"owner": owner, "repo": repo, "index": reviewed, "Event": "APPROVED"},
		} {
			res, isErr := c.callTool(tool, args)
			if !isErr || str(get(res, "error.kind")) != "invalid_arguments" || !strings.Contains(str(get(res, "error.message")), "unknown property; did you mean") {
				t.Errorf("%s: %v", tool, res)
			}
		}
	})
	if state := prState(t, g, pr); state != "open" {
		t.Errorf("pull request is %s", state)
	}
	_, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews", g.Repo, reviewed), nil)
	if err != nil {
		t.Fatal(err)
	}
	var reviews []struct{ State string }
	if decodeJSON(t, data, &reviews); len(reviews) != 0 {
		t.Errorf("reviews after the refusals: %s", data)
	}
	if _, _, data, err = g.api("alice", "GET", issuePath, nil); err != nil {
		t.Fatal(err)
	}
	var is struct{ State string }
	if decodeJSON(t, data, &is); is.State != "open" {
		t.Errorf("issue is %s", is.State)
	}
	t.Run("the profile may edit: the refusals were the bodies'", func(t *testing.T) {
		res, isErr := c.callTool("repoEditPullRequest", target(pr, map[string]any{"title": "canonical body"}))
		if isErr || str(get(res, "data.title")) != "canonical body" {
			t.Errorf("edit: %v", res)
		}
	})
}

// TestE2EEverydayBodies shows that closed body schemas take the everyday
// writes as Gitea documents them: branch, file create and update, issue,
// comment, label, pull request, review with a line comment, edit, merge.
func TestE2EEverydayBodies(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	alice := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	call := func(c *client, op string, args map[string]any) map[string]any {
		t.Helper()
		args["owner"], args["repo"] = owner, repo
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
		if isErr {
			t.Fatalf("%s: %v", op, res)
		}
		return res
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	branch := "e2e/everyday"
	call(alice, "repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": branch, "old_ref_name": "main"}})
	file := call(alice, "repoCreateFile", map[string]any{"filepath": "everyday.txt",
		"body": map[string]any{"content": b64("one\n"), "message": "add everyday.txt", "branch": branch}})
	call(alice, "repoUpdateFile", map[string]any{"filepath": "everyday.txt", "body": map[string]any{"content": b64("one\ntwo\n"),
		"message": "update everyday.txt", "branch": branch, "sha": str(get(file, "data.content.sha"))}})
	issue := call(alice, "issueCreateIssue", map[string]any{"body": map[string]any{"title": "everyday", "body": "text"}})
	n := get(issue, "data.number")
	call(alice, "issueCreateComment", map[string]any{"index": n, "body": map[string]any{"body": "a comment"}})
	label := call(alice, "issueCreateLabel", map[string]any{"body": map[string]any{"name": "everyday", "color": "#00aabb"}})
	call(alice, "issueAddLabel", map[string]any{"index": n, "body": map[string]any{"labels": []any{get(label, "data.id")}}})
	call(alice, "issueEditIssue", map[string]any{"index": n, "body": map[string]any{"title": "everyday, edited", "state": "closed"}})
	pull := call(alice, "repoCreatePullRequest", map[string]any{"body": map[string]any{"title": "everyday", "head": branch, "base": "main", "body": "b"}})
	pr, head := get(pull, "data.number"), str(get(pull, "data.head.sha"))
	call(alice, "repoEditPullRequest", map[string]any{"index": pr, "body": map[string]any{"title": "everyday, edited", "labels": []any{get(label, "data.id")}}})
	carol := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	review := call(carol, "repoCreatePullReview", map[string]any{"index": pr, "body": map[string]any{"event": "APPROVED", "body": "fine", "commit_id": head,
		"comments": []any{map[string]any{"path": "everyday.txt", "body": "nice line", "new_position": 2}}}})
	if str(get(review, "data.state")) != "APPROVED" {
		t.Errorf("review: %v", review)
	}
	merger := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	index := int(mustInt(t, pr))
	waitMergeable(t, merger, owner, repo, index)
	merge := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"do": "merge", "head_commit_id": head, "merge_message_field": "everyday"}}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		// Gitea answers 405 "try again later" while it still checks the merge.
		res, isErr := merger.callTool("gitea_call_operation", map[string]any{"operation": "repoMergePullRequest", "arguments": merge})
		if !isErr {
			break
		}
		if str(get(res, "error.kind")) != "method_not_allowed" || time.Now().After(deadline) {
			t.Fatalf("merge: %v", res)
		}
	}
	if state := prState(t, g, index); state != "merged" {
		t.Errorf("pull request %d is %s", index, state)
	}
}

// mustInt reads a JSON number decoded with UseNumber.
func mustInt(t *testing.T, v any) int64 {
	t.Helper()
	var n int64
	if _, err := fmt.Sscan(str(v), &n); err != nil {
		t.Fatalf("not a number: %v", v)
	}
	return n
}
