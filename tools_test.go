package main

import (
	"context"
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/google/go-cmp/cmp"
	"testing"
)

// maxListBytes is the budget of the default tools/list result in compact JSON.
const maxListBytes = 12 * 1024

func TestDefaultToolsListSize(t *testing.T) {
	t.Parallel()
	for _, prof := range []string{"", "gitea-issue-manager", "gitea-author", "gitea-reviewer", "gitea-merger", "gitea-owner", "prgs-reconciler"} {
		res, rerr := testServer(t, map[string]string{"GITEA_MCP_PROFILE": prof, "GITEA_TOKEN": fakeToken}).listTools(nil)
		if rerr != nil {
			t.Fatal(rerr)
		}
		t.Logf("profile %q: tools/list %d bytes, %d tools", prof, len(encode(res)), len(res["tools"].(toolsPage)))
		if n := len(encode(res)); n > maxListBytes {
			t.Errorf("profile %q: default tools/list is %d bytes, want at most %d", prof, n, maxListBytes)
		}
	}
}

// TestEncodeToolsList: a tools/list result, alone or in its response, with
// any other members, encodes to the bytes encoding/json writes (the page is
// copied in, not scanned again); any other value is left to encoding/json.
func TestEncodeToolsList(t *testing.T) {
	t.Parallel()
	page := toolsPage{json.RawMessage(`{"name":"a","inputSchema":{"type":"object"}}`), json.RawMessage(`{"name":"b<&>"}`)}
	for _, m := range []map[string]any{
		{"tools": page},
		{"tools": toolsPage{}},
		{"tools": page, "nextCursor": "dG9vbHM6NTA"},
		{"tools": page, "nextCursor": "c", "resultType": "complete", "ttlMs": 60000, "cacheScope": "private", "zz": []any{"<"}},
	} {
		plain := func(v any) string {
			var b strings.Builder
			enc := json.NewEncoder(&b)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v); err != nil {
				t.Fatal(err)
			}
			return strings.TrimSuffix(b.String(), "\n")
		}
		for _, v := range []any{m, &response{JSONRPC: "2.0", ID: json.RawMessage(`"x"`), Result: m}} {
			got, ok := encodeToolsList(v)
			if diff := cmp.Diff(plain(v), string(got)); !ok || diff != "" {
				t.Errorf("encodeToolsList(%v): ok %v, mismatch (-want +got):\n%s", m, ok, diff)
			}
		}
	}
	for _, v := range []any{map[string]any{"tools": []any{}}, &response{JSONRPC: "2.0", ID: json.RawMessage(`1`), Error: &rpcError{Code: 1, Message: "m"}, Result: map[string]any{"tools": page}}, "x"} {
		if _, ok := encodeToolsList(v); ok {
			t.Errorf("encodeToolsList(%v): ok, want it left to encoding/json", v)
		}
	}
}

func TestCatalogSettings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		tools, disabled string
		want            []string // listed tool names
		err             string
	}{
		{tools: "repoGetBranch,issueGetIssue", want: []string{"gitea_api_request", "repoGetBranch", "issueGetIssue"}},
		{tools: "repoGetBranch*", disabled: "gitea_api_request", want: []string{"repoGetBranch", "repoGetBranchProtection"}},
		{tools: "noSuchOperation", err: `GITEA_MCP_TOOLS: "noSuchOperation" matches no operation`},
		{tools: "[", err: `GITEA_MCP_TOOLS: bad pattern "["`},
	} {
		s, err := newServer(func(k string) string {
			return map[string]string{"GITEA_MCP_TOOLS": tc.tools, "DISABLED_TOOLS": tc.disabled}[k]
		})
		if err == nil {
			err = s.wait()
		}
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%q: error %v, want %q", tc.tools, err, tc.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", tc.tools, err)
		}
		var got []string // generated tools, and gitea_api_request, which DISABLED_TOOLS may remove
		for _, tool := range s.cat.listed {
			if tool.op != nil || tool.name == "gitea_api_request" {
				got = append(got, tool.name)
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", tc.tools, diff)
		}
	}
}

