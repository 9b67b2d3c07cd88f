package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam25DiffReadings: found by the red team. The readings of file
// text that show a secret only so read (a YAML block scalar's first line
// read on its key's line, JSON returned as text read with its escapes
// decoded) were not made of the diff of that file: git writes each line
// after '+', '-' or a space, the block's key and its value on lines of
// their own, and the diff is no JSON text. Before the fix carol, under
// gitea-reviewer, read the values.yaml and notes.json of bob's pull request
// masked through repoGetContents, and whole in its .diff and .patch: the
// old password on a '-' line, the new one on a '+' line, and the AWS key
// after a \n.
func TestE2ERedteam25DiffReadings(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt25diff", false)
	s := &giteaSetup{g: g}
	const oldPass, newPass, awsKey = "Tr0ub4dor-and-3-staging", "Corr3ct-horse-battery-prod", "AKIAR2D2C3POLUKE0123"
	values := func(pass string) string {
		return "postgresql:\n  auth:\n    username: app\n    password: |-\n      " + pass + "\n  port: 5432\n"
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "add the chart's values",
		"files": []map[string]string{{"operation": "create", "path": "values.yaml", "content": b64(values(oldPass))}}}, http.StatusCreated, nil)
	var file struct{ SHA string }
	s.call("bob", "GET", "/repos/"+repo+"/contents/values.yaml", nil, http.StatusOK, &file)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "rotate", "message": "rotate the credentials",
		"files": []map[string]string{
			{"operation": "update", "path": "values.yaml", "sha": file.SHA, "content": b64(values(newPass))},
			{"operation": "create", "path": "notes.json", "content": b64(`{"rotated": "the old key is revoked; the new one:\n` + awsKey + `"}` + "\n")},
		}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "rotate", "base": "main", "title": "rotate the credentials"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for _, path := range []string{"values.yaml", "notes.json"} { // the file itself is masked
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/contents/" + path, "query": map[string]any{"ref": "rotate"}})
		if text := str(get(res, "data.content")); !strings.Contains(text, "[MASKED]") || strings.Contains(text, newPass) || strings.Contains(text, awsKey[4:]) {
			t.Fatalf("%s on rotate: %.600s", path, text)
		}
	}
	for _, kind := range []string{"diff", "patch"} {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": fmt.Sprintf("/repos/%s/pulls/%d.%s", repo, pr.Number, kind)})
		text := str(get(res, "data"))
		if !strings.Contains(text, "values.yaml") || !strings.Contains(text, "notes.json") {
			t.Fatalf("the pull request's .%s: %v", kind, res)
		}
		for _, secret := range []string{oldPass, newPass, awsKey[4:]} {
			if strings.Contains(text, secret) {
				t.Errorf("the pull request's .%s holds %q:\n%.1500s", kind, secret, text)
			}
		}
	}
}

