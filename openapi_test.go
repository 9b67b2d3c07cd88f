package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestEmbeddedOpenAPI(t *testing.T) {
	t.Parallel()
	if !json.Valid(embeddedOpenAPI) {
		t.Fatal("embedded document is not valid JSON")
	}
	ops, err := parseOpenAPI(embeddedOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if len(ops) != 471 {
		t.Errorf("got %d operations, want 471 (Gitea 1.26.0)", len(ops))
	}
	// Every operation's schema builds, names its path parameters as required,
	// and marshals to an object schema.
	for _, op := range ops {
		s, err := op.inputSchema()
		if err != nil {
			t.Errorf("%s: %v", op.ID, err)
			continue
		}
		if s.Type != "object" {
			t.Errorf("%s: schema type %q, want object", op.ID, s.Type)
		}
		for _, m := range placeholder.FindAllStringSubmatch(op.Route, -1) {
			if s.Properties[m[1]] == nil || !slices.Contains(s.Required, m[1]) {
				t.Errorf("%s: path parameter %q missing or not required", op.ID, m[1])
			}
		}
	}
}

var placeholder = regexp.MustCompile(`\{([^}]+)\}`)

func TestOperationSchema(t *testing.T) {
	t.Parallel()
	ops, err := parseOpenAPI(embeddedOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*operation{}
	for _, op := range ops {
		byID[op.ID] = op
	}
	for _, tc := range []struct {
		id, want string
	}{
		{"repoGetBranch", `{"type":"object","properties":{"branch":{"type":"string","description":"branch to get"},"owner":{"type":"string","description":"owner of the repo"},"repo":{"type":"string","description":"name of the repo"}},"required":["owner","repo","branch"],"additionalProperties":false}`},
		{"issueCreateIssueAttachment", `"attachment":{"type":"string","format":"byte","description":"attachment to upload (file content, base64-encoded)"}`},
		{"repoCreatePullRequest", `"assignees":{"type":"array","description":"The list of assignee usernames","items":{"type":"string"}}`},
	} {
		s, err := byID[tc.id].inputSchema()
		if err != nil {
			t.Fatal(err)
		}
		got := string(encode(s))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: schema %s\ndoes not contain %s", tc.id, got, tc.want)
		}
	}
}

func TestMembers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want map[string]string
		err  bool
	}{
		{in: `{}`, want: map[string]string{}},
		{in: ` { "a" : 1 , "b":[1,{"c":"]}"}], "d\"e":"x\\\"}", "f":true,"g":null,"h":-1.5e3 } `,
			want: map[string]string{"a": "1", "b": `[1,{"c":"]}"}]`, `d"e`: `"x\\\"}"`, "f": "true", "g": "null", "h": "-1.5e3"}},
		{in: `{"a":{"b":{}}}`, want: map[string]string{"a": `{"b":{}}`}},
		{in: `[]`, err: true},
		{in: ``, err: true},
		{in: `{"a":}`, err: true},
		{in: `{"a":1,}`, err: true},
		{in: `{"a":"x`, err: true},
		{in: `{"a":{"b":1}`, err: true},
		{in: `{"a":1} x`, err: true},
		{in: `{a:1}`, err: true},
	} {
		got, err := members([]byte(tc.in))
		if (err != nil) != tc.err {
			t.Errorf("members(%q): error %v, want error %v", tc.in, err, tc.err)
			continue
		}
		if tc.err {
			continue
		}
		gotS := map[string]string{}
		for k, v := range got {
			gotS[k] = string(v)
		}
		if diff := cmp.Diff(tc.want, gotS); diff != "" {
			t.Errorf("members(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzMembers checks the fast object splitter against encoding/json: on a
// valid JSON object it finds the same members, each a valid value; it never
// panics on anything else.
func FuzzMembers(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,"]"],"b":{"c":"\\\""}}`, `{"a":1`, `{"a":"\u00e9"}`, string(embeddedOpenAPI[:2000])} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := members(b)
		var want map[string]json.RawMessage
		if json.Unmarshal(b, &want) != nil {
			return // invalid input: any error or result is fine, no panic
		}
		if err != nil {
			t.Fatalf("members(%q): %v on a valid object", b, err)
		}
		if len(got) != len(want) {
			t.Fatalf("members(%q): %d members, want %d", b, len(got), len(want))
		}
		for k, v := range got {
			if !json.Valid(v) {
				t.Fatalf("members(%q): member %q = %q is not valid JSON", b, k, v)
			}
		}
	})
}

// TestParseOpenAPIErrors: a document parseOpenAPI cannot read whole is
// refused, naming what is wrong; a route or method given twice yields a
// duplicate operationId rather than one copy silently winning.
func TestParseOpenAPIErrors(t *testing.T) {
	t.Parallel()
	get := func(id string) string { return `{"operationId":"` + id + `","summary":"s","tags":["t"]}` }
	for _, tc := range []struct{ doc, want string }{
		{`[]`, "openapi document: not a JSON object"},
		{`{"swagger":"3.0","paths":{}}`, `openapi document: swagger version "3.0", want "2.0"`},
		{`{"swagger":"2.0","paths":[]}`, "openapi document: paths: not a JSON object"},
		{`{"swagger":"2.0","paths":{"/a":{"parameters":[]}}}`, "openapi document: no operations"},
		{`{"swagger":"2.0","paths":{"/a":[]}}`, "openapi document: /a: not a JSON object"},
		{`{"swagger":"2.0","paths":{"/a":{"get":{"operationId":1}}}}`, `openapi document: get /a: missing, invalid or duplicate operationId ""`},
		{`{"swagger":"2.0","paths":{"/a":{"get":{"operationId":"x y"}}}}`, `openapi document: get /a: missing, invalid or duplicate operationId "x y"`},
		{`{"swagger":"2.0","paths":{"/a":{"get":{"operationId":"x","tags":"t"}}}}`, `openapi document: get /a: missing, invalid or duplicate operationId ""`},
		{`{"swagger":"2.0","paths":{"/a":{"get":` + get("x") + `},"/b":{"post":` + get("x") + `}}}`, `openapi document: post /b: missing, invalid or duplicate operationId "x"`},
		{`{"swagger":"2.0","paths":{"/a":{"get":` + get("x") + `},"/a":{"get":` + get("y") + `}}}`, ""},
		{`{"swagger":"2.0","paths":{"/a":{"get":` + get("x") + `,"get":` + get("x") + `}}}`, `openapi document: get /a: missing, invalid or duplicate operationId "x"`},
	} {
		_, err := parseOpenAPI([]byte(tc.doc))
		if got := fmt.Sprint(err); tc.want != "" && got != tc.want || tc.want == "" && err != nil {
			t.Errorf("parseOpenAPI(%s): error %s, want %q", tc.doc, got, tc.want)
		}
	}
}

// TestParseOpenAPIHidden: the document's text reaches the model (tools/list,
// gitea_find_operations), and a live one comes from Gitea: its hidden
// characters, raw or as JSON escapes, are removed before anything is read.
func TestParseOpenAPIHidden(t *testing.T) {
	t.Parallel()
	doc := `{"swagger":"2.0","paths":{"/a":{"get":{"operationId":"x","summary":"List\u200b it\udb40\udc49 ‮now",` +
		`"tags":["t"],"parameters":[{"name":"q","in":"query","type":"string","description":"a\\\u2066b \u0041"}]}}}}`
	read, err := readDoc(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	ops, err := parseOpenAPI(read)
	if err != nil {
		t.Fatal(err)
	}
	s, _ := ops[0].inputSchema()
	got := []string{ops[0].Summary, s.Properties["q"].Description}
	if diff := cmp.Diff([]string{"List it now", "ab A"}, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestEmbeddedOpenAPIPlain: the embedded document, parsed as it is, holds no
// hidden character, raw or escaped, that readDoc would remove.
func TestEmbeddedOpenAPIPlain(t *testing.T) {
	t.Parallel()
	read, err := readDoc(bytes.NewReader(embeddedOpenAPI))
	if err != nil || !bytes.Equal(read, embeddedOpenAPI) {
		t.Errorf("readDoc changes the embedded document (%v): it holds hidden characters", err)
	}
}

// TestDecodeStrings: the scanner's split of a string array agrees with
// encoding/json, to which anything but a plain array goes.
func TestDecodeStrings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{in: `["repository"]`, want: []string{"repository"}},
		{in: `[ "a" , "b\u00e9\"" ]`, want: []string{"a", `bé"`}},
		{in: `[]`, want: []string{}},
		{in: `null`},
		{in: `["a",null]`, want: []string{"a", ""}},
		{in: `["a",]`, err: true},
		{in: `["a" "b"]`, err: true},
		{in: `["a",1]`, err: true},
		{in: `[["a"]]`, err: true},
		{in: `"a"`, err: true},
		{in: `["a"`, err: true},
	} {
		got, err := decodeStrings([]byte(tc.in))
		if (err != nil) != tc.err {
			t.Errorf("decodeStrings(%s): error %v, want error %v", tc.in, err, tc.err)
		} else if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("decodeStrings(%s) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzDecodeStrings checks decodeStrings against encoding/json on any input:
// what it decodes into a string array, decodeStrings decodes the same, and
// what it refuses, decodeStrings refuses.
func FuzzDecodeStrings(f *testing.F) {
	for _, s := range []string{`["a","b"]`, `[]`, `null`, `["\u00e9\n",null]`, `["a",]`, `[1]`, "[\"a\x01\"]"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeStrings(b)
		var want []string
		if wantErr := json.Unmarshal(b, &want); (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeStrings(%q): error %v, encoding/json's %v", b, err, wantErr)
		} else if diff := cmp.Diff(want, got); err == nil && diff != "" {
			t.Fatalf("decodeStrings(%q) mismatch (-want +got):\n%s", b, diff)
		}
	})
}

// TestDecodeString: the scanner's string decoder agrees with encoding/json,
// which refuses a raw control character or quote within a string.
func TestDecodeString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		err      bool
	}{
		{in: `"plain"`, want: "plain"},
		{in: `""`, want: ""},
		{in: `"a\"b\\c\/\n\u00e9\ud83d\ude00"`, want: "a\"b\\c/\né😀"},
		{in: `"\ud800x"`, want: "\ufffdx"},
		{in: "\"caf\xe9\"", want: "caf\ufffd"},
		{in: "\"\x7f\"", want: "\x7f"},
		{in: "\"a\x01b\"", err: true},
		{in: "\"tab\tin\"", err: true},
		{in: "\"line\nbreak\"", err: true},
		{in: "\"\x1f\"", err: true},
		{in: "\"esc\\n then \x00\"", err: true},
		{in: `"a"b"`, err: true},
		{in: `"a\"`, err: true},
		{in: `"\x"`, err: true},
		{in: `"\u12"`, err: true},
		{in: `"a`, err: true},
		{in: `a`, err: true},
	} {
		got, err := decodeString([]byte(tc.in))
		if (err != nil) != tc.err {
			t.Errorf("decodeString(%q): error %v, want error %v", tc.in, err, tc.err)
		} else if diff := cmp.Diff(tc.want, got); !tc.err && diff != "" {
			t.Errorf("decodeString(%q) mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

// FuzzDecodeString checks decodeString against encoding/json on any input:
// the same string, or an error for both.
func FuzzDecodeString(f *testing.F) {
	for _, s := range []string{`"a"`, `"a\"b\u00e9\ud83d\ude00"`, "\"a\x01\"", `"a"b"`, "\"\xff\"", `"\ud800\u0041"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decodeString(b)
		var want string
		if wantErr := json.Unmarshal(b, &want); (err != nil) != (wantErr != nil) {
			t.Fatalf("decodeString(%q): error %v, encoding/json's %v", b, err, wantErr)
		} else if err == nil && got != want {
			t.Fatalf("decodeString(%q) = %q, encoding/json's %q", b, got, want)
		}
	})
}

func BenchmarkParseOpenAPI(b *testing.B) {
	for b.Loop() {
		if _, err := parseOpenAPI(embeddedOpenAPI); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSameOperations: a document other than the embedded one may add
// operations, but not relabel or reroute Gitea 1.26.0's, nor use routes
// with empty, "." or ".." segments.
func TestSameOperations(t *testing.T) {
	t.Parallel()
	known, err := parseOpenAPI(embeddedOpenAPI)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameOperations(known); err != nil {
		t.Fatalf("the embedded document itself: %v", err)
	}
	for _, tc := range []struct {
		id, method, route string
		ok                bool
	}{
		{"issueCreateIssue", "POST", "/repos/{owner}/{repo}/issues", true},
		{"issueCreateIssue", "POST", "/repos/{o}/{r}/issues", false},        // names the policy reads by
		{"issueCreateIssue", "POST", "/repos/{repo}/{owner}/issues", false}, // swapped: the policy would judge repo/owner
		{"someNewOperation", "POST", "/repos/{repo}/{owner}/new-thing", false},
		{"someNewOperation", "POST", "/repos/{owner}/{index}/x/{repo}", false},
		{"someNewOperation", "GET", "/packages/{owner}/{type}/{name}/-/link/{repo_name}/x", true},
		{"someNewOperation", "POST", "/repos/{owner}/{repo}/new-thing", true},
		{"someNewOperation", "GET", "/repos/{owner}/{repo}/pulls/{index}.{diffType}/x", true},
		{"issueCreateIssue", "PUT", "/user/starred/{owner}/{repo}", false},
		{"issueCreateIssue", "DELETE", "/repos/{owner}/{repo}/issues", false},
		{"someNewOperation", "POST", "/orgs/{x}/repos", false}, // createOrgRepo under another id
		{"someNewOperation", "POST", "/repos/{owner}/{repo}/issues/{index}/../../../../../admin/users", false},
		{"someNewOperation", "POST", "/repos/{owner}/{repo}/./issues", false},
		{"someNewOperation", "POST", "/orgs/{org}/repos/", false},
		{"someNewOperation", "POST", "/orgs//{org}/repos", false},
		{"someNewOperation", "POST", "/orgs/{org}/repos?x=1", false},
		{"someNewOperation", "POST", "/orgs/{org}/re%2fpos", false},
		{"someNewOperation", "POST", "orgs/{org}/repos", false},
	} {
		op := &operation{ID: tc.id, Method: tc.method, Route: tc.route}
		if i, found := slices.BinarySearchFunc(known, tc.id, func(o *operation, id string) int { return strings.Compare(o.ID, id) }); found {
			op.raw, op.defs = known[i].raw, known[i].defs // the same arguments: only the route is judged here
		}
		if err := sameOperations([]*operation{op}); (err == nil) != tc.ok {
			t.Errorf("%s %s %s: got %v, want ok %v", tc.id, tc.method, tc.route, err, tc.ok)
		}
	}
}

// TestSameArguments: a live or file document must give an operation of Gitea
// 1.26.0's document the same arguments, each where Gitea reads it; it may
// reword a summary or add an operation.
func TestSameArguments(t *testing.T) {
	t.Parallel()
	const create = "/repos/{owner}/{repo}/contents/{filepath}"
	for _, tc := range []struct {
		name string
		edit func(paths, defs map[string]any)
		want string // "" when the document is accepted
	}{
		{"unchanged", func(paths, defs map[string]any) {}, ""},
		{"summary reworded", func(paths, defs map[string]any) {
			paths[create].(map[string]any)["post"].(map[string]any)["summary"] = "Write a file"
		}, ""},
		{"new operation", func(paths, defs map[string]any) {
			paths["/repos/{owner}/{repo}/new-thing"] = map[string]any{"get": map[string]any{"operationId": "someNewOperation",
				"parameters": []any{map[string]any{"name": "new_branch", "in": "query", "type": "string"}}}}
		}, ""},
		{"body field also in the query", func(paths, defs map[string]any) {
			op := paths[create].(map[string]any)["post"].(map[string]any)
			op["parameters"] = append(op["parameters"].([]any), map[string]any{"name": "new_branch", "in": "query", "type": "string"})
		}, `operation "repoCreateFile" takes other arguments`},
		{"body field renamed", func(paths, defs map[string]any) { // Gitea folds it into delete_branch_after_merge
			props := defs["MergePullRequestOption"].(map[string]any)["properties"].(map[string]any)
			props["Delete_Branch_After_Merge"] = props["delete_branch_after_merge"]
			delete(props, "delete_branch_after_merge")
		}, `operation "repoMergePullRequest" takes other arguments`},
		{"path parameter moved to the query", func(paths, defs map[string]any) {
			op := paths[create].(map[string]any)["post"].(map[string]any)
			op["parameters"].([]any)[2].(map[string]any)["in"] = "query"
		}, `operation "repoCreateFile" takes other arguments`},
		{"identity parameter", func(paths, defs map[string]any) {
			op := paths["/user"].(map[string]any)["get"].(map[string]any)
			op["parameters"] = []any{map[string]any{"name": "sudo", "in": "query", "type": "string"}}
		}, `userGetCurrent: query parameter "sudo" would change who acts`},
	} {
		var doc map[string]any
		if err := json.Unmarshal(embeddedOpenAPI, &doc); err != nil {
			t.Fatal(err)
		}
		tc.edit(doc["paths"].(map[string]any), doc["definitions"].(map[string]any))
		b, err := json.Marshal(doc)
		if err != nil {
			t.Fatal(err)
		}
		ops, err := parseOpenAPI(b)
		if err != nil {
			t.Fatal(err)
		}
		err = sameOperations(ops)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("%s: got %v, want %q", tc.name, err, tc.want)
		}
	}
}

// TestIdentityParams: an operation with a query parameter by which Gitea
// would act as another user or with another token has no schema, so it can
// be neither listed nor called; a path parameter "token" is only a name.
func TestIdentityParams(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		param string
		ok    bool
	}{
		{`{"name":"sudo","in":"query","type":"string"}`, false},
		{`{"name":"SUDO","in":"query","type":"string"}`, false},
		{`{"name":"token","in":"query","type":"string"}`, false},
		{`{"name":"access_token","in":"query","type":"string"}`, false},
		{`{"name":"token","in":"path","type":"string","required":true}`, true},
		{`{"name":"sudoku","in":"query","type":"string"}`, true},
	} {
		doc := `{"swagger":"2.0","paths":{"/x/{token}":{"get":{"operationId":"x","parameters":[` + tc.param + `]}}}}`
		ops, err := parseOpenAPI([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ops[0].inputSchema(); (err == nil) != tc.ok {
			t.Errorf("%s: got %v, want ok %v", tc.param, err, tc.ok)
		}
	}
}

// TestSchemasStrict: in every tool's input schema (every operation listed,
// and the hand-written tools), each keyword applies to a type the schema
// names, as strict validators require (ajv's strictTypes, the MCP
// inspector's --strict): Gitea's document sets uniqueItems on strings.
func TestSchemasStrict(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_URL": "http://127.0.0.1:9", "GITEA_TOKEN": fakeToken, "GITEA_MCP_PROFILE": "gitea-owner", "GITEA_MCP_TOOLS": "all"})
	if err := s.wait(); err != nil {
		t.Fatal(err)
	}
	needs := map[string]string{"uniqueItems": "array", "items": "array", "minItems": "array", "maxItems": "array",
		"properties": "object", "additionalProperties": "object", "required": "object",
		"minLength": "string", "maxLength": "string", "pattern": "string", "minimum": "number", "maximum": "number"}
	var walk func(tool, path string, v any)
	walk = func(tool, path string, v any) {
		m, ok := v.(map[string]any)
		if !ok {
			return
		}
		types := map[string]bool{}
		switch ty := m["type"].(type) {
		case string:
			types[ty] = true
		case []any:
			for _, e := range ty {
				types[e.(string)] = true
			}
		}
		types["number"] = types["number"] || types["integer"]
		for kw, want := range needs {
			if _, set := m[kw]; set && !types[want] {
				t.Errorf("%s %s: %s without type %s (type %v)", tool, path, kw, want, m["type"])
			}
		}
		walk(tool, path+"[]", m["items"])
		walk(tool, path+"{}", m["additionalProperties"])
		props, _ := m["properties"].(map[string]any)
		for name, p := range props {
			walk(tool, path+"."+name, p)
		}
	}
	if len(s.cat.listed) < 400 {
		t.Fatalf("%d tools listed, want every operation's", len(s.cat.listed))
	}
	for _, tl := range s.cat.listed {
		var entry struct {
			InputSchema any `json:"inputSchema"`
		}
		if err := json.Unmarshal(tl.listingJSON(), &entry); err != nil {
			t.Fatal(err)
		}
		walk(tl.name, "", entry.InputSchema)
	}
}

// TestRouteSpecs: routeSpec decodes only the operations that may spell an
// enum, and reads the same enum path parameters as a whole decoding of the
// document, and in a key that is spelt in another case or escaped.
func TestRouteSpecs(t *testing.T) {
	t.Parallel()
	var got []routeSpec
	for _, op := range docOperations(t) {
		got = append(got, op.routeSpec())
	}
	slices.SortFunc(got, func(a, b routeSpec) int { return strings.Compare(a.OperationID, b.OperationID) })
	if diff := cmp.Diff(docRoutes(t), got); diff != "" {
		t.Errorf("route specs of the document: mismatch (-want +got):\n%s", diff)
	}
	for _, key := range []string{"enum", "ENUM", "eNum", `\u0065num`, `e\u006Eum`} {
		doc := `{"swagger":"2.0","paths":{"/a/{k}":{"get":{"operationId":"x","parameters":[{"name":"k","in":"path","` + key + `":["b","c"]}]}}}}`
		ops, err := parseOpenAPI([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		want := routeSpec{Method: "GET", Route: "/a/{k}", OperationID: "x", Enums: map[string][]string{"k": {"b", "c"}}}
		if diff := cmp.Diff(want, ops[0].routeSpec()); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", key, diff)
		}
	}
}
