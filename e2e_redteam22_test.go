package main

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// TestE2ERedteam22DiffstatCut: found by the red team. git format-patch writes
// a diffstat whose names it cuts at their start to fit 72 columns, "..."
// before what is left (diff.c show_stats): a GitHub key at the start of a
// long file name, masked in the patch's headers, reached the model through
// the commit's .patch as "...d2C3poLukeLeiaHanSolo0123456789AbCd.…" in the
// diffstat, all but its first characters, which no pattern matched without
// the key's prefix.
func TestE2ERedteam22DiffstatCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt22stat", false)
	s := &giteaSetup{g: g}
	var commit struct{ Commit struct{ SHA string } }
	path := leakGHP + ".the-staging-deploy-key.txt" // 66 bytes: one more than the diffstat's names get
	files := []map[string]string{{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString([]byte("x\n"))}}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "add the key", "files": files}, http.StatusCreated, &commit); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + commit.Commit.SHA + ".patch"})
	text := str(get(res, "data"))
	if !strings.Contains(text, "Subject: [PATCH] add the key") || !strings.Contains(text, " | 1 +") {
		t.Fatalf("the commit's .patch: %.1200s", text)
	}
	if strings.Contains(text, leakGHP[12:]) {
		t.Errorf("the commit's .patch holds the key's end %q: %.1200s", leakGHP[12:20], text)
	}
	if !strings.Contains(text, "diff --git a/ghp_[MASKED]") {
		t.Errorf("the commit's .patch has no masked key: %.1200s", text)
	}
	// A pull request's .patch: format-patch too.
	pr := s.topicPR("alice", repo, "rotate", "rotate the key", leakGHP+".the-production-deploy-key.txt")
	if s.err != nil {
		t.Fatal(s.err)
	}
	res, _ = c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": fmt.Sprintf("/repos/%s/pulls/%d.patch", repo, pr.Number)})
	text = str(get(res, "data"))
	if !strings.Contains(text, "Subject: [PATCH] rotate the key") || strings.Contains(text, leakGHP[12:]) || !strings.Contains(text, "ghp_[MASKED].the-production-deploy-key.txt | 1 +") {
		t.Errorf("the pull request's .patch: %.1200s", text)
	}
}

