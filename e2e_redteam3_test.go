package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// hostileOpenAPI returns the embedded document with edit applied to its
// decoded paths, written to a file for GITEA_OPENAPI.
func hostileOpenAPI(t *testing.T, edit func(paths map[string]any)) string {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(embeddedOpenAPI, &doc); err != nil {
		t.Fatal(err)
	}
	edit(doc["paths"].(map[string]any))
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return file
}

// TestE2EOpenAPIReusedID: a document (live or a file) that gives an
// operationId of Gitea 1.26.0's document another route must not carry that
// id's grant to the route. Here issueCreateIssue (gitea.issue.create, which
// gitea-issue-manager allows) names PUT /user/starred/{owner}/{repo}
// (gitea.user.settings, which it does not): no star may be made.
func TestE2EOpenAPIReusedID(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	file := hostileOpenAPI(t, func(paths map[string]any) {
		star := paths["/user/starred/{owner}/{repo}"].(map[string]any)["put"].(map[string]any)
		issue := paths["/repos/{owner}/{repo}/issues"].(map[string]any)["post"].(map[string]any)
		star["operationId"], issue["operationId"] = issue["operationId"], star["operationId"]
	})
	starred := func() bool {
		status, _, _, err := g.api("alice", "GET", "/user/starred/"+g.Repo, nil)
		if err != nil {
			t.Fatal(err)
		}
		return status == 204
	}
	if starred() {
		t.Fatal("alice has starred the fixture already")
	}
	t.Cleanup(func() { g.api("alice", "DELETE", "/user/starred/"+g.Repo, nil) })
	c := startClient(t, "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_OPENAPI="+file,
		"GITEA_MCP_PROFILE=gitea-issue-manager", "GITEA_MCP_TOOLS=issueCreateIssue")
	c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"issueCreateIssue","arguments":{"owner":"` + owner + `","repo":"` + repo + `"}}}`)
	c.in.Close()
	for range c.lines { // until the server has answered and closed its output
	}
	c.close() // and exited: its standard error is then whole
	if starred() {
		t.Errorf("the relabelled operation was sent; stderr:\n%s", c.stderr.String())
	}
	if !strings.Contains(c.stderr.String(), `operation "issueCreateIssue" differs`) {
		t.Errorf("want the start refused naming issueCreateIssue; stderr:\n%s\ntranscript:\n%s", c.stderr.String(), c.transcript.String())
	}
}

// TestE2EOpenAPIIdentityParams: a document (live or a file) that gives an
// allowed operation a query parameter sudo, token or access_token must not
// let the arguments change who acts: alice (an administrator) asking for
// her own user with ?sudo=bob would be answered as bob while the envelope
// says alice.
func TestE2EOpenAPIIdentityParams(t *testing.T) {
	g := needGitea(t)
	for _, name := range []string{"sudo", "Sudo", "access_token", "token"} {
		t.Run(name, func(t *testing.T) {
			file := hostileOpenAPI(t, func(paths map[string]any) {
				op := paths["/user"].(map[string]any)["get"].(map[string]any)
				op["parameters"] = []any{map[string]any{"name": name, "in": "query", "type": "string"}}
			})
			value := "bob"
			if name != "sudo" && name != "Sudo" {
				value = g.Tokens["bob"]
			}
			c := startClient(t, "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_OPENAPI="+file,
				"GITEA_MCP_PROFILE=gitea-owner", "GITEA_MCP_TOOLS=userGetCurrent")
			c.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)
			c.send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"userGetCurrent","arguments":{"` + name + `":"` + value + `"}}}`)
			c.in.Close()
			for range c.lines { // until the server has answered and closed its output
			}
			c.close() // and exited: its standard error is then whole
			if strings.Contains(c.transcript.String(), `\"login\":\"bob\"`) {
				t.Errorf("the request acted as bob")
			}
			if !strings.Contains(c.stderr.String(), "query parameter") {
				t.Errorf("want the start refused for the query parameter; stderr:\n%s", c.stderr.String())
			}
		})
	}
}
