package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam6PatchSubject: found by the red team. git format-patch, which
// Gitea runs for a commit's or a pull request's .patch, writes a subject (and
// an author name) that is not ASCII as RFC 2047 encoded words: a GitHub token
// in the commit message, masked in the commit's JSON, reached the model as
// "ghp=5FR2d2…", which no pattern matched.
func TestE2ERedteam6PatchSubject(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6patch", false)
	s := &giteaSetup{g: g}
	var commit struct{ Commit struct{ SHA string } }
	files := []map[string]string{{"operation": "create", "path": "notes.txt", "content": base64.StdEncoding.EncodeToString([]byte("notes\n"))}}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "Déploiement: GH=" + leakGHP + " password=\"correct horse battery\"", "files": files}, http.StatusCreated, &commit); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, kind := range []string{"patch", "diff"} {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + commit.Commit.SHA + "." + kind})
		text := str(get(res, "data"))
		if !strings.Contains(text, "notes.txt") {
			t.Fatalf("the commit's .%s: %.800s", kind, text)
		}
		for _, leak := range []string{"R2d2C3po", "correct", "=5F"} {
			if strings.Contains(text, leak) {
				t.Errorf("the commit's .%s holds %q: %.800s", kind, leak, text)
			}
		}
		if kind == "patch" && !strings.Contains(text, "Subject: [PATCH] Déploiement: GH=ghp_[MASKED] password=\"[MASKED]\"\n") {
			t.Errorf("the commit's .patch: %.800s", text)
		}
	}
}

// TestE2ERedteam6ActivityContent: found by the red team. Gitea records a push
// in the activity feed with its commits as JSON in the action's content, a
// JSON string: a password in a commit message, masked in the commit's JSON,
// reached the model there with its quotes escaped (\"password\": \"…\"),
// which the assignment pattern did not match, nor the Authorization header
// pattern an escaped "Authorization": "Basic …".
func TestE2ERedteam6ActivityContent(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6feed", false)
	s := &giteaSetup{g: g}
	files := []map[string]string{{"operation": "create", "path": "db.txt", "content": base64.StdEncoding.EncodeToString([]byte("db\n"))}}
	msg := `db config {"password": "correct horse battery"} and password="staple pony battery", curl {"Authorization": "Basic YWxpY2U6czNjcjN0"}`
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": msg, "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	text := feedText(t, c, owner, name, "db config", true)
	for _, leak := range []string{"horse", "pony", "YWxpY2U6"} {
		if strings.Contains(text, leak) {
			t.Errorf("the feed holds %q: %.1500s", leak, text)
		}
	}
}

// TestE2ERedteam6PatchSubjectFolded: found by the red team. git format-patch
// folds a subject longer than 78 columns at a blank ("\n "), as RFC 5322
// allows: an Authorization header in a commit's subject, masked in the
// commit's JSON, reached the model in the .patch with its token on the next
// line, which no pattern matched.
func TestE2ERedteam6PatchSubjectFolded(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6fold", false)
	s := &giteaSetup{g: g}
	var commit struct{ Commit struct{ SHA string } }
	files := []map[string]string{{"operation": "create", "path": "ci.txt", "content": base64.StdEncoding.EncodeToString([]byte("ci\n"))}}
	const hexToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	msg := "Deploy with the header Authorization: token " + hexToken + " for the staging machine"
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": msg, "files": files}, http.StatusCreated, &commit); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + commit.Commit.SHA + ".patch"})
	text := str(get(res, "data"))
	if !strings.Contains(text, "ci.txt") {
		t.Fatalf("the commit's .patch: %.800s", text)
	}
	if strings.Contains(text, hexToken[:12]) {
		t.Errorf("the commit's .patch holds the token: %.800s", text)
	}
}

// TestE2ERedteam6ActivityCut: found by the red team. Gitea records a comment
// in the activity feed cut to 200 columns with an ellipsis, keeping a last
// word of 15 characters or more: a GitHub token at the cut, masked in the
// comment, reached the model through the feed as its first 19 characters,
// too short for the github pattern.
func TestE2ERedteam6ActivityCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6cut", false)
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "deploy"}, http.StatusCreated, &issue)
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue.Number), map[string]any{"body": strings.Repeat("x", 170) + " GH=" + leakGHP}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	text := feedText(t, c, owner, name, "comment_issue", false)
	if strings.Contains(text, leakGHP[4:14]) {
		t.Errorf("the feed holds the token's start: %.1500s", text)
	}
}

