package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// waitMergeable polls the eligibility check until Gitea has decided whether
// the pull request can be merged (it checks in the background after a push).
func waitMergeable(t *testing.T, c *client, owner, repo string, pr int) map[string]any {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		res, isErr := c.callTool("gitea_check_pr_eligibility", map[string]any{"owner": owner, "repo": repo, "index": pr, "action": "merge"})
		if isErr {
			t.Fatalf("eligibility: %v", res)
		}
		if get(res, "data.mergeable") != nil || time.Now().After(deadline) {
			return res
		}
	}
}

func TestE2EWorkflow(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	t.Run("a reviewer approves another user's pull request", func(t *testing.T) {
		c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
		res, isErr := c.callTool("gitea_review_pr", map[string]any{"owner": owner, "repo": repo, "index": g.PR, "event": "APPROVED", "commit_id": g.PRHeadSHA, "body": "looks right"})
		if isErr || str(get(res, "data.state")) != "APPROVED" {
			t.Errorf("approve: %v", res)
		}
	})
	t.Run("the author cannot approve", func(t *testing.T) {
		c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-reviewer")
		res, isErr := c.callTool("gitea_review_pr", map[string]any{"owner": owner, "repo": repo, "index": g.PR, "event": "APPROVED", "commit_id": g.PRHeadSHA})
		if !isErr || str(get(res, "error.kind")) != "permission_denied" || !strings.Contains(str(get(res, "error.message")), "authored") {
			t.Errorf("self-approval: %v", res)
		}
		elig, _ := c.callTool("gitea_check_pr_eligibility", map[string]any{"owner": owner, "repo": repo, "index": g.PR, "action": "approve"})
		if get(elig, "data.eligible") != false || !strings.Contains(str(get(elig, "data.gates")), "authored") {
			t.Errorf("eligibility of the author: %v", elig)
		}
	})
	t.Run("merge gates", func(t *testing.T) {
		pr, head := newPR(t, g, "bob", "e2e/merge-gates")
		c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
		args := func(headSHA, confirm string) map[string]any {
			return map[string]any{"owner": owner, "repo": repo, "index": pr, "head_sha": headSHA, "confirm": confirm,
				"merge_method": "squash", "expected_changed_files": []string{"e2e/merge-gates.txt"}}
		}
		if elig := waitMergeable(t, c, owner, repo, pr); get(elig, "data.eligible") != true {
			t.Fatalf("not eligible: %v", elig)
		}
		res, isErr := c.callTool("gitea_merge_pr", args(head, "MERGE PR 999"))
		if !isErr || get(res, "data.merged") != false || prState(t, g, pr) != "open" {
			t.Errorf("wrong confirm: %v", res)
		}
		res, isErr = c.callTool("gitea_merge_pr", args(g.MainSHA, fmt.Sprintf("MERGE PR %d", pr)))
		if !isErr || !strings.Contains(str(get(res, "data.gates")), "head is still head_sha passed:false") || prState(t, g, pr) != "open" {
			t.Errorf("stale head_sha: %v", res)
		}
		res, isErr = c.callTool("gitea_merge_pr", args(head, fmt.Sprintf("MERGE PR %d", pr)))
		if isErr || get(res, "data.merged") != true || str(get(res, "data.merge_commit")) == "" || prState(t, g, pr) != "merged" {
			t.Errorf("merge: %v", res)
		}
	})
	t.Run("pull request comments do not grant issue comments", func(t *testing.T) {
		config := filepath.Join(t.TempDir(), "profiles.json")
		os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"pr-commenter","token_source_name":"GITEA_TOKEN",
			"audit_label":"c","allowed_operations":["gitea.read","gitea.pr.comment"],"forbidden_operations":[]}]}`), 0o600)
		c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=pr-commenter", "GITEA_MCP_CONFIG="+config)
		res, isErr := c.callTool("gitea_create_issue_comment", map[string]any{"owner": owner, "repo": repo, "index": g.Issues[0], "body": "hi"})
		if !isErr || str(get(res, "error.permission_report.required_permission")) != "gitea.issue.comment" {
			t.Errorf("issue comment with only gitea.pr.comment: %v", res)
		}
	})
	t.Run("reconciler", func(t *testing.T) {
		c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=prgs-reconciler")
		open, _ := newPR(t, g, "bob", "e2e/not-landed")
		res, isErr := c.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": repo, "index": open})
		if !isErr || get(res, "data.closed") != false || prState(t, g, open) != "open" {
			t.Errorf("not landed: %v", res)
		}
		res, isErr = c.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": repo, "index": g.LandedPR})
		if isErr || get(res, "data.closed") != true || prState(t, g, g.LandedPR) != "closed" {
			t.Fatalf("landed: %v", res)
		}
		_, _, data, _ := g.api("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d/comments", g.Repo, g.LandedPR), nil)
		if !strings.Contains(string(data), g.LandedSHA) {
			t.Errorf("no proof comment naming %s: %s", g.LandedSHA, data)
		}
		author := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author")
		res, isErr = author.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": repo, "index": open})
		if !isErr || !strings.Contains(str(get(res, "data.gates")), "reconciler profile") {
			t.Errorf("reconcile as an author: %v", res)
		}
	})
	t.Run("task capabilities and guide", func(t *testing.T) {
		c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
		res, _ := c.callTool("gitea_resolve_task_capability", map[string]any{"task": "merge_pr"})
		if get(res, "data.allowed") != false || !strings.Contains(str(get(res, "data.reference_profiles_with_it")), "gitea-merger") {
			t.Errorf("merge_pr for a reviewer: %v", res)
		}
		if res, isErr := c.callTool("gitea_resolve_task_capability", map[string]any{"task": "deploy"}); !isErr {
			t.Errorf("unknown task: %v", res)
		}
		guide, _ := c.callTool("gitea_get_operator_guide", map[string]any{})
		if !strings.Contains(str(get(guide, "data.guide")), "gitea-reviewer") {
			t.Errorf("guide: %v", guide)
		}
	})
}
