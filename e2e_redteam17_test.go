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

// redteam17 sets up, as alice, two scratch repositories, a inside and b
// outside the list of the profile "a-only" (the operations perms grants), an
// issue in each, and a server of it for alice.
func redteam17(t *testing.T, perms string) (g *giteaInstance, a, b string, c *client) {
	g = needGitea(t)
	a, _ = scratchRepo(t, g, "rt17a", false)
	b, _ = scratchRepo(t, g, "rt17b", false)
	s := &giteaSetup{g: g}
	for _, repo := range []string{a, b} {
		s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "one"}, http.StatusCreated, nil)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"a-only","repositories":["`+a+`"],"allowed_operations":["gitea.read",`+perms+`]}]}`), 0o600)
	return g, a, b, e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=a-only", "GITEA_MCP_CONFIG="+config)
}

// TestE2ERedteam17StopwatchElsewhere: starting a stopwatch stops the
// caller's running one (models/issues/stopwatch.go CreateIssueStopwatch),
// writing a tracked time and a comment on its issue, in a repository
// outside the list. Now it is refused while one runs outside.
func TestE2ERedteam17StopwatchElsewhere(t *testing.T) {
	g, a, b, c := redteam17(t, `"gitea.issue.edit"`)
	if status, _, data, err := g.api("alice", "POST", "/repos/"+b+"/issues/1/stopwatch/start", nil); err != nil || status != http.StatusCreated {
		t.Fatalf("stopwatch on %s#1: %d %v %s", b, status, err, data)
	}
	owner, name, _ := strings.Cut(a, "/")
	res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "issueStartStopWatch", "arguments": map[string]any{"owner": owner, "repo": name, "index": 1}})
	if !isErr || !strings.Contains(str(get(res, "error.permission_report.reason")), "stops yours running on "+b+"#1") {
		t.Errorf("stopwatch start on %s#1 with one running on %s#1: %v", a, b, res)
	}
	if _, _, data, err := g.api("alice", "GET", "/user/stopwatches", nil); err != nil || !strings.Contains(string(data), `"repo_name":"`+strings.SplitN(b, "/", 2)[1]+`"`) {
		t.Errorf("the stopwatch on %s#1 no longer runs: %v %.300s", b, err, data)
	}
}

// TestE2ERedteam17DeleteNeutersReference: Gitea neuters the
// cross-references of a comment it deletes or edits
// (models/issues/issue_xref.go), on the timeline of the issue referenced,
// outside the list. Now both are refused while the stored body references
// an issue outside.
func TestE2ERedteam17DeleteNeutersReference(t *testing.T) {
	g, a, b, c := redteam17(t, `"gitea.issue.comment"`)
	var comment struct{ ID int64 }
	status, _, data, err := g.api("alice", "POST", "/repos/"+a+"/issues/1/comments", map[string]any{"body": "see " + b + "#1"})
	if err != nil || status != http.StatusCreated || json.Unmarshal(data, &comment) != nil {
		t.Fatalf("comment: %d %v %s", status, err, data)
	}
	owner, name, _ := strings.Cut(a, "/")
	for _, op := range []string{"issueEditComment", "issueDeleteComment"} {
		args := map[string]any{"owner": owner, "repo": name, "id": comment.ID}
		if op == "issueEditComment" {
			args["body"] = map[string]any{"body": "nothing"}
		}
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
		if !isErr || !strings.Contains(str(get(res, "error.permission_report.reason")), fmt.Sprintf("references %q", b)) {
			t.Errorf("%s of a comment referencing %s#1: %v", op, b, res)
		}
	}
	_, _, data, err = g.api("alice", "GET", "/repos/"+b+"/issues/1/timeline", nil)
	if err != nil || !strings.Contains(string(data), `"type":"comment_ref"`) {
		t.Errorf("%s#1 lost the cross-reference: %v %.400s", b, err, data)
	}
}

// TestE2ERedteam17DeleteDependency: deleting an issue deletes its
// dependency links (services/issue/issue.go deleteIssue), those with issues
// outside the list too. Now the deletion is refused.
func TestE2ERedteam17DeleteDependency(t *testing.T) {
	g, a, b, c := redteam17(t, `"gitea.issue.delete"`)
	bOwner, bName, _ := strings.Cut(b, "/")
	if status, _, data, err := g.api("alice", "POST", "/repos/"+a+"/issues/1/dependencies", map[string]any{"owner": bOwner, "repo": bName, "index": 1}); err != nil || status != http.StatusCreated {
		t.Fatalf("dependency: %d %v %s", status, err, data)
	}
	owner, name, _ := strings.Cut(a, "/")
	res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "issueDelete", "arguments": map[string]any{"owner": owner, "repo": name, "index": 1}})
	if !isErr || !strings.Contains(str(get(res, "error.permission_report.reason")), "dependency link with "+b+"#1") {
		t.Errorf("deletion of %s#1, which depends on %s#1: %v", a, b, res)
	}
	if _, _, data, err := g.api("alice", "GET", "/repos/"+b+"/issues/1/blocks", nil); err != nil || !strings.Contains(string(data), `"title":"one"`) {
		t.Errorf("%s#1 no longer blocks %s#1: %v %.300s", b, a, err, data)
	}
}
