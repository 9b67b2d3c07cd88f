package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// e2eClient starts the built server against the test Gitea as login, with
// extra environment, and checks at the end that no test user's token
// appears in anything the server printed.
func e2eClient(t *testing.T, g *giteaInstance, login string, env ...string) *client {
	t.Helper()
	for _, def := range []string{"GITEA_MCP_PROFILE=gitea-owner", "GITEA_MCP_TOOLS=repoGet,repoGetContents,issueListIssues,issueGetIssue,issueCreateIssue"} {
		name, _, _ := strings.Cut(def, "=")
		if !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, name+"=") }) {
			env = append(env, def)
		}
	}
	c := startClient(t, append([]string{"GITEA_URL=" + g.URL, "GITEA_TOKEN=" + g.Tokens[login]}, env...)...)
	t.Cleanup(func() {
		out := c.transcript.String()
		for who, tok := range g.Tokens {
			if strings.Contains(out, tok) {
				t.Errorf("the token of %s appears in the server's output", who)
			}
		}
	})
	c.initialize("2025-11-25")
	return c
}

// ownerRepo splits the fixture repository name.
func ownerRepo(g *giteaInstance) (string, string) {
	owner, repo, _ := strings.Cut(g.Repo, "/")
	return owner, repo
}

// get walks a decoded JSON value along a dotted path ("data.user.login").
func get(v any, path string) any {
	for _, k := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[k]
	}
	return v
}

// str formats a decoded JSON value for comparisons.
func str(v any) string { return fmt.Sprint(v) }

func TestE2EListingCursors(t *testing.T) {
	g := needGitea(t)
	c := e2eClient(t, g, "alice", "GITEA_MCP_TOOLS=all")
	seen := map[string]bool{}
	pages := 0
	var cursor any
	for {
		params := map[string]any{}
		if cursor != nil {
			params["cursor"] = cursor
		}
		r := c.call("tools/list", params)
		if r.Error != nil {
			t.Fatalf("tools/list: %v", r.Error.Message)
		}
		var res struct {
			Tools []struct {
				Name        string         `json:"name"`
				InputSchema map[string]any `json:"inputSchema"`
			} `json:"tools"`
			NextCursor *string `json:"nextCursor"`
		}
		if err := json.Unmarshal(r.Result, &res); err != nil {
			t.Fatal(err)
		}
		pages++
		for _, tool := range res.Tools {
			if seen[tool.Name] {
				t.Errorf("tool %s listed twice", tool.Name)
			}
			seen[tool.Name] = true
			if tool.InputSchema["type"] != "object" {
				t.Errorf("tool %s: inputSchema type %v", tool.Name, tool.InputSchema["type"])
			}
		}
		if res.NextCursor == nil {
			break
		}
		cursor = *res.NextCursor
	}
	// every operation, and every hand-written tool but gitea_activate_profile
	// (no runtime switching configured) and gitea_reconcile_already_landed_pr
	// (gitea-owner is not of the reconciler's shape)
	want := 471 + len(handwrittenTools()) + len(profileTools()) - 1 + len(workflowTools()) - 1
	if len(seen) != want || pages < 2 {
		t.Errorf("listed %d tools on %d pages, want %d on several", len(seen), pages, want)
	}
	if r := c.call("tools/list", map[string]any{"cursor": "bogus"}); r.Error == nil || r.Error.Code != codeInvalidParams {
		t.Errorf("bad cursor: got %+v, want -32602", r.Error)
	}
}

