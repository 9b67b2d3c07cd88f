package main

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// canonRule is one operation's body rule for the canonicalizer: bodies that
// must pass, and bodies that must be refused with their message. route is
// the method and path gitea_api_request reaches the operation by.
type canonRule struct {
	op, route string
	pass      []string
	refuse    map[string]string // body -> message
}

// canonRules are the canonicalizer's examples, on Gitea 1.26.0's own body
// schemas: case and Unicode fold variants of documented names (U+017F "ſ"
// folds to "s", the Kelvin sign U+212A to "k"), decoys that pair a documented
// name with one of its variants, nested objects, arrays of objects and
// free-form maps.
var canonRules = []canonRule{
	{op: "repoEditPullRequest", route: "PATCH /repos/alice/demo/pulls/1",
		pass: []string{`{}`, `{"state": "closed"}`, `{"title": "t", "state": "open", "labels": [1, 2]}`,
			`{"state": "open", "st\u0061te": "closed"}`}, // one key given twice: the last one counts, for the policy and Gitea alike
		refuse: map[string]string{
			`{"State": "closed"}`:                   `body.State: unknown property; did you mean "state"?`,
			`{"STATE": "closed"}`:                   `body.STATE: unknown property; did you mean "state"?`,
			`{"ſtate": "closed"}`:                   `body["ſtate"]: unknown property; did you mean "state"?`,
			`{"state": "open", "ſtate": "closed"}`:  `body["ſtate"]: unknown property; did you mean "state"?`,
			`{"state": "open", "STATE": "closed"}`:  `body.STATE: unknown property; did you mean "state"?`,
			`{"statee": "closed"}`:                  `body.statee: unknown property`,
			`{"state": 1}`:                          `body.state: type: got number, want string`,
			`{"title": "t", "body": {"a": 1}}`:      `body.body: type: got object, want string`,
			`{"state": "open", "State": null}`:      `body.State: unknown property; did you mean "state"?`,
			`{"title": "t", "Title": "u", "x": []}`: `body.Title: unknown property; did you mean "title"?`,
		}},
	{op: "issueEditIssue", route: "PATCH /repos/alice/demo/issues/1",
		pass: []string{`{"state": "closed"}`, `{"title": "t", "body": "b"}`, `{"state": "closed "}`}, // the policy refuses this state
		refuse: map[string]string{
			`{"STATE": "closed"}`: `body.STATE: unknown property; did you mean "state"?`,
			`{"sTaTe": "closed"}`: `body.sTaTe: unknown property; did you mean "state"?`,
			`{"ſTATE": "closed"}`: `body["ſTATE"]: unknown property; did you mean "state"?`,
		}},
	{op: "repoCreatePullReview", route: "POST /repos/alice/demo/pulls/1/reviews",
		pass: []string{`{"event": "APPROVED", "body": "lgtm"}`, `{"comments": [{"path": "a.go", "body": "b", "new_position": 3}]}`},
		refuse: map[string]string{
			`{"Event": "APPROVED"}`:                                `body.Event: unknown property; did you mean "event"?`,
			`{"event": "COMMENT", "EVENT": "APPROVED"}`:            `body.EVENT: unknown property; did you mean "event"?`,
			`{"comments": [{"path": "a.go", "Body": "b"}]}`:        `body.comments[0].Body: unknown property; did you mean "body"?`,
			`{"comments": [{"path": "a"}, {"path": "b", "x": 1}]}`: `body.comments[1].x: unknown property`,
		}},
	{op: "repoMergePullRequest", route: "POST /repos/alice/demo/pulls/1/merge",
		pass: []string{`{"do": "merge"}`, `{"do": "squash", "delete_branch_after_merge": true, "head_commit_id": "abc"}`},
		refuse: map[string]string{
			`{"Do": "merge"}`:                                    `body.Do: unknown property; did you mean "do"?`,
			`{"do": "merge", "Force_Merge": true}`:               `body.Force_Merge: unknown property; did you mean "force_merge"?`,
			`{"do": "merge", "force_merge": "yes"}`:              `body.force_merge: type: got string, want boolean`,
			`{"do": "merge", "DELETE_BRANCH_AFTER_MERGE": true}`: `body.DELETE_BRANCH_AFTER_MERGE: unknown property; did you mean "delete_branch_after_merge"?`,
			`{"do": "fast-forward-only-please"}`:                 `body.do: enum: got "fast-forward-only-please", want one of "merge", "rebase", "rebase-merge", "squash", "fast-forward-only", "manually-merged"`,
		}},
	{op: "repoCreateKey", route: "POST /repos/alice/demo/keys",
		pass: []string{`{"key": "ssh-ed25519 AAAA", "title": "t"}`},
		refuse: map[string]string{
			`{"title": "t", "key": "ssh-ed25519 AAAA", "\u212aey": "ssh-ed25519 BBBB"}`: "body[\"\u212aey\"]: unknown property; did you mean \"key\"?",
			`{"title": "t"}`: `body.key: required: missing`,
		}},
	{op: "repoCreateHook", route: "POST /repos/alice/demo/hooks",
		// config is a free-form map: its keys are free, and, being a Go
		// map in Gitea too, even keys equal under folding stay apart.
		pass: []string{`{"type": "gitea", "config": {"url": "http://h", "content_type": "json", "URL": "x", "anything": "y"}}`},
		refuse: map[string]string{
			`{"type": "gitea", "config": {"url": 1}}`:   `body.config.url: type: got number, want string`,
			`{"Type": "gitea", "config": {"url": "u"}}`: `body.Type: unknown property; did you mean "type"?`,
		}},
	{op: "issueAddLabel", route: "POST /repos/alice/demo/issues/1/labels",
		// labels are ids or names, of any type in the document: Gitea
		// decodes them into interface{}, folding no key, and refuses
		// anything but a number or a string itself.
		pass: []string{`{"labels": [1, "bug"]}`, `{"labels": [1, {"id": 1}]}`},
		refuse: map[string]string{
			`{"labels": "bug"}`: `body.labels: type: got string, want array`,
		}},
}

