package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// chatHooks are webhook targets of Gitea's chat hook types whose address is
// the credential (anyone holding it posts to the channel), with that
// credential.
var chatHooks = []struct{ typ, url, secret string }{
	{"discord", "https://discord.com/api/webhooks/1234567890123456789/", "Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB-AuIoPxVnMlKjHgFdSa_QwErTyUiOp1234567"},
	{"telegram", "https://api.telegram.org/bot", "7012345678:AAHd9sKq3LmN8pR2tV5wX7yZ1bC4eF6gH0j"},
	{"feishu", "https://open.feishu.cn/open-apis/bot/v2/hook/", "5f0c7a2e-8b1d-4c3f-9e6a-2d7b1c0e9f84"},
	{"wechatwork", "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=", "693a91f6-7xxx-4bc4-97a0-0ec2sifa5aaa"},
	{"msteams", "https://contoso.webhook.office.com/webhookb2/", "7b3c1d2e-0f4a-4b5c-8d6e-1f2a3b4c5d6e@9c8b7a6f-5e4d-4c3b-2a1f-0e9d8c7b6a5f/IncomingWebhook/4f1e2d3c4b5a69788796a5b4c3d2e1f0/6e5d4c3b-2a1f-4e0d-9c8b-7a6f5e4d3c2b"},
}

// TestE2ERedteam11ChatHookURL: found by the red team. A repository's
// webhooks list their target address in config.url; for Gitea's chat hook
// types the address holds the credential that posts to the channel (a
// Discord webhook's token, a Telegram bot token, a Feishu, WeChat Work or
// Teams hook key). The Slack hook's address and every hook's
// authorization_header were masked; these reached the model whole through
// repoListHooks and repoGetHook.
func TestE2ERedteam11ChatHookURL(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt11hooks", false)
	s := &giteaSetup{g: g}
	var ids []int
	for _, h := range chatHooks {
		var hook struct{ ID int }
		s.call("alice", "POST", "/repos/"+repo+"/hooks", map[string]any{"type": h.typ, "active": false, "events": []string{"push"},
			"config": map[string]string{"url": h.url + h.secret + map[bool]string{true: "/sendMessage?chat_id=-100123"}[h.typ == "telegram"], "content_type": "json"}}, http.StatusCreated, &hook)
		ids = append(ids, hook.ID)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoListHooks", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		text := fmt.Sprint(get(res, "data"))
		for _, h := range chatHooks {
			if !strings.Contains(text, h.url) {
				t.Errorf("full=%v: the list has no %s hook: %.300s", full, h.typ, text)
			}
			if strings.Contains(text, h.secret[len(h.secret)-12:]) {
				t.Errorf("full=%v: the %s hook's credential reached the model", full, h.typ)
			}
		}
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetHook", "arguments": map[string]any{"owner": owner, "repo": name, "id": ids[0]}})
	if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "discord") || strings.Contains(text, chatHooks[0].secret[len(chatHooks[0].secret)-12:]) {
		t.Errorf("repoGetHook: %.800s", text)
	}
}

// TestE2ERedteam11NamedMembers: found by the red team. Gitea answers some
// stored text as JSON whose member names come from that text: an Actions
// variable is {"name": "DEPLOY_TOKEN", "data": "…"}, and an issue form's
// attributes are the YAML file's own keys. An assignment masked in a file
// (DEPLOY_TOKEN=…, api_key: …) reached the model as such a name and value,
// which no pattern read together: a Gitea token through
// getRepoVariablesList, a key through repoGetIssueTemplates.
func TestE2ERedteam11NamedMembers(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt11named", false)
	s := &giteaSetup{g: g}
	const hexToken = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	const apiKey = "Zx9Qw8Er7Ty6Ui5Op4As"
	form := "name: Deploy\nabout: Ask for a deploy\nbody:\n  - type: input\n    id: target\n    attributes:\n      label: Target\n      api_key: " + apiKey + "\n"
	files := []map[string]string{{"operation": "create", "path": ".gitea/ISSUE_TEMPLATE/deploy.yaml", "content": base64.StdEncoding.EncodeToString([]byte(form))}}
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "issue form", "files": files}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/actions/variables/DEPLOY_TOKEN", map[string]any{"value": hexToken}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/actions/variables/REGION", map[string]any{"value": "eu-central-1"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "getRepoVariablesList", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "DEPLOY_TOKEN") || !strings.Contains(text, "eu-central-1") || strings.Contains(text, hexToken[:12]) {
			t.Errorf("full=%v: the variables: %.600s", full, text)
		}
		res, _ = c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetIssueTemplates", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "api_key") || strings.Contains(text, apiKey[:10]) {
			t.Errorf("full=%v: the issue templates: %.600s", full, text)
		}
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": ".gitea/ISSUE_TEMPLATE/deploy.yaml"}})
	if text := str(get(res, "data.content")); !strings.Contains(text, "api_key: [MASKED]") {
		t.Errorf("control: the form's file: %q", text)
	}
}