func TestE2EGeneratedAndRawTools(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	c := e2eClient(t, g, "alice")
	call := func(op string, args map[string]any) map[string]any {
		t.Helper()
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
		if isErr {
			t.Fatalf("%s: error result %v", op, res)
		}
		return res
	}
	for _, tc := range []struct {
		name       string
		tool       string
		args       map[string]any
		wantStatus string
		field      string // dotted path into the envelope
		want       string
	}{
		{"GET generated", "repoGet", map[string]any{"owner": owner, "repo": repo}, "200", "data.full_name", g.Repo},
		{"identity", "repoGet", map[string]any{"owner": owner, "repo": repo}, "200", "identity.login", "alice"},
		{"request path is relative", "repoGet", map[string]any{"owner": owner, "repo": repo}, "200", "request.path", "/repos/" + g.Repo},
		{"untrusted notice", "repoGet", map[string]any{"owner": owner, "repo": repo}, "200", "untrusted_content", untrustedNotice},
		{"POST generated", "issueCreateIssue", map[string]any{"owner": owner, "repo": repo, "body": map[string]any{"title": "from e2e"}}, "201", "data.title", "from e2e"},
		{"file path with slashes", "repoGetContents", map[string]any{"owner": owner, "repo": repo, "filepath": fixtureGuidePath}, "200", "data.content", fixtureGuide},
		{"raw tool, branch with a slash", "gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + g.Repo + "/branches/feature/x"}, "200", "data.commit.id", g.FeatureSHA},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, isErr := c.callTool(tc.tool, tc.args)
			if isErr {
				t.Fatalf("error result: %v", res)
			}
			if got := str(res["status"]); got != tc.wantStatus {
				t.Errorf("status %s, want %s", got, tc.wantStatus)
			}
			if got := str(get(res, tc.field)); got != tc.want {
				t.Errorf("%s = %q, want %q", tc.field, got, tc.want)
			}
		})
	}
	t.Run("PATCH, PUT, DELETE through find and call", func(t *testing.T) {
		found, _ := c.callTool("gitea_find_operations", map[string]any{"query": "edit an issue"})
		if !strings.Contains(str(get(found, "data.matches")), "issueEditIssue") {
			t.Fatalf("find did not offer issueEditIssue: %v", get(found, "data.matches"))
		}
		created := call("issueCreateIssue", map[string]any{"owner": owner, "repo": repo, "body": map[string]any{"title": "to edit"}})
		index := get(created, "data.number")
		edited := call("issueEditIssue", map[string]any{"owner": owner, "repo": repo, "index": index, "body": map[string]any{"title": "edited"}})
		if str(get(edited, "data.title")) != "edited" || str(edited["request"].(map[string]any)["method"]) != "PATCH" {
			t.Errorf("PATCH: %v", edited)
		}
		if put := call("userCurrentPutStar", map[string]any{"owner": owner, "repo": repo}); str(put["status"]) != "204" {
			t.Errorf("PUT: status %v", put["status"])
		}
		if del := call("userCurrentDeleteStar", map[string]any{"owner": owner, "repo": repo}); str(del["status"]) != "204" {
			t.Errorf("DELETE: status %v", del["status"])
		}
	})
	t.Run("branch and release tag with slashes", func(t *testing.T) {
		b := call("repoGetBranch", map[string]any{"owner": owner, "repo": repo, "branch": "feature/x"})
		if str(get(b, "data.commit.id")) != g.FeatureSHA {
			t.Errorf("feature/x: %v", b["data"])
		}
		rel := call("repoGetReleaseByTag", map[string]any{"owner": owner, "repo": repo, "tag": "rel/1.0"})
		if str(get(rel, "data.tag_name")) != "rel/1.0" {
			t.Errorf("rel/1.0: %v", rel["data"])
		}
	})
	t.Run("binary file", func(t *testing.T) {
		raw := call("repoGetRawFile", map[string]any{"owner": owner, "repo": repo, "filepath": fixtureBinPath})
		if got := str(get(raw, "data.content_base64")); got != base64.StdEncoding.EncodeToString(fixtureBin) {
			t.Errorf("binary content %q", got)
		}
	})
}