// canonDoors sends one body to op through every door and returns what each
// answered: the generated tool, gitea_call_operation, gitea_api_request and
// a workflow step. An accepted body gets past validation to the (absent)
// Gitea at 127.0.0.1:9 and answers with its error kind, not a message.
func canonDoors(t *testing.T, s *server, op, route string, body any) map[string]string {
	t.Helper()
	args := map[string]any{"owner": "alice", "repo": "demo", "body": body}
	method, path, _ := strings.Cut(route, " ")
	if o := s.cat.byID[op]; slices.ContainsFunc(o.params, func(p param) bool { return p.Name == "index" }) {
		args["index"] = json.Number("1")
	}
	msg := func(res map[string]any) string {
		var v struct {
			Error struct{ Kind, Message string }
		}
		json.Unmarshal([]byte(res["content"].([]any)[0].(map[string]any)["text"].(string)), &v)
		if v.Error.Kind != "invalid_arguments" {
			return "accepted" // refused later, or sent
		}
		return v.Error.Message
	}
	ctx := t.Context()
	// a tool name outside the catalog: step then takes any operation, as a
	// workflow tool takes those it declares
	out := map[string]string{"workflow": msg(envelopeResult(s.step(ctx, "workflow_step", "edit_pr", op, args, nil)))}
	for _, r := range routes(op, method, path, args) {
		res, rerr := s.callTool(ctx, nil, encode(map[string]any{"name": r.tool, "arguments": r.args}))
		if rerr != nil {
			t.Fatal(rerr.Message)
		}
		out[r.name] = msg(res)
	}
	return out
}