// TestE2ERedteam22DescriptionCut: found by the red team. Gitea cuts an
// Actions variable's and secret's description to 4096 characters without a
// mark (models/actions/variable.go InsertVariable, models/secret/secret.go
// InsertEncryptedSecret: util.TruncateRunes): a GitHub key across the cut
// reached the model through getRepoVariable and repoListActionsSecrets as
// "ghp_R2d2C3poLukeLeia", too short for the whole key's pattern and not
// marked as cut.
func TestE2ERedteam22DescriptionCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt22desc", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	desc := strings.Repeat("é", 4096-20) + leakGHP // cut after 16 of the key's random characters
	if s.call("alice", "POST", "/repos/"+repo+"/actions/variables/DEPLOY_NOTES", map[string]any{"value": "see the wiki", "description": desc}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	if s.call("alice", "PUT", "/repos/"+repo+"/actions/secrets/DEPLOY_KEY", map[string]any{"data": "x", "description": desc}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, read := range []map[string]any{
		{"operation": "getRepoVariable", "arguments": map[string]any{"owner": owner, "repo": name, "variablename": "DEPLOY_NOTES"}},
		{"operation": "repoListActionsSecrets", "arguments": map[string]any{"owner": owner, "repo": name}},
	} {
		res, _ := c.callTool("gitea_call_operation", read)
		text := fmt.Sprint(get(res, "data"))
		if !strings.Contains(text, "éé") {
			t.Fatalf("%s: %.600s", read["operation"], text)
		}
		if strings.Contains(text, leakGHP[4:20]) || !strings.Contains(text, "éghp_[MASKED]...") {
			t.Errorf("%s holds the key's start: %s", read["operation"], text[max(0, len(text)-300):])
		}
	}
}

// TestE2ERedteam22Base64Values: found by the red team. A Kubernetes Secret
// holds its values in base64 (its data), and a Docker config its registry
// credentials (auth: base64 of user:password): an AWS key pair and a GitHub
// key, committed so in a manifest, reached the model in base64 through
// repoGetContents and repoGetRawFile, which masking did not read; a
// kubeconfig in base64 as an Actions variable's data reached it through
// getRepoVariable.
func TestE2ERedteam22Base64Values(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt22b64", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	b64 := base64.StdEncoding.EncodeToString
	const aws, awsSecret = "AKIAR2D2C3POLUKE0123", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	docker := `{"auths":{"ghcr.io":{"auth":"` + b64([]byte("deploy:"+leakGHP)) + `"}}}`
	manifest := "apiVersion: v1\nkind: Secret\nmetadata:\n  name: registry\ntype: Opaque\ndata:\n" +
		"  .dockerconfigjson: " + b64([]byte(docker)) + "\n" +
		"  credentials: " + b64([]byte("[default]\naws_access_key_id = "+aws+"\naws_secret_access_key = "+awsSecret+"\n")) + "\n"
	files := []map[string]string{{"operation": "create", "path": "k8s/registry-secret.yaml", "content": b64([]byte(manifest))}}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "registry secret", "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, read := range []map[string]any{
		{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "k8s/registry-secret.yaml"}},
		{"operation": "repoGetRawFile", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "k8s/registry-secret.yaml"}},
	} {
		res, _ := c.callTool("gitea_call_operation", read)
		text := fmt.Sprint(get(res, "data"))
		if !strings.Contains(text, "kind: Secret") {
			t.Fatalf("%s: %.1500s", read["operation"], text)
		}
		for _, leak := range []string{b64([]byte(docker))[:24], b64([]byte("[default]\naws_access_key_id"))[:24], "R2d2C3po", aws[4:], awsSecret[:12]} {
			if strings.Contains(text, leak) {
				t.Errorf("%s holds %q: %.1500s", read["operation"], leak, text)
			}
		}
		if !strings.Contains(text, `"auth":"deploy:[MASKED]"`) || !strings.Contains(text, "aws_access_key_id = AKIA[MASKED]") {
			t.Errorf("%s has no masked secrets: %.1500s", read["operation"], text)
		}
	}
	// A kubeconfig in base64 as an Actions variable's data, whole.
	kube := "apiVersion: v1\nusers:\n- name: ci\n  user:\n    token: " + leakGHP + "\n"
	if s.call("alice", "POST", "/repos/"+repo+"/actions/variables/KUBECONFIG", map[string]any{"value": b64([]byte(kube))}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "getRepoVariable", "arguments": map[string]any{"owner": owner, "repo": name, "variablename": "KUBECONFIG"}})
	if text := fmt.Sprint(get(res, "data.data")); strings.Contains(text, b64([]byte(kube))[:24]) || text != "apiVersion: v1\nusers:\n- name: ci\n  user:\n    token: [MASKED]\n" {
		t.Errorf("getRepoVariable: %v", res)
	}
}

// TestE2ERedteam22NestedURL: found by the red team. A URL inside another's
// query is URL-escaped, its slashes %2F and its colon %3A: a Slack webhook's
// address and a Discord webhook's token so, in a committed file, reached the
// model through repoGetContents, read URL-escaped only in a text without
// blanks (a URL, a path).
func TestE2ERedteam22NestedURL(t *testing.T) {
	const slack, discord = "T00000000%2FB00000000%2FXXXXXXXXXXXXXXXXXXXXXXXX", "Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB-AuIoPxVnMlKjHgFdSa"
	text := committedContents(t, "rt22url", "alerts.env",
		"# the on-call channel, through the relay\nALERT_URL=\"https://relay.example.com/forward?to=https%3A%2F%2Fhooks.slack.com%2Fservices%2F"+slack+"\"\n"+
			"DEPLOY_HOOK=\"https://relay.example.com/forward?to=https%3A%2F%2Fdiscord.com%2Fapi%2Fwebhooks%2F1234567890123456789%2F"+discord+"\"\n", "ALERT_URL=")
	if strings.Contains(text, "XXXXXXXXXXXXXXXX") || strings.Contains(text, discord[:16]) {
		t.Errorf("alerts.env holds a webhook's secret: %s", text)
	}
	if !strings.Contains(text, "hooks.slack.com/services/[MASKED]") || !strings.Contains(text, "discord.com/api/webhooks/1234567890123456789/[MASKED]") {
		t.Errorf("alerts.env has no masked webhooks: %s", text)
	}
}