func TestE2EErrorMapping(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	alice := e2eClient(t, g, "alice")
	bob := e2eClient(t, g, "bob")
	bad := e2eClient(t, g, "nobody", "GITEA_TOKEN=0000000000000000000000000000000000000000")
	for _, tc := range []struct {
		name   string
		c      *client
		op     string
		args   map[string]any
		status string
		kind   string
	}{
		{"401 bad token", bad, "repoGet", map[string]any{"owner": owner, "repo": repo}, "401", "unauthorized"},
		{"403 not an admin", bob, "adminCreateUser", map[string]any{"body": map[string]any{"username": "mallory", "email": "m@example.com", "password": "secret-password-1"}}, "403", "forbidden"},
		{"404 no such repo", alice, "repoGet", map[string]any{"owner": owner, "repo": "no-such-repo"}, "404", "not_found"},
		{"409 branch exists", alice, "repoCreateBranch", map[string]any{"owner": owner, "repo": repo, "body": map[string]any{"new_branch_name": "feature/x"}}, "409", "conflict"},
		{"422 invalid option", alice, "repoCreatePullRequest", map[string]any{"owner": owner, "repo": repo, "body": map[string]any{"head": "main", "base": "main", "title": "same"}}, "422", "validation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, isErr := tc.c.callTool("gitea_call_operation", map[string]any{"operation": tc.op, "arguments": tc.args})
			if !isErr {
				t.Fatalf("not an error result: %v", res)
			}
			if got := str(get(res, "error.status")) + " " + str(get(res, "error.kind")); got != tc.status+" "+tc.kind {
				t.Errorf("error %q, want %q (%v)", got, tc.status+" "+tc.kind, res["error"])
			}
		})
	}
}

func TestE2EPagination(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	c := e2eClient(t, g, "alice")
	// A limit written 1.0 or 1e0 is the integer 1 to the schema, and is sent
	// as 1: Gitea ignores limit=1.0 and answers a default page.
	for _, limit := range []any{1, json.Number("1.0"), json.Number("1e0")} {
		res, isErr := c.callTool("issueListIssues", map[string]any{"owner": owner, "repo": repo, "state": "all", "type": "issues", "limit": limit})
		if isErr {
			t.Fatalf("limit %v: error result: %v", limit, res)
		}
		p, _ := res["pagination"].(map[string]any)
		if p == nil || str(p["page"]) != "1" || str(p["limit"]) != "1" || str(p["next_page"]) != "2" {
			t.Fatalf("limit %v: pagination %v", limit, res["pagination"])
		}
		total, _ := p["total_count"].(json.Number).Int64()
		if total < 2 || str(p["last_page"]) != fmt.Sprint(total) {
			t.Errorf("limit %v: total_count %d, last_page %v", limit, total, p["last_page"])
		}
		if n := len(res["data"].([]any)); n != 1 {
			t.Errorf("limit %v: %d items on a page of 1", limit, n)
		}
	}
}