// TestCanonicalBody checks canonRules through every door: each passing body
// gets past validation, each refused one is refused with its message by all.
func TestCanonicalBody(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:9", "GITEA_TOKEN": fakeToken, "GITEA_MCP_PROFILE": "gitea-owner",
		"GITEA_MCP_TOOLS": "all", "GITEA_TIMEOUT": "1s"})
	all := func(v string) map[string]string {
		return map[string]string{"generated": v, "call": v, "raw": v, "workflow": v}
	}
	for _, r := range canonRules {
		cases := map[string]string{}
		for _, body := range r.pass {
			cases[body] = "accepted"
		}
		for body, want := range r.refuse {
			cases[body] = want
		}
		for body, want := range cases {
			got := canonDoors(t, s, r.op, r.route, schemaValue(t, body))
			if diff := cmp.Diff(all(want), got); diff != "" {
				t.Errorf("%s %s: mismatch (-want +got):\n%s", r.op, body, diff)
			}
		}
	}
}

// TestRawBodyAgainstOperation shows that gitea_api_request's body is checked
// against the matched operation: none where it takes none, and a required one.
func TestRawBodyAgainstOperation(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:9", "GITEA_TOKEN": fakeToken, "GITEA_MCP_PROFILE": "gitea-owner"})
	for _, tc := range []struct {
		method, path string
		body         any
		want         string
	}{
		{"DELETE", "/repos/alice/demo/branches/x", map[string]any{"force": true}, `body: repoDeleteBranch takes no JSON body`},
		{"POST", "/admin/hooks", nil, `body: required: missing`},
		{"POST", "/repos/alice/demo/issues", map[string]any{"title": "t", "Title": "u"}, `body.Title: unknown property; did you mean "title"?`},
	} {
		args := map[string]any{"method": tc.method, "path": tc.path}
		if tc.body != nil {
			args["body"] = tc.body
		}
		res, _ := fakeCall(t, t.Context(), s, "gitea_api_request", args)
		if got := str(get(res, "error.message")); got != tc.want {
			t.Errorf("%s %s: mismatch (-want +got):\n%s", tc.method, tc.path, cmp.Diff(tc.want, got))
		}
	}
}

// TestBodySchemasClosed walks every body schema of Gitea 1.26.0's document:
// each object is closed or a free-form map, with members if it is closed
// (else it would take only {}); a value of any type (no type, which Gitea
// decodes into interface{}) is only where the document gives one; and no
// two members of one object are equal under Go's case folding, so exact
// names are one canonical spelling.
func TestBodySchemasClosed(t *testing.T) {
	t.Parallel()
	anyValue := []string{"issueAddLabel body.labels[]", "issueReplaceLabels body.labels[]"} // ids or names
	var open []string
	for _, op := range docOperations(t) {
		schema, err := op.inputSchema()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range op.params {
			if p.In != "body" {
				continue
			}
			var walk func(s *Schema, path string)
			walk = func(s *Schema, path string) {
				if s.Items != nil {
					walk(s.Items, path+"[]")
				}
				switch ap := s.AdditionalProperties; {
				case s.Type == "":
					open = append(open, op.ID+" "+path)
				case s.Type != "object" || s.Items != nil:
				case ap == nil:
					t.Errorf("%s %s: object without additionalProperties", op.ID, path)
				case ap.Bool == nil:
					walk(ap, path+"{}")
				case len(s.Properties) == 0:
					t.Errorf("%s %s: closed object without members", op.ID, path)
				}
				for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
					if alike := s.foldsTo(name); alike != name {
						t.Errorf("%s %s: members %q and %q are equal under case folding", op.ID, path, alike, name)
					}
					walk(s.Properties[name], path+"."+name)
				}
			}
			walk(schema.Properties[p.Name], p.Name)
		}
	}
	if diff := cmp.Diff(anyValue, open); diff != "" {
		t.Errorf("values of any type: mismatch (-want +got):\n%s", diff)
	}
}

// canonFuzzOps are the operations whose decision reads body fields.
var canonFuzzOps = []string{"repoEditPullRequest", "issueEditIssue", "repoCreatePullReview", "repoSubmitPullReview", "repoMergePullRequest"}