func TestDisabledOperationUnreachable(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"DISABLED_TOOLS": "repoDeleteBranch,gitea_api_request"})
	res := callOperation(t.Context(), s, nil, map[string]any{"operation": "repoDeleteBranch", "arguments": map[string]any{}})
	if res["isError"] != true {
		t.Errorf("a disabled operation was callable: %v", res)
	}
	found := findOperations(t.Context(), s, nil, map[string]any{"query": "repoDeleteBranch"})
	if text := found["content"].([]any)[0].(map[string]any)["text"].(string); strings.Contains(text, `"operation":"repoDeleteBranch"`) {
		t.Errorf("find offered a disabled operation: %s", text)
	}
	if _, rerr := s.callTool(t.Context(), nil, []byte(`{"name":"gitea_api_request","arguments":{}}`)); rerr == nil || rerr.Code != codeInvalidParams {
		t.Errorf("a disabled tool was callable: %v", rerr)
	}
}

// TestDisabledHidesWorkflowTools: DISABLED_TOOLS naming an operation a
// workflow tool sends hides the tool, which can then not be called; a
// workflow tool sends no operation it does not declare.
func TestDisabledHidesWorkflowTools(t *testing.T) {
	t.Parallel()
	for _, wt := range workflowTools() {
		for _, id := range wt.ops {
			s := testServer(t, map[string]string{"DISABLED_TOOLS": id})
			if s.cat.byName[wt.name] != nil {
				t.Errorf("DISABLED_TOOLS=%s: %s still listed", id, wt.name)
			}
			if _, rerr := s.callTool(t.Context(), nil, encode(map[string]any{"name": wt.name, "arguments": map[string]any{}})); rerr == nil || rerr.Code != codeInvalidParams {
				t.Errorf("DISABLED_TOOLS=%s: %s callable: %v", id, wt.name, rerr)
			}
		}
	}
	s := testServer(t, nil)
	if s.cat.byName["gitea_merge_pr"] == nil || s.cat.byName["gitea_edit_pr"] == nil {
		t.Fatal("workflow tools not listed without DISABLED_TOOLS")
	}
	env := s.step(t.Context(), "gitea_edit_pr", "edit_pr", "repoMergePullRequest", map[string]any{"owner": "o", "repo": "r", "index": 1}, nil)
	if env.Error == nil || env.Error.Kind != "unknown_operation" {
		t.Errorf("gitea_edit_pr sent repoMergePullRequest, which it does not declare: %+v", env.Error)
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"GITEA_URL": "ftp://x"}, `GITEA_URL: want http(s)://host[:port][/path]`},
		{map[string]string{"GITEA_URL": "ftp://alice:s3cret@x/?q=1"}, `GITEA_URL: must not carry credentials`},
		{map[string]string{"GITEA_URL": "https://user:pw@x"}, `GITEA_URL: must not carry credentials`},
		{map[string]string{"GITEA_TIMEOUT": "soon"}, `GITEA_TIMEOUT "soon": want a positive duration such as 30s`},
		{map[string]string{"GITEA_TOKEN": "abc def"}, `the Gitea token contains white space`},
		{map[string]string{"GITEA_MCP_PROFILE": "gitea-nobody"}, `unknown profile "gitea-nobody" (GITEA_MCP_PROFILE); known: gitea-issue-manager, gitea-author, gitea-reviewer, gitea-merger, prgs-reconciler, gitea-owner`},
		{map[string]string{"GITEA_MCP_CONFIG": "/no/such/profiles.json"}, `GITEA_MCP_CONFIG: open /no/such/profiles.json: no such file or directory`},
	} {
		_, err := newServer(func(k string) string { return tc.env[k] })
		if err == nil || err.Error() != tc.want {
			t.Errorf("%v: error %v, want %q", tc.env, err, tc.want)
		}
	}
}