func TestE2EOpenAPISources(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	file := filepath.Join(t.TempDir(), "openapi.json")
	if err := os.WriteFile(file, embeddedOpenAPI, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, source := range []string{"live", file} {
		t.Run(filepath.Base(source), func(t *testing.T) {
			c := e2eClient(t, g, "alice", "GITEA_OPENAPI="+source, "GITEA_MCP_TOOLS=repoGetBranch")
			res, isErr := c.callTool("repoGetBranch", map[string]any{"owner": owner, "repo": repo, "branch": "feature/x"})
			if isErr || str(get(res, "data.commit.id")) != g.FeatureSHA {
				t.Errorf("repoGetBranch: %v", res)
			}
		})
	}
}

func TestE2ESecretHandling(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	alice := e2eClient(t, g, "alice")
	t.Run("webhook authorization header never comes back", func(t *testing.T) {
		const secret = "Bearer wh-e2e-secret-value-123"
		res, isErr := alice.callTool("gitea_call_operation", map[string]any{"operation": "repoCreateHook", "arguments": map[string]any{
			"owner": owner, "repo": repo, "body": map[string]any{"type": "gitea", "active": false, "authorization_header": secret,
				"config": map[string]any{"url": "http://127.0.0.1:9/hook", "content_type": "json"}}}})
		if isErr || str(res["status"]) != "201" {
			t.Fatalf("repoCreateHook: %v", res)
		}
		if out := alice.transcript.String(); strings.Contains(out, "wh-e2e-secret-value-123") {
			t.Error("the webhook's authorization header came back")
		}
		id := get(res, "data.id")
		got, _ := alice.callTool("gitea_call_operation", map[string]any{"operation": "repoGetHook", "arguments": map[string]any{"owner": owner, "repo": repo, "id": id}})
		if strings.Contains(alice.transcript.String(), "wh-e2e-secret-value-123") {
			t.Errorf("a later read showed the authorization header: %v", got)
		}
	})
	// A planted token in an issue body, read in each SECRET_DETECTION_MODE.
	const planted = "ghp_e2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2Ee2eE2E"
	status, _, body, err := g.api("bob", "POST", "/repos/"+g.Repo+"/issues", map[string]any{"title": "leak", "body": "oops " + planted})
	if err != nil || status != 201 {
		t.Fatalf("plant: %d %v %s", status, err, body)
	}
	var issue struct{ Number int }
	json.Unmarshal(body, &issue)
	args := map[string]any{"owner": owner, "repo": repo, "index": issue.Number}
	for _, tc := range []struct {
		mode    string
		isErr   bool
		want    string // in the result text
		visible bool   // the planted token is shown
	}{
		{"mask", false, "ghp_[MASKED]", false},
		{"block", true, `secret_blocked`, false},
		{"off", false, planted, true},
	} {
		t.Run("planted token, mode "+tc.mode, func(t *testing.T) {
			c := e2eClient(t, g, "alice", "SECRET_DETECTION_MODE="+tc.mode)
			r := c.call("tools/call", map[string]any{"name": "issueGetIssue", "arguments": args})
			text := string(r.Result)
			if strings.Contains(text, `"isError":true`) != tc.isErr || !strings.Contains(text, tc.want) || strings.Contains(text, planted) != tc.visible {
				t.Errorf("result %s", text)
			}
			if tc.mode == "block" && !strings.Contains(text, `github`) {
				t.Errorf("block result does not name the rule: %s", text)
			}
		})
	}
	t.Run("commit SHAs intact", func(t *testing.T) {
		c := e2eClient(t, g, "alice")
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetAllCommits", "arguments": map[string]any{"owner": owner, "repo": repo, "sha": "main", "limit": 50}})
		if isErr {
			t.Fatalf("repoGetAllCommits: %v", res)
		}
		_, _, raw, _ := g.api("alice", "GET", "/repos/"+g.Repo+"/commits?sha=main&limit=50", nil)
		var want []struct{ SHA string }
		json.Unmarshal(raw, &want)
		got := res["data"].([]any)
		if len(got) != len(want) || len(want) == 0 {
			t.Fatalf("%d commits, want %d", len(got), len(want))
		}
		for i, w := range want {
			if s := str(get(got[i], "sha")); s != w.SHA {
				t.Errorf("commit %d: sha %q, want %q", i, s, w.SHA)
			}
		}
		if res["secrets_masked"] != nil {
			t.Errorf("false positives on commits: %v", res["secrets_masked"])
		}
	})
	t.Run("credential-issuing operation delivers its secret", func(t *testing.T) {
		for _, mode := range []string{"mask", "block"} {
			c := e2eClient(t, g, "carol", "SECRET_DETECTION_MODE="+mode)
			res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "userCreateOAuth2Application", "arguments": map[string]any{
				"body": map[string]any{"name": "e2e-" + mode, "redirect_uris": []string{"http://127.0.0.1:9/cb"}}}})
			secret := str(get(res, "data.client_secret"))
			if isErr || !strings.HasPrefix(secret, "gto_") || strings.Contains(secret, "MASKED") {
				t.Errorf("mode %s: client_secret %q (%v)", mode, secret, res["error"])
			}
		}
	})
}

// decodeJSON decodes data into v or fails the test.
func decodeJSON(t *testing.T, data []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(data, v); err != nil {
		t.Fatalf("decode %s: %v", data, err)
	}
}