// TestE2ERedteam22TokenCut: found by the red team. Gitea keeps a comment in
// the activity feed cut to 200 columns with "…" after it
// (services/feed/notifier.go CreateIssueComment): the server's own token,
// pasted in a comment, redacted in the comment, reached the model through
// repoListActivityFeeds as its first 31 characters, which exact redaction
// did not find and no pattern reads (a Gitea token is masked by context
// only).
func TestE2ERedteam22TokenCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt22tok", false)
	s := &giteaSetup{g: g}
	var issue struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "ci access"}, http.StatusCreated, &issue)
	tok := g.Tokens["alice"]
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", repo, issue.Number), map[string]any{"body": strings.Repeat("x", 165) + " " + tok + " is the one the bot uses"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	text := feedText(t, c, owner, name, "comment_issue", true)
	if strings.Contains(text, tok[:20]) || !strings.Contains(text, " [REDACTED]…") {
		shown := text[max(strings.Index(text, "content:1|x"), 0):]
		for n := len(tok); n >= 8; n-- { // the test prints no part of a token
			shown = strings.ReplaceAll(shown, tok[:n], fmt.Sprintf("<the token's first %d>", n))
		}
		t.Errorf("the feed holds the token's start: %.400s", shown)
	}
}

// TestE2ERedteam22TeamDescriptionCut: found by the red team. Gitea cuts a
// team's description to 255 bytes when the team is edited, without a mark
// and inside a character if one is there (services/org/team.go UpdateTeam),
// though it admits 255 characters: a GitHub key after 120 "é" reached the
// model through orgGetTeam as "ghp_R2d2C3poLuk", too short for the whole
// key's pattern and not marked as cut.
func TestE2ERedteam22TeamDescriptionCut(t *testing.T) {
	g := needGitea(t)
	org := "rt22t-" + strings.ToLower(rand.Text()[:8])
	s := &giteaSetup{g: g}
	var team struct{ ID int64 }
	s.call("alice", "POST", "/orgs", map[string]string{"username": org}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/orgs/"+org, nil) })
	s.call("alice", "POST", "/orgs/"+org+"/teams", map[string]any{"name": "deploy", "permission": "read", "units": []string{"repo.code"}}, http.StatusCreated, &team)
	s.call("alice", "PATCH", fmt.Sprintf("/teams/%d", team.ID), map[string]any{"name": "deploy", "description": strings.Repeat("é", 120) + leakGHP[:20]}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "orgGetTeam", "arguments": map[string]any{"id": team.ID}})
	text := str(get(res, "data.description"))
	if !strings.Contains(text, "éé") || strings.Contains(text, leakGHP[4:12]) {
		t.Errorf("the team's description: %q", text)
	}
}

// TestE2ERedteam22YAMLBlock: found by the red team. YAML writes a value
// that needs no quotes on the lines after its key as a block (key: |, key:
// >-), as Helm charts' values often hold a password: a password so, in a
// committed values.yaml, reached the model through repoGetContents, the
// assignment's value on the key's line being only "|-". The block is read
// with its first line on the key's.
func TestE2ERedteam22YAMLBlock(t *testing.T) {
	text := committedContents(t, "rt22yaml", "charts/app/values.yaml",
		"db:\n  host: db.internal\n  password: |-\n    correct-horse-battery-staple\n  api_key: >\n    9f8e7d6c5b4a39281706f5e4d3c2b1a0\n", "host: db.internal")
	if strings.Contains(text, "correct-horse") || strings.Contains(text, "9f8e7d6c5b4a") {
		t.Errorf("values.yaml holds a secret: %s", text)
	}
	if !strings.Contains(text, "  password: [MASKED]\n") || !strings.Contains(text, "  api_key: [MASKED]\n") {
		t.Errorf("values.yaml has no masked secrets: %s", text)
	}
}

// TestE2ERedteam22Base64Decoded: found by the red team. A script that
// decodes a value where it is used (echo … | base64 -d, b64decode("…"))
// holds it in base64 after a blank or a parenthesis, not after ':' or '=':
// a GitHub key so, in a committed deploy script, reached the model through
// repoGetContents.
func TestE2ERedteam22Base64Decoded(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(leakGHP))
	text := committedContents(t, "rt22b64d", "deploy.sh",
		"#!/bin/sh\nexport GH_TOKEN=$(echo "+b64+" | base64 -d)\npython3 -c 'import base64; print(base64.b64decode(\""+b64+"\"))'\n", "#!/bin/sh")
	if strings.Contains(text, b64[:24]) || strings.Count(text, "ghp_[MASKED]") != 2 {
		t.Errorf("deploy.sh: %s", text)
	}
}