// giteaType builds a Go type that decodes a body as Gitea's structs do: a
// struct for an object with members, whose fields encoding/json matches
// case-insensitively, with Unicode simple folding.
func giteaType(s *Schema) reflect.Type {
	switch {
	case len(s.Properties) > 0:
		var fields []reflect.StructField
		for i, name := range slices.Sorted(maps.Keys(s.Properties)) {
			fields = append(fields, reflect.StructField{Name: fmt.Sprintf("F%d", i), Type: giteaType(s.Properties[name]),
				Tag: reflect.StructTag(fmt.Sprintf(`json:%q`, name+",omitempty"))})
		}
		return reflect.PointerTo(reflect.StructOf(fields))
	case s.Items != nil:
		return reflect.SliceOf(giteaType(s.Items))
	}
	return reflect.TypeFor[any]()
}

// giteaView returns body as Gitea reads it: decoded into its struct (last
// key wins among those that fold alike) and written back with the documented names.
func giteaView(s *Schema, body any) (any, error) {
	v := reflect.New(giteaType(s))
	if err := json.Unmarshal(encode(body), v.Interface()); err != nil {
		return nil, err
	}
	var out any
	err := schemaDecode(encode(v.Elem().Interface()), &out)
	return out, err
}

// FuzzCanonicalBody: for random bodies, with case and fold variants of the
// fields the policy reads, a body the executor accepts gets the same decision
// as Gitea's own reading of it, spelled canonically. No spelling gets a
// weaker decision than the canonical one: it is refused or judged alike.
func FuzzCanonicalBody(f *testing.F) {
	for _, seed := range []string{`{"state":"closed"}`, `{"State":"closed"}`, `{"state":"open","ſtate":"closed"}`,
		`{"Event":"APPROVED"}`, `{"event":"COMMENT","EVENT":"APPROVED"}`, `{"do":"merge","Force_Merge":true}`,
		`{"do":"merge","force_merge":true,"delete_branch_after_merge":true}`, `{"do":"merge","DELETE_BRANCH_AFTER_MERGE":true}`,
		`{"comments":[{"path":"a","Body":"b"}],"event":"REQUEST_CHANGES"}`, `{"st\u0061te":"closed"}`} {
		for i := range canonFuzzOps {
			f.Add(uint8(i), seed)
		}
	}
	s := testServer(f, map[string]string{})
	var profiles []*profile
	for _, name := range []string{"gitea-owner", "gitea-merger", "gitea-reviewer", "gitea-author", "gitea-issue-manager"} {
		profiles = append(profiles, builtin(f, name))
	}
	f.Fuzz(func(t *testing.T, which uint8, body string) {
		op := s.cat.byID[canonFuzzOps[int(which)%len(canonFuzzOps)]]
		args, err := decodeArgs([]byte(`{"owner":"alice","repo":"demo","index":1,"body":` + body + `}`))
		if err != nil {
			return
		}
		if op.ID == "repoSubmitPullReview" {
			args["id"] = json.Number("2")
		}
		if _, _, _, _, err := s.exec.resolve(&request{op: op, args: args}); err != nil {
			return // refused: as strong as any decision
		}
		schema, _ := op.inputSchema()
		view, err := giteaView(schema.Properties["body"], args["body"])
		if err != nil {
			return // Gitea would answer 422
		}
		info := opInfo{ID: op.ID, Method: op.Method, Route: op.Route}
		params := map[string]string{"owner": "alice", "repo": "demo", "index": "1"}
		for _, prof := range profiles {
			got := decide(prof, "alice", op.ID, info, args, params)
			want := decide(prof, "alice", op.ID, info, map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": view}, params)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: decision mismatch against Gitea's reading %s (-want +got):\n%s", op.ID, body, encode(view), diff)
			}
		}
	})
}

