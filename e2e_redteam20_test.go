package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam20JSONEscapes: found by the red team. Gitea records a push in
// the activity feed with its commits as JSON in the action's content, a JSON
// string (services/feed/notifier.go PushCommits, json.Marshal): the commit
// message's line ends are \n there and its < is \u003c, so an AWS key on a
// line of its own and a Stripe key in angle brackets, masked in the commit's
// JSON, reached the model through repoListActivityFeeds after a letter, not at
// a word's start as those patterns need. A file of JSON read as text kept its
// escapes too: a URL with escaped slashes (https:\/\/user:pass@host, as PHP
// writes JSON) and a key after \n in a string.
func TestE2ERedteam20JSONEscapes(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt20json", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	const aws, stripe, pass = "AKIAR2D2C3POLUKE0123", "sk_live_R2d2C3poLukeLeia0123", "hunter2hunter2"
	file := `{"deploy": {"url": "https:\/\/deploy:` + pass + `@example.com\/r.git", "notes": "rotated\n` + aws + `"}}` + "\n"
	files := []map[string]string{{"operation": "create", "path": "deploy.json", "content": base64.StdEncoding.EncodeToString([]byte(file))}}
	msg := "rotate the staging keys\n\n" + aws + "\nstripe <" + stripe + ">\n"
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": msg, "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	leaks := []string{aws[4:], stripe[8:], pass}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, full := range []bool{false, true} {
		text := feedText(t, c, owner, name, "rotate the staging keys", full)
		for _, leak := range leaks {
			if strings.Contains(text, leak) {
				t.Errorf("the feed (full %v) holds %q: %.1500s", full, leak[:4], text)
			}
		}
		if !strings.Contains(text, "\nAKIA[MASKED]\nstripe <sk_live_[MASKED]>") {
			t.Errorf("the feed (full %v) has no masked keys: %.1500s", full, text)
		}
	}
	for _, read := range []map[string]any{
		{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "deploy.json"}},
		{"operation": "repoGetRawFile", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "deploy.json"}},
	} {
		res, _ := c.callTool("gitea_call_operation", read)
		text := fmt.Sprint(get(res, "data"))
		if !strings.Contains(text, "deploy") {
			t.Fatalf("%s: %.1500s", read["operation"], text)
		}
		for _, leak := range []string{aws[4:], pass} {
			if strings.Contains(text, leak) {
				t.Errorf("%s holds %q: %.1500s", read["operation"], leak[:4], text)
			}
		}
		if !strings.Contains(text, "https://deploy:[MASKED]@example.com/r.git") || !strings.Contains(text, "rotated\nAKIA[MASKED]") {
			t.Errorf("%s has no masked secrets: %.1500s", read["operation"], text)
		}
	}
}

// TestE2ERedteam20UnicodeBlanks: found by the red team. The rules' assignments
// and headers are separated by ASCII blanks and punctuation: a password after
// a fullwidth colon (password：…, as a Chinese or Japanese input method types
// it) and a Gitea token after a no-break space (Authorization:\u00a0token …,
// as a Mac's Option-Space types it), in an issue's body, reached the model
// through issueGetIssue unmasked.
func TestE2ERedteam20UnicodeBlanks(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt20blank", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	const pass, hexToken = "hunter2hunter2", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	var issue struct{ Number int }
	body := "staging password\uff1a" + pass + "\ncurl -H 'Authorization:\u00a0token " + hexToken + "' https://example.com"
	if s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "staging access", "body": body}, http.StatusCreated, &issue); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "issueGetIssue", "arguments": map[string]any{"owner": owner, "repo": name, "index": issue.Number}})
	text := fmt.Sprint(get(res, "data.body"))
	if !strings.Contains(text, "staging password") {
		t.Fatalf("the issue: %v", res)
	}
	for _, leak := range []string{pass, hexToken[:12]} {
		if strings.Contains(text, leak) {
			t.Errorf("the issue's body holds %q: %s", leak[:4], text)
		}
	}
	if !strings.Contains(text, "password:[MASKED]") || !strings.Contains(text, "Authorization: token [MASKED]") {
		t.Errorf("the issue's body has no masked secrets: %s", text)
	}
}

// TestE2ERedteam20TokenUserPassword: found by the red team. Gitea takes a
// Basic user name for the token where the password is empty or x-oauth-basic
// (services/auth/basic.go), so https://TOKEN:x-oauth-basic@host clones; the
// URL credentials pattern masked only the password there, and the token of a
// clone URL in a file reached the model through repoGetContents.
func TestE2ERedteam20TokenUserPassword(t *testing.T) {
	const hexToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	text := committedContents(t, "rt20user", "clone.sh", "#!/bin/sh\ngit clone https://"+hexToken+":x-oauth-basic@gitea.example.com/ops/deploy.git\n", "git clone https://")
	if strings.Contains(text, hexToken[:12]) || !strings.Contains(text, "https://[MASKED]@gitea.example.com/ops/deploy.git") {
		t.Errorf("clone.sh holds the token: %s", text)
	}
}

// TestE2ERedteam20Netrc: found by the red team. A .netrc file (curl's, and
// git's for https remotes) separates its password from the word by a blank,
// which no assignment pattern read: a Gitea token in a committed .netrc
// reached the model through repoGetContents.
func TestE2ERedteam20Netrc(t *testing.T) {
	const hexToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	text := committedContents(t, "rt20netrc", "dotfiles/.netrc", "machine gitea.example.com\n  login alice\n  password "+hexToken+"\n", "machine gitea.example.com")
	if strings.Contains(text, hexToken[:12]) || !strings.Contains(text, "password [MASKED]") {
		t.Errorf(".netrc holds the token: %s", text)
	}
}

// committedContents commits a file at path holding content, as alice, to a
// new scratch repository named after prefix, and returns its content as
// repoGetContents delivers it under gitea-owner, which must show shown.
func committedContents(t *testing.T, prefix, path, content, shown string) string {
	t.Helper()
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, prefix, false)
	owner, name, _ := strings.Cut(repo, "/")
	files := []map[string]string{{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString([]byte(content))}}
	s := &giteaSetup{g: g}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "add " + path, "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": path}})
	text := str(get(res, "data.content"))
	if !strings.Contains(text, shown) {
		t.Fatalf("%s: %v", path, res)
	}
	return text
}

// feedText returns the activity feed of owner/name (compact, or full) once
// it shows want: Gitea records a push or a comment there from a queue.
func feedText(t *testing.T, c *client, owner, name, want string, full bool) string {
	t.Helper()
	var text string
	for try := 0; try < 40 && !strings.Contains(text, want); try++ {
		time.Sleep(250 * time.Millisecond)
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoListActivityFeeds", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		text = fmt.Sprint(get(res, "data"))
	}
	if !strings.Contains(text, want) {
		t.Fatalf("the feed holds no %q: %.1500s", want, text)
	}
	return text
}
