package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestE2ERefusalsAudited: every refused mutation writes one audit line that
// names the rule or gate that refused it, wherever it was refused (a workflow
// gate, argument validation, the executor); a refused read writes none. The
// log is keyed; it verifies with the head gitea_get_profile and the exit
// report give, and an edit of its last line is found.
func TestE2ERefusalsAudited(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	audit := filepath.Join(t.TempDir(), "audit.log")
	env := []string{"GITEA_AUDIT_LOG=" + audit, "GITEA_AUDIT_KEY=" + auditTestKey, "GITEA_MCP_TOOLS=repoMergePullRequest,repoGet"}
	pr := fmt.Sprint(g.PR)
	prArgs := map[string]any{"owner": owner, "repo": repo, "index": g.PR}
	mergePath := fmt.Sprintf("/repos/%s/pulls/%d/merge", g.Repo, g.PR)
	type line struct{ Tool, Operation, Perm, Path, Rule string }
	var want []line
	for _, step := range []struct {
		login, profile, tool string
		args                 map[string]any
		want                 *line // nil: no audit line
	}{
		{"bob", "gitea-merger", "gitea_merge_pr", with(prArgs, "head_sha", g.PRHeadSHA, "confirm", "MERGE PR 999"),
			&line{"gitea_merge_pr", "repoMergePullRequest", "gitea.pr.merge", mergePath, `gate "confirm"`}},
		{"bob", "gitea-merger", "gitea_merge_pr", with(prArgs, "head_sha", g.PRHeadSHA, "confirm", "MERGE PR "+pr),
			&line{"gitea_merge_pr", "repoMergePullRequest", "gitea.pr.merge", mergePath, `"not the author"`}},
		{"carol", "gitea-merger", "repoMergePullRequest", with(prArgs, "body", "merge"),
			&line{"repoMergePullRequest", "repoMergePullRequest", "gitea.pr.merge", mergePath, "argument validation"}},
		{"carol", "gitea-merger", "gitea_call_operation", map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": owner, "repo": repo}},
			&line{"gitea_call_operation", "repoMergePullRequest", "gitea.pr.merge", "/repos/{owner}/{repo}/pulls/{index}/merge", "argument validation"}},
		{"carol", "gitea-merger", "gitea_api_request", map[string]any{"method": "POST", "path": mergePath, "query": map[string]any{"sudo": "alice"}, "body": map[string]any{"do": "merge"}},
			&line{"gitea_api_request", "", "", mergePath, "argument validation"}},
		{"bob", "gitea-author", "gitea_edit_pr", with(prArgs, "state", "CLOSED"),
			&line{"gitea_edit_pr", "", "", "", "argument validation"}},
		{"bob", "gitea-author", "gitea_reconcile_already_landed_pr", prArgs,
			&line{"gitea_reconcile_already_landed_pr", "repoEditPullRequest", "gitea.pr.close", fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, g.PR), `gate "reconciler profile"`}},
		{"carol", "gitea-author", "gitea_write_file", map[string]any{"owner": owner, "repo": repo, "path": "feature", "branch": "feature/x", "text": "x", "message": "m"},
			&line{"gitea_write_file", "repoUpdateFile", "gitea.repo.commit", "/repos/" + g.Repo + "/contents/feature", `gate "a file"`}},
		{"carol", "gitea-reviewer", "gitea_review_pr", with(prArgs, "event", "APPROVE"),
			&line{"gitea_review_pr", "", "", "", "argument validation"}},
		{"carol", "gitea-reviewer", "repoMergePullRequest", with(prArgs, "body", map[string]any{"do": "merge"}),
			&line{"repoMergePullRequest", "repoMergePullRequest", "gitea.pr.merge", mergePath, "policy"}},
		{"carol", "gitea-reviewer", "repoGet", map[string]any{"owner": owner}, nil},
		{"carol", "gitea-reviewer", "gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + g.Repo, "query": map[string]any{"sudo": "alice"}}, nil},
	} {
		c := e2eClient(t, g, step.login, append(env, "GITEA_MCP_PROFILE="+step.profile)...)
		if res, isErr := c.callTool(step.tool, step.args); !isErr {
			t.Errorf("%s as %s: not refused: %v", step.tool, step.profile, res)
		}
		c.close()
		if step.want != nil {
			want = append(want, *step.want)
		}
	}
	if prState(t, g, g.PR) != "open" {
		t.Fatal("a refused call changed the pull request")
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var got []line
	for _, l := range strings.SplitAfter(string(data), "\n") {
		if l == "" {
			continue
		}
		var e auditEntry
		if err := json.Unmarshal([]byte(l), &e); err != nil || e.Decision != "denied" {
			t.Fatalf("line %q: %v", l, err)
		}
		rule := e.Rule
		if strings.HasPrefix(rule, "gate ") && !strings.Contains(rule, "confirm") && !strings.Contains(rule, "reconciler") {
			rule = `"not the author"` // the gates that failed besides it vary with Gitea's mergeable
			if !strings.Contains(e.Rule, rule) {
				rule = e.Rule
			}
		}
		got = append(got, line{e.Tool, e.Operation, e.RequiredPermission, e.Path, rule})
		if e.Reason == "" || e.Profile == "" {
			t.Errorf("line without reason or profile: %s", l)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit lines mismatch (-want +got):\n%s", diff)
	}

	// The head the server reports verifies the log; an edit of the last line is found.
	c := e2eClient(t, g, "carol", append(env, "GITEA_MCP_PROFILE=gitea-reviewer")...)
	prof, _ := c.callTool("gitea_get_profile", map[string]any{})
	head := str(get(prof, "data.audit_log.head"))
	if !strings.HasPrefix(head, fmt.Sprintf("%d:", len(want))) || get(prof, "data.audit_log.forward_secure_key") != true {
		t.Errorf("gitea_get_profile audit_log: %v", get(prof, "data.audit_log"))
	}
	c.close()
	if !strings.Contains(c.stderr.String(), "audit log head "+head) {
		t.Errorf("no head %s on standard error at exit:\n%s", head, c.stderr.String())
	}
	verify := func(key string) (string, error) {
		cmd := exec.Command(serverBinary(t), "-verify-audit", audit, "-audit-head", head)
		cmd.Env = []string{"GITEA_AUDIT_KEY=" + key}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := verify(auditTestKey); err != nil || !strings.Contains(out, "chain intact") || !strings.Contains(out, "every mac verified with the key") {
		t.Errorf("-verify-audit: %v: %s", err, out)
	}
	if out, err := verify(strings.Repeat("77", 32)); err == nil || !strings.Contains(out, "line 1: mac does not match") {
		t.Errorf("-verify-audit with another key: %v: %s", err, out)
	}
	i := strings.LastIndex(string(data), `"decision":"denied"`)
	os.WriteFile(audit, []byte(string(data[:i])+`"decision":"allowed"`+string(data[i+len(`"decision":"denied"`):])), 0o600)
	if out, err := verify(auditTestKey); err == nil || !strings.Contains(out, fmt.Sprintf("line %d: mac does not match", len(want))) {
		t.Errorf("-verify-audit after an edit of the last line: %v: %s", err, out)
	}
}