// BenchmarkCanonicalDecision measures the policy decision with body
// canonicalization for a 2 KB review body: validation against the closed
// schema, then the decision (goal: under 5 µs).
func BenchmarkCanonicalDecision(b *testing.B) {
	s := testServer(b, map[string]string{"GITEA_MCP_PROFILE": "gitea-owner", "GITEA_TOKEN": fakeToken})
	prof, _ := s.exec.active(context.Background())
	op := s.cat.byID["repoCreatePullReview"]
	var comments []string
	for i := range 14 {
		comments = append(comments, fmt.Sprintf(`{"path":"internal/pkg/file%02d.go","body":"Please name this error value and wrap it with %%w so callers can tell.","new_position":%d}`, i, 10+i))
	}
	raw := `{"owner":"alice","repo":"demo","index":7,"body":{"event":"REQUEST_CHANGES","commit_id":"0123456789abcdef0123456789abcdef01234567","body":"A few small things.","comments":[` + strings.Join(comments, ",") + `]}}`
	args, err := decodeArgs([]byte(raw))
	if err != nil {
		b.Fatal(err)
	}
	info := opInfo{ID: op.ID, Method: op.Method, Route: op.Route}
	for b.Loop() {
		_, params, _, _, err := s.exec.resolve(&request{op: op, args: args})
		if err != nil {
			b.Fatal(err)
		}
		if d := decide(prof, "carol", op.ID, info, args, params); !d.Allowed {
			b.Fatal(d.Reason)
		}
	}
	b.ReportMetric(float64(len(encode(args["body"]))), "body-bytes")
}

// TestWholeNumbers checks that a whole number written another way (1.0, 1e0,
// 0.0), which the schema takes as an integer, reaches Gitea as one in a path,
// a query and a body (a member and a list element), through every door: Go's decoder in Gitea needs it so
// (a path 1.0 is not found, limit=1.0 is ignored, 0.0 is no int64).
func TestWholeNumbers(t *testing.T) {
	t.Parallel()
	gitea := newScriptedGitea(t).user("alice").on("GET", "/repos/alice/demo/issues/1", 200, `{"number":1}`).
		on("GET", "/repos/alice/demo/issues", 200, `[]`).on("POST", "/repos/alice/demo/issues", 201, `{"number":2}`)
	s := gitea.server(t, "GITEA_MCP_PROFILE", "gitea-owner")
	op := func(id string, args map[string]any) map[string]any {
		return map[string]any{"operation": id, "arguments": with(args, "owner", "alice", "repo", "demo")}
	}
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"gitea_call_operation", op("issueGetIssue", map[string]any{"index": json.Number("1.0")})},
		{"gitea_call_operation", op("issueListIssues", map[string]any{"limit": json.Number("1e0"), "page": json.Number("2")})},
		{"gitea_api_request", map[string]any{"method": "GET", "path": "/repos/alice/demo/issues/1.0"}},
		{"gitea_api_request", map[string]any{"method": "GET", "path": "/repos/alice/demo/issues", "query": map[string]any{"limit": "10e-1"}}},
		{"gitea_call_operation", op("issueCreateIssue", map[string]any{"body": map[string]any{"title": "t", "milestone": json.Number("0.0"), "labels": []any{json.Number("2e0")}}})},
	} {
		if res, isErr := fakeCall(t, t.Context(), s, c.tool, c.args); isErr {
			t.Errorf("%s %v: %v", c.tool, c.args, res)
		}
	}
	var got []string
	for _, r := range gitea.requests() {
		if r.Path != "/user" {
			got = append(got, r.Method+" "+r.Path+"?"+r.Query+" "+r.Body)
		}
	}
	want := []string{"GET /repos/alice/demo/issues/1? ", "GET /repos/alice/demo/issues?limit=1&page=2 ",
		"GET /repos/alice/demo/issues/1? ", "GET /repos/alice/demo/issues?limit=1 ",
		`POST /repos/alice/demo/issues? {"labels":[2],"milestone":0,"title":"t"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