// TestUnsetTokenStarts: a profile whose token variable is empty still lets
// the server start and list its tools, as clients start servers before users
// fill in settings; its calls fail with not_configured naming the variable.
func TestUnsetTokenStarts(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "acme-bot", "token_source_name": "ACME_TOKEN", "allowed_operations": ["gitea.read"]}]}`), 0o600)
	for _, tc := range []struct{ profile, variable string }{{"gitea-merger", "GITEA_TOKEN"}, {"acme-bot", "ACME_TOKEN"}} {
		s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:9", "GITEA_MCP_PROFILE": tc.profile, "GITEA_MCP_CONFIG": config})
		if list, rerr := s.listTools(nil); rerr != nil || len(list["tools"].(toolsPage)) == 0 {
			t.Errorf("%s: tools/list %v, %v", tc.profile, list, rerr)
		}
		out, isErr := fakeCall(t, t.Context(), s, "repoGet", map[string]any{"owner": "alice", "repo": "demo"})
		if want := tc.variable + " is not set: set it to a Gitea access token"; !isErr || get(out, "error.kind") != "not_configured" || get(out, "error.message") != want {
			t.Errorf("%s: %v; want not_configured %q", tc.profile, out, want)
		}
	}
}

// BenchmarkToolsList reports the size of the default tools/list result of
// the broadest profile.
func BenchmarkToolsList(b *testing.B) {
	s := testServer(b, map[string]string{"GITEA_MCP_PROFILE": "gitea-owner", "GITEA_TOKEN": fakeToken})
	var n int
	for b.Loop() {
		res, _ := s.listTools(nil)
		n = len(encode(res))
	}
	b.ReportMetric(float64(n), "bytes")
}

// BenchmarkCallOverhead compares a tools/call of repoGet (validation,
// executor, result envelope) with a plain HTTP GET of the same answer from a
// local server, so the difference is the server's own cost per call. The
// local server only makes the network cost constant; behaviour is tested
// against the real Gitea.
func BenchmarkCallOverhead(b *testing.B) {
	repo := []byte(`{"id":1,"name":"demo","full_name":"alice/demo","owner":{"login":"alice"},"description":"a repository","default_branch":"main","stars_count":3}`)
	ts := newScriptedGitea(b).user("alice").on("GET", "/repos/alice/demo", http.StatusOK, string(repo))
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			req, _ := http.NewRequest(http.MethodGet, ts.URL+"/api/v1/repos/alice/demo", nil)
			req.Header.Set("Authorization", "token "+fakeToken)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var v any
			json.NewDecoder(resp.Body).Decode(&v)
			resp.Body.Close()
		}
	})
	s := ts.server(b)
	params := []byte(`{"name":"repoGet","arguments":{"owner":"alice","repo":"demo"}}`)
	b.Run("tools/call", func(b *testing.B) {
		for b.Loop() {
			if res, rerr := s.callTool(b.Context(), nil, params); rerr != nil || res["isError"] == true {
				b.Fatal(rerr, res)
			}
		}
	})
	// The operation's own schema: whether its tool is listed depends on the profile.
	op, ok := s.cat.operation("repoCreatePullRequest")
	if !ok {
		b.Fatal("repoCreatePullRequest is not in the catalog")
	}
	schema, err := op.inputSchema()
	if err != nil {
		b.Fatal(err)
	}
	args, _ := decodeArgs([]byte(`{"owner":"alice","repo":"demo","body":{"title":"t","head":"feature/x","base":"main","assignees":["bob"],"labels":[1,2]}}`))
	b.Run("validate", func(b *testing.B) {
		for b.Loop() {
			if err := schema.Validate(args); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestRawToolQuery shows that the raw tool sends only the matched operation's
// own query parameters: sudo, token or access_token would change who acts.
func TestRawToolQuery(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:9", "GITEA_TOKEN": fakeToken, "GITEA_MCP_PROFILE": "gitea-owner"})
	for _, key := range []string{"sudo", "token", "access_token", "nonsense"} {
		res := rawRequest(t.Context(), s, nil, map[string]any{"method": "POST", "path": "/repos/a/b/pulls/1/merge",
			"query": map[string]any{key: "bob"}, "body": map[string]any{"do": "merge"}})
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		if res["isError"] != true || !strings.Contains(text, `query parameter \"`+key+`\" is not a parameter of repoMergePullRequest`) {
			t.Errorf("query %q: %s", key, text)
		}
	}
}