// TestE2ERedteam6CommitRefEntities: found by the red team. A commit that
// references an issue gets a commit_ref comment in the issue's timeline whose
// body is HTML: the first line of the commit message with its quotes as
// entities (password=&#34;…&#34;). A password in it, masked in the commit's
// JSON, reached the model through issueGetCommentsAndTimeline, as did a
// Gitea token in {&#34;Authorization&#34;: &#34;token …&#34;}.
func TestE2ERedteam6CommitRefEntities(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6ref", false)
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "deploy"}, http.StatusCreated, &issue)
	const hexToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	files := []map[string]string{{"operation": "create", "path": "ref.txt", "content": base64.StdEncoding.EncodeToString([]byte("ref\n"))}}
	msg := fmt.Sprintf(`Refs #%d: password="correct horse battery" and {"Authorization": "token %s"}`, issue.Number, hexToken)
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": msg, "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	var text string
	for try := 0; try < 40 && !strings.Contains(text, "commit_ref"); try++ { // Gitea handles the push from a queue
		time.Sleep(250 * time.Millisecond)
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "issueGetCommentsAndTimeline", "arguments": map[string]any{"owner": owner, "repo": name, "index": issue.Number}})
		text = fmt.Sprint(get(res, "data"))
	}
	if !strings.Contains(text, "commit_ref") {
		t.Fatalf("the timeline holds no commit_ref: %.1500s", text)
	}
	for _, leak := range []string{"horse", hexToken[:12]} {
		if strings.Contains(text, leak) {
			t.Errorf("the timeline holds %q: %.1500s", leak, text)
		}
	}
}

// TestE2ERedteam6WikiSubURL: found by the red team. Gitea names a wiki page
// in sub_url and html_url by its title URL-escaped: a page titled with a
// password assignment, masked in title, reached the model in them as
// password%3A-…, which no pattern matched.
func TestE2ERedteam6WikiSubURL(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6wiki", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/wiki/new", map[string]any{"title": "staging password: hunter2hunter2", "content_base64": base64.StdEncoding.EncodeToString([]byte("x\n"))}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetWikiPages", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		text := fmt.Sprint(get(res, "data"))
		if !strings.Contains(text, "staging") {
			t.Fatalf("full=%v: no page: %.1000s", full, text)
		}
		if strings.Contains(text, "hunter2") {
			t.Errorf("full=%v: the pages hold the password: %.1000s", full, text)
		}
	}
}

// TestE2ERedteam6HunkHeaderCut: found by the red team. git writes the line
// a hunk is in after its @@ header, cut to 80 bytes without a mark: a
// GitHub token crossing the 80th column, masked in the file and in the
// diff's own lines, reached the model in a later hunk's header as its first
// characters, too short for the github pattern.
func TestE2ERedteam6HunkHeaderCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt6hunk", false)
	s := &giteaSetup{g: g}
	head := "export GH_CREDENTIAL_FOR_THE_STAGING_DEPLOYMENT_PIPELINE_JOB_NUMBER=" + leakGHP + "\n"
	body := head + strings.Repeat("  step\n", 12)
	var first struct{ Content struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/contents/deploy.sh", map[string]any{"branch": "main", "message": "deploy", "content": base64.StdEncoding.EncodeToString([]byte(body))}, http.StatusCreated, &first)
	var commit struct{ Commit struct{ SHA string } }
	s.call("alice", "PUT", "/repos/"+repo+"/contents/deploy.sh", map[string]any{"branch": "main", "message": "deploy more", "sha": first.Content.SHA, "content": base64.StdEncoding.EncodeToString([]byte(body + "  last\n"))}, http.StatusOK, &commit)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + commit.Commit.SHA + ".diff"})
	text := str(get(res, "data"))
	if !strings.Contains(text, "@@ -") {
		t.Fatalf("the commit's .diff: %.800s", text)
	}
	if strings.Contains(text, leakGHP[4:12]) {
		t.Errorf("the commit's .diff holds the token's start: %.800s", text)
	}
}
