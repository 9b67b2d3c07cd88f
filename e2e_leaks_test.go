package main

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"
	"unicode/utf16"
)

// TestE2EUnreadableForms: found by review. Against Gitea, a file holding the
// server's own token and a GitHub token, which repoGetContents delivers
// redacted and masked, reached the model compressed: in a commit's .patch
// (a GIT binary patch, base85 of zlib, for a file with a zero byte), in the
// repository's zip archive, and as UTF-16 text (kept as base64). Now none of
// the three is delivered in a form the passes cannot read.
func TestE2EUnreadableForms(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "unreadable", false)
	token := g.Tokens["alice"] // the server's own token
	secret := "GH_PAT=" + leakGHP + "\nGITEA=" + token + "\n"
	var utf16le []byte
	for _, u := range utf16.Encode([]rune("\ufeff" + secret)) {
		utf16le = append(utf16le, byte(u), byte(u>>8))
	}
	files := []map[string]string{
		{"operation": "create", "path": "deploy/env.bin", "content": base64.StdEncoding.EncodeToString([]byte(secret + "\x00"))},
		{"operation": "create", "path": "deploy/env.txt", "content": base64.StdEncoding.EncodeToString([]byte(secret))},
		{"operation": "create", "path": "deploy/win.ps1", "content": base64.StdEncoding.EncodeToString(utf16le)},
	}
	s := &giteaSetup{g: g}
	var commit struct{ Commit struct{ SHA string } }
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "deploy config", "files": files}, http.StatusCreated, &commit); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	owner, name, _ := strings.Cut(repo, "/")
	contents := func(path string) map[string]any {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetContents", "arguments": map[string]any{"owner": owner, "repo": name, "filepath": path}})
		return res
	}
	if got := str(get(contents("deploy/env.txt"), "data.content")); got != "GH_PAT=ghp_[MASKED]\nGITEA=[REDACTED]\n" {
		t.Errorf("control: deploy/env.txt is %q", got)
	}
	if res := contents("deploy/win.ps1"); get(res, "data.content") != nil || str(get(res, "file_content.omitted_unreadable")) != "1" {
		t.Errorf("UTF-16 deploy/win.ps1: %v", res)
	}
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/git/commits/" + commit.Commit.SHA + ".patch"})
	if patch := str(get(res, "data")); !strings.Contains(patch, "GIT binary patch\nliteral ") || !strings.Contains(patch, "withheld: redaction and masking cannot read it") {
		t.Errorf("the commit's .patch: %.1500s", patch)
	}
	res, isErr := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/archive/main.zip"})
	if !isErr || str(get(res, "error.kind")) != "unreadable_content" || get(res, "data") != nil {
		t.Errorf("the zip archive: %.400v", res)
	}
}

// TestE2EWikiSidebarFooter: found by review. Gitea 1.26 answers a wiki page
// with the base64 of its _Sidebar and _Footer pages in sidebar and footer,
// which reached the model undecoded, the server's own token and a GitHub
// token in them. Now they are file text, redacted and masked.
func TestE2EWikiSidebarFooter(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "wikileak", false)
	owner, name, _ := strings.Cut(repo, "/")
	secret := "GITEA=" + g.Tokens["alice"] + "\nGH=" + leakGHP + "\n"
	s := &giteaSetup{g: g}
	for _, page := range []string{"Home", "_Sidebar", "_Footer"} {
		s.call("alice", "POST", "/repos/"+repo+"/wiki/new", map[string]any{"title": page, "content_base64": base64.StdEncoding.EncodeToString([]byte(secret))}, http.StatusCreated, nil)
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	for _, full := range []bool{false, true} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetWikiPage", "arguments": map[string]any{"owner": owner, "repo": name, "pageName": "Home"}, "full": full})
		for _, member := range []string{"content", "sidebar", "footer"} {
			if got := str(get(res, "data."+member)); got != "GITEA=[REDACTED]\nGH=ghp_[MASKED]\n" {
				t.Errorf("full=%v: %s is %q", full, member, got)
			}
		}
	}
}
