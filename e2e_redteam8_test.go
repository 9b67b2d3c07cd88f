package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam8ReopenedStaleFiles: found by attacking the merge's files
// gate with a head that moved while the pull request was closed. Gitea
// updates a pull request's refs/pull/N/head on a push only while it is open,
// and reopening it through the API does not: reopened, its head (head.sha,
// the head branch, what a merge merges) is the new commit, while its files,
// commits and diff (read at refs/pull/N/head) are still the old head's. A
// merger pinned to that head with the files it was shown passed every gate
// and merged a file it was never shown; a reviewer could approve that head
// as well, having read only the old one's diff.
func TestE2ERedteam8ReopenedStaleFiles(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "reopen", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "reviewed",
		"files": []map[string]string{{"operation": "create", "path": "a.txt", "content": b64("reviewed\n")}}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "a.txt"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", "GITEA_MCP_TOOLS=repoGetPullRequestFiles")
	waitMergeable(t, c, owner, name, pr.Number)
	edit := fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number)
	s.call("bob", "PATCH", edit, map[string]string{"state": "closed"}, http.StatusCreated, nil)
	var pushed struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "while closed",
		"files": []map[string]string{{"operation": "create", "path": "evil.txt", "content": b64("never shown\n")}}}, http.StatusCreated, &pushed)
	// Gitea handles the push from a queue: it must find the pull request closed.
	for deadline := time.Now().Add(30 * time.Second); s.err == nil; time.Sleep(300 * time.Millisecond) {
		_, _, feed, err := g.api("alice", "GET", "/repos/"+repo+"/activities/feeds", nil)
		if err == nil && strings.Contains(string(feed), pushed.Commit.SHA) || time.Now().After(deadline) {
			break
		}
	}
	time.Sleep(time.Second) // its test of the pull requests the branch heads runs beside the feed's line
	s.call("bob", "PATCH", edit, map[string]string{"state": "open"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	waitMergeable(t, c, owner, name, pr.Number)
	check, _ := c.callTool("gitea_check_pr_eligibility", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "action": "merge"})
	head := str(get(check, "data.head_sha"))
	if head != pushed.Commit.SHA || get(check, "data.eligible") != false || !strings.Contains(str(get(check, "data.gates")), "refs/pull/") {
		t.Errorf("eligibility at head %s (pushed %s): %v", head, pushed.Commit.SHA, check)
	}
	files, _ := c.callTool("repoGetPullRequestFiles", map[string]any{"owner": owner, "repo": name, "index": pr.Number})
	if shown := str(get(files, "data")); strings.Contains(shown, "evil.txt") {
		t.Fatalf("Gitea shows the head pushed while closed (the stale refs/pull/N/head this test needs is gone): %s", shown)
	}
	r := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	approve, isErr := r.callTool("gitea_review_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "event": "APPROVED", "commit_id": head})
	if !isErr || !strings.Contains(str(get(approve, "error.message")), "refs/pull/") {
		t.Errorf("approval of %s, shown at the old head: %v", head, approve)
	}
	res, _ := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": head,
		"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"a.txt"}})
	if get(res, "data.merged") != false || !strings.Contains(str(get(res, "data.gates")), "refs/pull/") {
		t.Errorf("merge expecting a.txt: %v", res)
	}
	if status, _, _, err := g.api("alice", "GET", "/repos/"+repo+"/contents/evil.txt?ref=main", nil); err != nil || status != http.StatusNotFound {
		t.Errorf("evil.txt on main: status %d, %v; want 404 (a file the merger was not shown merged)", status, err)
	}
	// A push while it is open moves refs/pull/N/head: the head is shown, and merged.
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "while open",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": b64("b\n")}}}, http.StatusCreated, &pushed)
	if s.err != nil {
		t.Fatal(s.err)
	}
	for deadline := time.Now().Add(30 * time.Second); get(check, "data.eligible") != true && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		check, _ = c.callTool("gitea_check_pr_eligibility", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "action": "merge"})
	}
	for deadline := time.Now().Add(30 * time.Second); get(res, "data.merged") != true && time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		res, _ = c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pushed.Commit.SHA,
			"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"a.txt", "b.txt", "evil.txt"}})
	}
	if get(res, "data.merged") != true {
		t.Errorf("merge of the head shown: %v (eligibility %v)", res, check)
	}
}
