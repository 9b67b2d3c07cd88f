package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// newPR opens a fresh pull request by author from a new branch with one
// commit, so that tests which merge or close one leave the fixtures alone.
func newPR(t *testing.T, g *giteaInstance, author, branch string) (int, string) {
	t.Helper()
	s := &giteaSetup{g: g}
	sha := s.commit(author, "main", branch, "change on "+branch, map[string][]byte{branch + ".txt": []byte(branch + "\n")})
	n := s.pull(author, branch, "pull request "+branch)
	if s.err != nil {
		t.Fatal(s.err)
	}
	return n, sha
}

// prState reads a pull request's state and merged flag straight from Gitea.
func prState(t *testing.T, g *giteaInstance, n int) string {
	t.Helper()
	_, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, n), nil)
	if err != nil {
		t.Fatal(err)
	}
	var pr struct {
		State  string `json:"state"`
		Merged bool   `json:"merged"`
	}
	decodeJSON(t, data, &pr)
	if pr.Merged {
		return "merged"
	}
	return pr.State
}

const policyTools = "GITEA_MCP_TOOLS=repoMergePullRequest,repoCreatePullReview,repoEditPullRequest,issueEditIssue,issueCreateComment,issueEditIssueDeadline"

func TestE2EProfiles(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	audit := filepath.Join(t.TempDir(), "audit.log")
	pr, head := newPR(t, g, "bob", "e2e/profiles")
	prPath := fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, pr)
	merge := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"do": "merge", "head_commit_id": head}}
	approve := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"event": "APPROVED", "body": "lgtm"}}
	closePR := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"state": "closed"}}
	closeIssue := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"state": "closed"}}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"alias-trap","authenticated_username":"carol",
		"token_source_name":"GITEA_TOKEN","audit_label":"trap","allowed_operations":["gitea.read","gitea.pr.merge"],
		"forbidden_operations":["merge"],"can_merge_prs":true}]}`), 0o600)
	for _, tc := range []struct {
		name, login, profile string
		op, method, path     string
		args                 map[string]any
		perm, reason         string
	}{
		{"a reviewer cannot merge", "carol", "gitea-reviewer", "repoMergePullRequest", "POST", prPath + "/merge", merge, "gitea.pr.merge", "forbidden"},
		{"the author cannot approve as owner", "bob", "gitea-owner", "repoCreatePullReview", "POST", prPath + "/reviews", approve, "gitea.pr.approve", "authored this pull request"},
		{"the author cannot merge as owner", "bob", "gitea-owner", "repoMergePullRequest", "POST", prPath + "/merge", merge, "gitea.pr.merge", "authored this pull request"},
		{"a forbidden alias blocks the canonical name", "carol", "alias-trap", "repoMergePullRequest", "POST", prPath + "/merge", merge, "gitea.pr.merge", "forbidden"},
		{"closing a pull request needs gitea.pr.close", "bob", "gitea-author", "repoEditPullRequest", "PATCH", prPath, closePR, "gitea.pr.close", "gitea.pr.close"},
		{"closing it as an issue needs gitea.pr.close too", "carol", "gitea-issue-manager", "issueEditIssue", "PATCH", fmt.Sprintf("/repos/%s/issues/%d", g.Repo, pr), closeIssue, "gitea.pr.close", "gitea.pr.close"},
		{"retitling it as an issue needs gitea.pr.create", "carol", "gitea-issue-manager", "issueEditIssue", "PATCH", fmt.Sprintf("/repos/%s/issues/%d", g.Repo, pr),
			map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"title": "renamed"}}, "gitea.pr.create", "gitea.pr.create"},
		{"its deadline through the issue API needs gitea.pr.create", "carol", "gitea-issue-manager", "issueEditIssueDeadline", "POST", fmt.Sprintf("/repos/%s/issues/%d/deadline", g.Repo, pr),
			map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"due_date": "2030-01-01T00:00:00Z"}}, "gitea.pr.create", "gitea.pr.create"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := e2eClient(t, g, tc.login, "GITEA_MCP_PROFILE="+tc.profile, "GITEA_MCP_CONFIG="+config, "GITEA_AUDIT_LOG="+audit, policyTools)
			for _, r := range routes(tc.op, tc.method, tc.path, tc.args) {
				res, isErr := c.callTool(r.tool, r.args)
				report, _ := get(res, "error.permission_report").(map[string]any)
				if !isErr || str(get(res, "error.kind")) != "permission_denied" || report == nil {
					t.Errorf("%s: not denied: %v", r.name, res)
					continue
				}
				if str(report["required_permission"]) != tc.perm || !strings.Contains(str(report["reason"]), tc.reason) ||
					str(report["profile"]) != tc.profile || str(report["operation"]) != tc.op || str(report["tool"]) != r.tool {
					t.Errorf("%s: permission_report %v", r.name, report)
				}
			}
			if state := prState(t, g, pr); state != "open" {
				t.Fatalf("a denied call changed Gitea: pull request is %s", state)
			}
		})
	}
	t.Run("another user with the merger profile can merge", func(t *testing.T) {
		c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", "GITEA_AUDIT_LOG="+audit, policyTools)
		res, isErr := c.callTool("repoMergePullRequest", merge)
		if isErr {
			t.Fatalf("merge: %v", res)
		}
		if state := prState(t, g, pr); state != "merged" {
			t.Errorf("pull request is %s after the merge", state)
		}
	})
	t.Run("audit log", func(t *testing.T) {
		data, err := os.ReadFile(audit)
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(data)), "\n")
		denied := strings.Count(string(data), `"decision":"denied"`)
		// The merge: allowed before it is sent, answered with Gitea's status after.
		if denied != 8*3 || !strings.Contains(lines[len(lines)-2], `"decision":"allowed"`) || !strings.Contains(lines[len(lines)-2], `"status":0`) ||
			!strings.Contains(lines[len(lines)-1], `"decision":"answered"`) || !strings.Contains(lines[len(lines)-1], `"status":200`) {
			t.Errorf("%d lines, %d denied; last: %s", len(lines), denied, lines[len(lines)-1])
		}
		for who, tok := range g.Tokens {
			if strings.Contains(string(data), tok) {
				t.Errorf("the token of %s is in the audit log", who)
			}
		}
		out, err := exec.Command(serverBinary(t), "-verify-audit", audit).CombinedOutput()
		if err != nil || !strings.Contains(string(out), "chain intact") {
			t.Errorf("-verify-audit: %v: %s", err, out)
		}
		os.WriteFile(audit, []byte(strings.Replace(string(data), `"decision":"denied"`, `"decision":"allowed"`, 1)), 0o600)
		out, err = exec.Command(serverBinary(t), "-verify-audit", audit).CombinedOutput()
		if err == nil || !strings.Contains(string(out), "line 1: mac does not match") {
			t.Errorf("-verify-audit on a tampered log: %v: %s", err, out)
		}
	})
}

func TestE2EIdentityTools(t *testing.T) {
	g := needGitea(t)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	who, isErr := c.callTool("gitea_whoami", map[string]any{})
	if isErr || str(get(who, "data.login")) != "carol" || str(get(who, "data.profile")) != "gitea-reviewer" || str(get(who, "data.mode")) != "token" {
		t.Errorf("gitea_whoami: %v", who)
	}
	prof, _ := c.callTool("gitea_get_profile", map[string]any{})
	if str(get(prof, "data.profile.profile_name")) != "gitea-reviewer" || !strings.Contains(str(get(prof, "data.allowed_operations")), "gitea.pr.approve") ||
		str(get(prof, "data.identity.login")) != "carol" {
		t.Errorf("gitea_get_profile: %v", prof)
	}
	r := c.call("tools/list", nil)
	for _, hidden := range []string{`"issueCreateIssue"`, `"gitea_activate_profile"`} {
		if strings.Contains(string(r.Result), hidden) {
			t.Errorf("tools/list of a reviewer shows %s", hidden)
		}
	}
	found, _ := c.callTool("gitea_find_operations", map[string]any{"query": "merge a pull request", "limit": 20})
	if strings.Contains(str(get(found, "data.matches")), "repoMergePullRequest") {
		t.Errorf("find offers a reviewer repoMergePullRequest")
	}
	// Without a profile, reads work and mutations are denied.
	none := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=")
	owner, repo := ownerRepo(g)
	if res, isErr := none.callTool("repoGet", map[string]any{"owner": owner, "repo": repo}); isErr {
		t.Errorf("read without a profile: %v", res)
	}
	res, isErr := none.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": repo, "body": map[string]any{"title": "no"}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "no active profile") {
		t.Errorf("mutation without a profile: %v", res)
	}
}

func TestE2ERuntimeSwitching(t *testing.T) {
	g := needGitea(t)
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"rules":{"allow_runtime_switching":true},"profiles":[{"profile_name":"carol-reviews",
		"authenticated_username":"carol","token_source_name":"GITEA_TOKEN_CAROL","allowed_operations":["gitea.read","gitea.pr.review"],"forbidden_operations":[],"audit_label":"r"}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner", "GITEA_MCP_CONFIG="+config, "GITEA_TOKEN_CAROL="+g.Tokens["carol"])
	res, isErr := c.callTool("gitea_activate_profile", map[string]any{"profile": "carol-reviews"})
	if isErr || str(get(res, "data.login")) != "carol" {
		t.Fatalf("activate: %v", res)
	}
	if !strings.Contains(c.transcript.String(), `"method":"notifications/tools/list_changed"`) {
		t.Error("no notifications/tools/list_changed after the switch")
	}
	who, _ := c.callTool("gitea_whoami", map[string]any{})
	if str(get(who, "data.login")) != "carol" || str(get(who, "data.profile")) != "carol-reviews" {
		t.Errorf("after the switch: %v", who)
	}
}

func TestE2ESudo(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	c := e2eClient(t, g, "alice", "GITEA_SUDO=bob", policyTools)
	who, isErr := c.callTool("gitea_whoami", map[string]any{})
	if isErr || str(get(who, "data.login")) != "bob" || str(get(who, "data.mode")) != "sudo" || str(get(who, "identity.sudo")) != "bob" {
		t.Errorf("gitea_whoami in sudo mode: %v", who)
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGet", "arguments": map[string]any{"owner": owner, "repo": repo}})
	if id := res["identity"]; str(get(id, "login")) != "bob" || str(get(id, "mode")) != "sudo" || str(get(id, "sudo")) != "bob" {
		t.Errorf("envelope identity %v", id)
	}
	// Acting for bob, alice's admin token still cannot merge bob's pull request.
	res, isErr = c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": repo, "index": g.PR, "body": map[string]any{"do": "merge"}})
	if !isErr || !strings.Contains(str(get(res, "error.message")), "authored this pull request") {
		t.Errorf("merge of bob's pull request acting as bob: %v", res)
	}
}

// TestE2ESelfMergeAfterRename renames the server's own account in Gitea after
// the server verified its login: the pull request it authored is still its
// own (accounts compare by id), so approving and merging it stay refused and
// nothing is sent. It runs its own Gitea, since the rename would disturb the
// shared one.
func TestE2ESelfMergeAfterRename(t *testing.T) {
	g := ownGitea(t)
	owner, repo := ownerRepo(g)
	pr, _ := newPR(t, g, "bob", "e2e/rename")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-owner", policyTools)
	merge := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"do": "merge"}}
	approve := map[string]any{"owner": owner, "repo": repo, "index": pr, "body": map[string]any{"event": "APPROVED", "body": "lgtm"}}
	try := func(when string) {
		for _, call := range []struct {
			tool string
			args map[string]any
		}{{"repoMergePullRequest", merge}, {"repoCreatePullReview", approve}} {
			res, isErr := c.callTool(call.tool, call.args)
			if !isErr || !strings.Contains(str(get(res, "error.message")), "authored this pull request") {
				t.Errorf("%s, %s: want a refusal naming the author, got %v", when, call.tool, res)
			}
		}
		if st := prState(t, g, pr); st != "open" {
			t.Fatalf("%s: pull request %s, want open", when, st)
		}
	}
	try("before the rename")
	if status, _, data, err := g.api("alice", "POST", "/admin/users/bob/rename", map[string]any{"new_username": "bobby"}); err != nil || status != 204 {
		t.Fatalf("rename bob: %d %v %s", status, err, data)
	}
	try("after the rename") // the server still holds the login "bob" it verified
}