// TestE2ERedteam11SymlinkTargetCut: found by the red team. Gitea gives a
// symbolic link's target in its contents as the first 1024 bytes of the
// link's blob, without a mark: a GitHub token crossing the cut, masked in
// the commit's .diff and in the link's /raw, reached the model through
// repoGetContents and repoGetContentsExt as ghp_ and its first 16
// characters, too short for the github pattern.
func TestE2ERedteam11SymlinkTargetCut(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt11link", false)
	owner, name, _ := strings.Cut(repo, "/")
	dir, git := gitClone(t, g, "alice", repo+"")
	if err := os.Symlink(strings.Repeat("x", 1000)+"/GH="+leakGHP, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	git("add", "link")
	git("commit", "-q", "-m", "a link")
	git("push", "-q", "origin", "main")
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "link"}, "full": full})
		if got := str(get(res, "data.target")); !strings.HasSuffix(got, "/GH=ghp_[MASKED]...") {
			t.Errorf("full=%v: the link's target ends %q", full, got[max(0, len(got)-40):])
		}
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetContentsExt", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": "link"}})
	if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "symlink") || strings.Contains(text, leakGHP[4:14]) {
		t.Errorf("repoGetContentsExt: %.300s", text[max(0, len(text)-300):])
	}
}

// TestE2ERedteam11QuotedPath: found by the red team. git writes a path
// that holds a control character in C quotes in a diff's headers and a
// patch's diffstat, DEL as \177: a GitHub token in a file's name split by a
// DEL, masked in the commit's JSON (its hidden character removed), reached
// the model through the commit's .diff and .patch as ghp_R2d2C3po\177…,
// which no pattern matched.
func TestE2ERedteam11QuotedPath(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt11quoted", false)
	dir, git := gitClone(t, g, "alice", repo+"")
	if err := os.WriteFile(filepath.Join(dir, "GH="+leakGHP[:12]+"\x7f"+leakGHP[12:]+".txt"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "a file")
	git("push", "-q", "origin", "main")
	sha := git("rev-parse", "HEAD")
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, kind := range []string{"", ".diff", ".patch"} {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + sha + kind})
		if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "GH=ghp_[MASKED]") || strings.Contains(text, leakGHP[12:24]) {
			t.Errorf("the commit%s: %.600s", kind, text)
		}
	}
}

// TestE2ERedteam11WikiTitleDashes: found by the red team. Gitea titles a
// wiki page pushed as a file by the file's name, its dashes shown as
// blanks: a GitLab token in the name of a page pushed to the wiki, masked
// in its html_url, reached the model through repoGetWikiPages and
// repoGetWikiPage as "glpat xYz…" in its title, which no pattern matched.
func TestE2ERedteam11WikiTitleDashes(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt11wiki", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	if s.call("alice", "POST", "/repos/"+repo+"/wiki/new", map[string]any{"title": "Home", "content_base64": "aGkK"}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	dir, git := gitClone(t, g, "alice", repo+".wiki")
	const token = "glpat-xYz123AbC456dEf789gH"
	if err := os.WriteFile(filepath.Join(dir, "staging-"+token+".md"), []byte("x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "a page")
	git("push", "-q", "origin", "HEAD")
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetWikiPages", "arguments": map[string]any{"owner": owner, "repo": name}, "full": full})
		if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "title:Home") || !strings.Contains(text, "staging") || strings.Contains(text, token[6:16]) {
			t.Errorf("full=%v: the pages: %.800s", full, text)
		}
		res, _ = c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetWikiPage", "arguments": map[string]any{"owner": owner, "repo": name, "pageName": "staging-" + token}, "full": full})
		if text := fmt.Sprint(get(res, "data")); !strings.Contains(text, "staging") || strings.Contains(text, token[6:16]) {
			t.Errorf("full=%v: the page: %.800s", full, text)
		}
	}
}