// TestE2ERedteam25SignedURL: found by the red team. An address signed with
// sig= in its query is its own credential: a Teams channel's incoming
// webhook is now a Power Automate workflow's address (Microsoft retired the
// webhook.office.com connectors), whose sig lets anyone post to the
// channel, an Azure storage link's SAS sig lets anyone read the blob, and
// Gitea's own artifact link (routers/api/v1/repo/action.go, ?sig=...&expires=)
// lets anyone download it. Gitea lists the first in a hook's config.url
// (repoListHooks) and keeps the others where they are written (a commit
// status's target_url and description); before the fix each reached the
// model whole.
func TestE2ERedteam25SignedURL(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt25sig", false)
	s := &giteaSetup{g: g}
	const teamsSig, sasSig = "Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB-AuIoPxVnMl", "r2d2C3poLukeLeia%2BHanSolo0123%3D"
	teams := "https://default0a1b2c3d4e5f60718293a4b5c6d7e8.f9.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/8f4c2a1b9d7e4f3a8b6c5d4e3f2a1b0c/triggers/manual/paths/invoke?api-version=1&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + teamsSig
	sas := "https://ci0123.blob.core.windows.net/logs/build-41.txt?sv=2022-11-02&ss=b&srt=o&sp=r&se=2026-12-31T00:00:00Z&sig=" + sasSig
	s.call("alice", "POST", "/repos/"+repo+"/hooks", map[string]any{"type": "msteams", "active": true, "events": []string{"push"},
		"config": map[string]string{"url": teams, "content_type": "json"}}, http.StatusCreated, nil)
	var branch struct{ Commit struct{ ID string } }
	s.call("alice", "GET", "/repos/"+repo+"/branches/main", nil, http.StatusOK, &branch)
	s.call("bob", "POST", "/repos/"+repo+"/statuses/"+branch.Commit.ID, map[string]string{"state": "failure", "context": "ci/build",
		"target_url": sas, "description": "the log: " + sas}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	for _, tc := range []struct{ login, profile, path, sig string }{
		{"alice", "gitea-owner", "/repos/" + repo + "/hooks", teamsSig},
		{"carol", "gitea-reviewer", "/repos/" + repo + "/statuses/" + branch.Commit.ID, sasSig},
	} {
		c := e2eClient(t, g, tc.login, "GITEA_MCP_PROFILE="+tc.profile)
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": tc.path})
		text := str(get(res, "data"))
		if !strings.Contains(text, "sig=") {
			t.Fatalf("%s: %v", tc.path, res)
		}
		if strings.Contains(text, tc.sig[:12]) {
			t.Errorf("%s holds the signature %q: %.1000s", tc.path, tc.sig, text)
		}
	}
}

// TestE2ERedteam25ChatHookOnOwnHost: found by the red team. A Mattermost
// or Rocket.Chat incoming webhook takes a Slack hook's payload, so a Gitea
// slack hook posts to it, at the chat's own host: the address's hook id
// (Mattermost) or token (Rocket.Chat) is the credential, and Gitea lists it
// in the hook's config.url (repoListHooks). Before the fix both reached the
// model whole, as the chat_webhook rule knew only the chat services' own
// hosts.
func TestE2ERedteam25ChatHookOnOwnHost(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt25chat", false)
	s := &giteaSetup{g: g}
	const mmID, rcToken = "bywsw8zt5jgpte3nm65qjiru6h", "vC2GLQQ8ixg6cDvDe4D3ChmsJ5zZ7dhGfmEqtW8GKaPEzNDt"
	for _, url := range []string{"https://chat.example.com/hooks/" + mmID, "https://rocket.example.com/hooks/5c7hHjLfdyiSRSKXZ/" + rcToken} {
		s.call("alice", "POST", "/repos/"+repo+"/hooks", map[string]any{"type": "slack", "active": true, "events": []string{"push"},
			"config": map[string]string{"url": url, "content_type": "json", "channel": "#builds"}}, http.StatusCreated, nil)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/hooks"})
	text := str(get(res, "data"))
	if !strings.Contains(text, "chat.example.com/hooks/") || !strings.Contains(text, "rocket.example.com/hooks/") {
		t.Fatalf("the hooks: %v", res)
	}
	for _, secret := range []string{mmID, rcToken} {
		if strings.Contains(text, secret[:12]) {
			t.Errorf("the hooks hold %q: %.1000s", secret, text)
		}
	}
}

// TestE2ERedteam25NamedEntities: found by the red team. An HTML file (a
// site or documentation built into a repository) writes quotes and blanks
// as named entities: DB_PASSWORD=&quot;...&quot; and Authorization:
// token&nbsp;... hold a secret only so read. The HTML reading decoded only
// where a text had a numeric entity (&#34;, as Gitea's commit_ref comments
// hold), so before the fix carol, under gitea-reviewer, read both secrets
// whole through repoGetRawFile and repoGetContents.
func TestE2ERedteam25NamedEntities(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt25html", false)
	s := &giteaSetup{g: g}
	const pw, tok = "Tr0ub4dor-and-3-staging", "0123456789abcdef0123456789abcdef01234567"
	page := "<h2>Setup</h2>\n<pre><code>export DB_PASSWORD=&quot;" + pw + "&quot;\ncurl -H &quot;Authorization: token&nbsp;" + tok + "&quot; https://git.example.com/api/v1/user\n</code></pre>\n"
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "build the docs",
		"files": []map[string]string{{"operation": "create", "path": "site/setup.html", "content": base64.StdEncoding.EncodeToString([]byte(page))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for _, tc := range []struct{ path, field string }{{"/repos/" + repo + "/raw/site/setup.html", "data"}, {"/repos/" + repo + "/contents/site/setup.html", "data.content"}} {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": tc.path})
		text := str(get(res, tc.field))
		if !strings.Contains(text, "<h2>Setup</h2>") {
			t.Fatalf("%s: %v", tc.path, res)
		}
		if strings.Contains(text, pw) || strings.Contains(text, tok) {
			t.Errorf("%s holds a secret: %s", tc.path, text)
		}
	}
}
