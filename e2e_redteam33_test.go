package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam33CommentReopensOnMerge: found by the red team. A reopening
// keyword in a pull request's thread reopens the closed issue it names when
// the pull request is merged, as a closing keyword closes one: Gitea records
// the reference with its action for a writer or the issue's poster
// (models/issues/issue_xref.go verifyReferencedIssue) and the merge reopens
// every closed issue the pull request references so (services/pull/merge.go
// handleCloseCrossReferences, XRefActionReopens). Reopening an issue is
// gitea.issue.edit's; before the fix prgs-reconciler, which holds
// gitea.issue.close but not gitea.issue.edit, commented "Reopens #N" on bob's
// pull request and carol's merge reopened issue N.
func TestE2ERedteam33CommentReopensOnMerge(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt33reopen", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "keep closed"}, http.StatusCreated, &issue)
	s.call("alice", "PATCH", fmt.Sprintf("/repos/%s/issues/%d", repo, issue.Number), map[string]any{"state": "closed"}, http.StatusCreated, nil)
	pr := s.topicPR("bob", repo, "topic", "a.txt", "a.txt")
	if s.err != nil {
		t.Fatal(s.err)
	}
	reconciler := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=prgs-reconciler", "GITEA_MCP_TOOLS=issueCreateComment,issueEditIssue")
	if res, isErr := reconciler.callTool("issueEditIssue", map[string]any{"owner": owner, "repo": name, "index": issue.Number, "body": map[string]any{"state": "open"}}); !isErr {
		t.Fatalf("prgs-reconciler reopened issue %d itself: %v", issue.Number, res)
	}
	res, isErr := reconciler.callTool("issueCreateComment", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"body": fmt.Sprintf("Reopens #%d", issue.Number)}})
	if !isErr || get(res, "error.permission_report.required_permission") != "gitea.issue.edit" {
		t.Errorf("a comment reopening #%d on a pull request under prgs-reconciler: %v; want it refused for gitea.issue.edit", issue.Number, res)
	}
	if res, isErr := reconciler.callTool("issueCreateComment", map[string]any{"owner": owner, "repo": name, "index": issue.Number, "body": map[string]any{"body": fmt.Sprintf("see !%d", pr.Number)}}); isErr {
		t.Errorf("a comment on an issue naming the pull request: %v", res)
	}
	if state := mergedIssueState(t, g, s, repo, pr, issue.Number); state != "closed" {
		t.Errorf("issue %d after the merge: %q; want it closed", issue.Number, state)
	}
}