// TestRawDoorArguments shows that gitea_api_request sends what the matched
// operation's generated tool would: the path's values and the query's texts
// read as their parameters' types and validated as such (nothing sent when
// they do not fit), and a body judged by the policy whatever its parameter's
// name, on every door (adminCreateRepo's is "repository": under
// repositories, the repository it creates must be among them).
func TestRawDoorArguments(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "acme-admin", "allowed_operations": ["gitea.read", "gitea.admin.user"], "repositories": ["acme/*"]}]}`), 0o600)
	f := newScriptedGitea(t).user("root").json("/repos/acme/app/pulls", []any{})
	s := f.server(t, "GITEA_MCP_PROFILE", "acme-admin", "GITEA_MCP_CONFIG", config)
	raw := func(method, path string, query, body map[string]any) map[string]any {
		args := map[string]any{"method": method, "path": path}
		if query != nil {
			args["query"] = query
		}
		if body != nil {
			args["body"] = body
		}
		return args
	}
	call := func(user string) map[string]any {
		return map[string]any{"operation": "adminCreateRepo", "arguments": map[string]any{"username": user, "repository": map[string]any{"name": "app"}}}
	}
	for _, tc := range []struct {
		tool  string
		args  map[string]any
		sent  string // "METHOD /path?query" of the request sent; "" for none
		error string // error.kind: error.message, or "" for none
	}{
		{"gitea_api_request", raw("GET", "/repos/acme/app/pulls", map[string]any{"limit": "10", "labels": "3", "state": "closed"}, nil),
			"GET /repos/acme/app/pulls?labels=3&limit=10&state=closed", ""},
		{"gitea_api_request", raw("GET", "/repos/acme/app/pulls", map[string]any{"limit": "ten"}, nil),
			"", "invalid_arguments: limit: type: got string, want integer"},
		{"gitea_api_request", raw("GET", "/repos/acme/app/issues/abc", nil, nil),
			"", "invalid_arguments: index: type: got string, want integer"},
		{"gitea_api_request", raw("POST", "/admin/users/acme/repos", nil, map[string]any{"name": "app"}), "POST /admin/users/acme/repos?", ""},
		{"gitea_api_request", raw("POST", "/admin/users/evil/repos", nil, map[string]any{"name": "app"}),
			"", `permission_denied: adminCreateRepo creates "evil/app", outside the repositories of acme-admin`},
		{"gitea_call_operation", call("acme"), "POST /admin/users/acme/repos?", ""},
		{"gitea_call_operation", call("evil"), "", `permission_denied: adminCreateRepo creates "evil/app", outside the repositories of acme-admin`},
	} {
		before := len(f.requests())
		out, _ := fakeCall(t, t.Context(), s, tc.tool, tc.args)
		sent := ""
		for _, r := range f.requests()[before:] {
			if r.Path != "/user" {
				sent = r.Method + " " + r.Path + "?" + r.Query
			}
		}
		got := ""
		if kind := get(out, "error.kind"); kind != nil && kind != "not_found" {
			got = str(kind) + ": " + str(get(out, "error.message"))
		}
		if sent != tc.sent || got != tc.error {
			t.Errorf("%s %v: sent %q, error %q; want sent %q, error %q", tc.tool, tc.args, sent, got, tc.sent, tc.error)
		}
	}
}

// TestListingAgreesWithCheck: found by attacking the listing. What tools/list
// and gitea_find_operations show was judged without arguments, so an
// operation whose permission follows from its body (repoEditPullRequest's
// state, a review's event, issueEditIssue's state) was hidden from a profile
// the policy lets call it (the reconciler could not find how to close a pull
// request, an approver how to approve); an operation that names no single
// repository was shown to a profile limited to repositories, which refuses
// every call of it; gitea_reconcile_already_landed_pr was listed to profiles
// it refuses (not of the reconciler's shape); and gitea_get_profile, the
// guide and gitea_resolve_task_capability described as allowed what a
// forbidden entry or the reconciler's shape denies.
func TestListingAgreesWithCheck(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [
		{"profile_name": "approver", "allowed_operations": ["read", "approve"]},
		{"profile_name": "closer", "allowed_operations": ["read", "gitea.issue.close"]},
		{"profile_name": "demo-only", "repositories": ["alice/demo"], "allowed_operations": ["read", "gitea.issue.comment"]},
		{"profile_name": "contradiction", "allowed_operations": ["read", "merge", "gitea.issue.comment"], "forbidden_operations": ["merge"]}]}`), 0o600)
	params := map[string]string{"owner": "alice", "repo": "demo", "index": "1", "id": "1"}
	ops := docOps(t)
	tests := []struct {
		profile, name string         // name: an operationId or a hand-written tool
		args          map[string]any // for an operation: arguments the policy allows, or nil: it refuses every call
		want          bool
	}{
		{"prgs-reconciler", "repoEditPullRequest", map[string]any{"body": map[string]any{"state": "closed"}}, true},
		{"prgs-reconciler", "gitea_edit_pr", nil, true},
		{"approver", "repoCreatePullReview", map[string]any{"body": map[string]any{"event": "APPROVED"}}, true},
		{"approver", "repoSubmitPullReview", map[string]any{"body": map[string]any{"event": "APPROVED"}}, true},
		{"approver", "gitea_review_pr", nil, true},
		{"closer", "issueEditIssue", map[string]any{"body": map[string]any{"state": "closed"}}, true},
		{"gitea-author", "repoEditPullRequest", map[string]any{"body": map[string]any{"title": "t"}}, true},
		{"gitea-merger", "repoEditPullRequest", nil, false},
		{"demo-only", "repoGet", map[string]any{}, true},
		{"demo-only", "issueCreateComment", map[string]any{"body": map[string]any{"body": "hi"}}, true},
		{"demo-only", "repoSearch", nil, false},
		{"demo-only", "issueSearchIssues", nil, false},
		{"demo-only", "issueGetCommentsAndTimeline", nil, false},
		{"demo-only", "listForks", nil, false},
		{"prgs-reconciler", "gitea_reconcile_already_landed_pr", nil, true},
		{"gitea-owner", "gitea_reconcile_already_landed_pr", nil, false},
		{"contradiction", "gitea_merge_pr", nil, false},
		{"contradiction", "repoMergePullRequest", nil, false},
	}
	servers := map[string]*server{}
	for _, tt := range tests {
		s := servers[tt.profile]
		if s == nil {
			s = testServer(t, map[string]string{"GITEA_MCP_PROFILE": tt.profile, "GITEA_MCP_CONFIG": config, "GITEA_TOKEN": fakeToken, "GITEA_MCP_TOOLS": "all"})
			servers[tt.profile] = s
		}
		if op, ok := ops[tt.name]; ok {
			prof, _ := s.exec.active(context.Background())
			args := tt.args
			if args == nil {
				args = map[string]any{}
			}
			if d := decide(prof, "alice", op.ID, op, args, params); d.Allowed != (tt.args != nil) {
				t.Errorf("%s %s: the policy says %v (%s); the case says %v", tt.profile, tt.name, d.Allowed, d.Reason, tt.args != nil)
			}
			found := slices.ContainsFunc(s.rank(tt.name), func(h hit) bool { return h.op.ID == tt.name })
			if found != tt.want {
				t.Errorf("%s: gitea_find_operations finds %s: %v, want %v", tt.profile, tt.name, found, tt.want)
			}
		}
		if listed := slices.ContainsFunc(s.visible(), func(x *tool) bool { return x.name == tt.name }); listed != tt.want {
			t.Errorf("%s: tools/list shows %s: %v, want %v", tt.profile, tt.name, listed, tt.want)
		}
	}
	ctx := context.Background()
	res, isErr := fakeCall(t, ctx, servers["contradiction"], "gitea_get_profile", nil)
	if allowed := str(get(res, "data.allowed_operations")); isErr || strings.Contains(allowed, "gitea.pr.merge") || !strings.Contains(allowed, "gitea.read") {
		t.Errorf("gitea_get_profile of a profile forbidding merge (error %v): allowed %s, want gitea.read and not gitea.pr.merge", isErr, allowed)
	}
	res, isErr = fakeCall(t, ctx, servers["contradiction"], "gitea_get_operator_guide", nil)
	if may, _, cut := strings.Cut(str(get(res, "data.guide")), "It may not"); isErr || !cut || strings.Contains(may, "gitea.pr.merge") {
		t.Errorf("the guide of a profile forbidding merge (error %v) says it may merge, or says nothing it may not: %s", isErr, may)
	}
	res, _ = fakeCall(t, ctx, servers["gitea-owner"], "gitea_resolve_task_capability", map[string]any{"task": "reconcile_already_landed_pr"})
	if get(res, "data.allowed") != false || str(get(res, "data.reference_profiles_with_it")) != "[prgs-reconciler]" {
		t.Errorf("reconcile_already_landed_pr for gitea-owner, which gitea_reconcile_already_landed_pr refuses: %v", res["data"])
	}
	for task, field := range map[string]string{"approve_pr": "as commit_id", "merge_pr": "as head_commit_id", "comment_pr": ""} {
		res, _ = fakeCall(t, ctx, servers["gitea-owner"], "gitea_resolve_task_capability", map[string]any{"task": task})
		if pin := str0(get(res, "data.pin")); field == "" && pin != "" || !strings.Contains(pin, field) {
			t.Errorf("%s: pin %q, want one naming %q", task, pin, field)
		}
	}
}

// TestActivateOnlyFileProfiles: runtime switching reaches the profile file's
// own profiles, never a built-in one, which would leave the file's
// forbidden operations and repositories behind.
func TestActivateOnlyFileProfiles(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true, "profiles": [
		{"profile_name": "narrow", "allowed_operations": ["gitea.read"], "repositories": ["alice/demo"]},
		{"profile_name": "other", "allowed_operations": ["gitea.read", "gitea.issue.comment"], "repositories": ["alice/demo"]}]}`), 0o600)
	f := newScriptedGitea(t).user("bob")
	s := f.server(t, "GITEA_MCP_PROFILE", "narrow", "GITEA_MCP_CONFIG", config)
	for _, tc := range []struct {
		profile string
		kind    string // "" for activated
	}{{"gitea-owner", "invalid_profile"}, {"prgs-reconciler", "invalid_profile"}, {"other", ""}} {
		out, isErr := fakeCall(t, t.Context(), s, "gitea_activate_profile", map[string]any{"profile": tc.profile})
		if kind := str0(get(out, "error.kind")); isErr != (tc.kind != "") || kind != tc.kind {
			t.Errorf("activate %s: %v; want error kind %q", tc.profile, out, tc.kind)
		}
	}
	if p, _ := s.exec.active(t.Context()); p.Name != "other" {
		t.Errorf("active profile %q, want other", p.Name)
	}
}
