package main

import (
	"encoding/json"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// docRoutes reads the operations of the OpenAPI document straight from its
// JSON, not through parseOpenAPI, so that they can check what the server
// makes of the document; sorted by operationId. The slice is the caller's.
func docRoutes(tb testing.TB) []routeSpec {
	tb.Helper()
	specs, err := readDocRoutes()
	if err != nil {
		tb.Fatalf("openapi document: %v", err)
	}
	return slices.Clone(specs)
}

// docOps returns the operations of docRoutes by operationId.
func docOps(tb testing.TB) map[string]opInfo {
	ops := map[string]opInfo{}
	for _, s := range docRoutes(tb) {
		ops[s.OperationID] = opInfo{ID: s.OperationID, Method: s.Method, Route: s.Route}
	}
	return ops
}

// readDocRoutes reads the document once for docRoutes.
var readDocRoutes = sync.OnceValues(func() ([]routeSpec, error) {
	var d struct {
		Paths map[string]map[string]struct { // the document has no path-level "parameters"
			OperationID string `json:"operationId"`
			Parameters  []struct {
				Name, In string
				Enum     []string
			} `json:"parameters"`
		} `json:"paths"`
	}
	if err := json.Unmarshal(embeddedOpenAPI, &d); err != nil {
		return nil, err
	}
	var specs []routeSpec
	for route, methods := range d.Paths {
		for method, o := range methods {
			s := routeSpec{Method: strings.ToUpper(method), Route: route, OperationID: o.OperationID}
			for _, p := range o.Parameters {
				if p.In == "path" && p.Enum != nil {
					s.Enums = map[string][]string{p.Name: p.Enum}
				}
			}
			specs = append(specs, s)
		}
	}
	slices.SortFunc(specs, func(a, b routeSpec) int { return strings.Compare(a.OperationID, b.OperationID) })
	return specs, nil
})

// docOperations returns the operations of the embedded document as the
// server parses them, parsed once; the slice is the caller's.
func docOperations(tb testing.TB) []*operation {
	tb.Helper()
	ops, err := parseDocOnce()
	if err != nil {
		tb.Fatal(err)
	}
	return slices.Clone(ops)
}

// parseDocOnce parses the embedded document once for docOperations.
var parseDocOnce = sync.OnceValues(func() ([]*operation, error) { return parseOpenAPI(embeddedOpenAPI) })

// routeParams returns the placeholder names of a route template.
func routeParams(route string) []string {
	var names []string
	for _, part := range strings.Split(route, "{")[1:] {
		names = append(names, part[:strings.IndexByte(part, '}')])
	}
	return names
}

// sampleParams gives every parameter of s a value: "a/b" for wildcards, the
// first enum value, or "x".
func sampleParams(s routeSpec) map[string]string {
	params := map[string]string{}
	for _, name := range routeParams(s.Route) {
		switch {
		case isWildcard(s.Route, name):
			params[name] = "a/b"
		case s.Enums[name] != nil:
			params[name] = s.Enums[name][0]
		default:
			params[name] = "x"
		}
	}
	return params
}

// matchResult is what match returns, for diffs.
type matchResult struct {
	Op     string
	Params map[string]string
	Err    string
}

// matchOf runs t.match and packs its result.
func matchOf(t *routeTable, method, path string) matchResult {
	op, params, err := t.match(method, path)
	if err != nil {
		return matchResult{Err: err.Error()}
	}
	return matchResult{Op: op, Params: params}
}

// TestWildcardParams checks every wildcard rule against the document and its examples.
func TestWildcardParams(t *testing.T) {
	t.Parallel()
	specs := docRoutes(t)
	table := newRouteTable(specs)
	for _, rule := range wildcardParams {
		i := slices.IndexFunc(specs, func(s routeSpec) bool { return s.Route == rule.route })
		if i < 0 || !slices.Contains(routeParams(rule.route), rule.param) {
			t.Errorf("%s: no parameter %q in the document", rule.route, rule.param)
			continue
		}
		for value, want := range rule.examples {
			params := map[string]string{"owner": "alice", "repo": "demo", "base": "main", rule.param: value}
			got, err := encodePath(rule.route, params)
			if err != nil || got != want {
				t.Errorf("encodePath(%q, %s=%q) = %q, %v; want %q", rule.route, rule.param, value, got, err, want)
				continue
			}
			if !strings.Contains(rule.route, "{base}") {
				delete(params, "base")
			}
			wantMatch := matchResult{Op: specs[i].OperationID, Params: params}
			if diff := cmp.Diff(wantMatch, matchOf(table, specs[i].Method, got)); diff != "" {
				t.Errorf("match(%q) mismatch (-want +got):\n%s", got, diff)
			}
		}
	}
}

// TestEncodePath checks single-segment encoding and other accepted values.
func TestEncodePath(t *testing.T) {
	t.Parallel()
	repo := map[string]string{"owner": "alice", "repo": "demo"}
	with := func(kv ...string) map[string]string {
		m := map[string]string{"owner": "alice", "repo": "demo"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		route  string
		params map[string]string
		want   string
	}{
		{"/version", nil, "/version"},
		{"/repos/{owner}/{repo}", repo, "/repos/alice/demo"},
		{"/repos/{owner}/{repo}/releases/tags/{tag}", with("tag", "rel/1.0"), "/repos/alice/demo/releases/tags/rel%2F1.0"},
		{"/repos/{owner}/{repo}/editorconfig/{filepath}", with("filepath", "src/a b.go"), "/repos/alice/demo/editorconfig/src%2Fa%20b.go"},
		{"/repos/{owner}/{repo}/pulls/{base}/{head}", with("base", "release/1", "head", "feature/x"), "/repos/alice/demo/pulls/release%2F1/feature/x"},
		{"/repos/{owner}/{repo}/issues/{index}", with("index", "5?x=1#y"), "/repos/alice/demo/issues/5%3Fx=1%23y"},
		{"/repos/{owner}/{repo}/issues/{index}", with("index", "a//b"), "/repos/alice/demo/issues/a%2F%2Fb"},
		{"/repos/{owner}/{repo}", with("owner", "café", "repo", "a;b,c"), "/repos/caf%C3%A9/a%3Bb%2Cc"},
		{"/repos/{owner}/{repo}/git/commits/{sha}.{diffType}", with("sha", "abc", "diffType", "diff"), "/repos/alice/demo/git/commits/abc.diff"},
		{"/repos/{owner}/{repo}/branches/{branch}", with("branch", "a%2Fb"), "/repos/alice/demo/branches/a%252Fb"},
		{"/repos/{owner}/{repo}/branches/{branch}", with("branch", "...", "x", "ignored"), "/repos/alice/demo/branches/..."},
	}
	for _, tt := range tests {
		got, err := encodePath(tt.route, tt.params)
		if err != nil || got != tt.want {
			t.Errorf("encodePath(%q, %v) = %q, %v; want %q", tt.route, tt.params, got, err, tt.want)
		}
	}
}

// TestEncodePathRefusals checks the values encodePath refuses and its messages.
func TestEncodePathRefusals(t *testing.T) {
	t.Parallel()
	const (
		branch = "/repos/{owner}/{repo}/branches/{branch}"
		tag    = "/repos/{owner}/{repo}/releases/tags/{tag}"
		diff   = "/repos/{owner}/{repo}/git/commits/{sha}.{diffType}"
	)
	tests := []struct {
		route, param, value, want string
	}{
		{branch, "branch", "", `path parameter "branch": missing`},
		{branch, "owner", "", `path parameter "owner": missing`},
		{branch, "branch", "..", `path parameter "branch": dot segment not allowed`},
		{branch, "branch", ".", `path parameter "branch": dot segment not allowed`},
		{branch, "branch", "a/../b", `path parameter "branch": dot segment not allowed`},
		{branch, "branch", "a/./b", `path parameter "branch": dot segment not allowed`},
		{branch, "branch", "a/..", `path parameter "branch": dot segment not allowed`},
		{branch, "branch", "/a", `path parameter "branch": empty segment not allowed`},
		{branch, "branch", "a/", `path parameter "branch": empty segment not allowed`},
		{branch, "branch", "a//b", `path parameter "branch": empty segment not allowed`},
		{tag, "tag", "..", `path parameter "tag": dot segment not allowed`},
		{tag, "tag", "../x", `path parameter "tag": dot segment not allowed`},
		{tag, "tag", "rel/../x", `path parameter "tag": dot segment not allowed`},
		{tag, "owner", "..", `path parameter "owner": dot segment not allowed`},
		{tag, "tag", "a\nb", `path parameter "tag": control character not allowed`},
		{tag, "tag", "a\x7f", `path parameter "tag": control character not allowed`},
		{tag, "tag", "a\u0085", `path parameter "tag": control character not allowed`},
		{branch, "branch", "a\x00/b", `path parameter "branch": control character not allowed`},
		{tag, "tag", "a\xff", `path parameter "tag": invalid utf-8`},
		{diff, "sha", "a.b", `path parameter "sha": "." not allowed in this route`},
		{diff, "sha", "x/", `path "/repos/alice/demo/git/commits/x%2F.%2Fdiff": dot segment not allowed once %2F is decoded`},
	}
	for _, tt := range tests {
		// diffType "/diff" (outside its enum, which encodePath does not check) sets up the %2F case.
		params := map[string]string{"owner": "alice", "repo": "demo", "sha": "abc", "diffType": "/diff", tt.param: tt.value}
		got, err := encodePath(tt.route, params)
		if err == nil || err.Error() != tt.want {
			t.Errorf("encodePath(%q, %s=%q) = %q, %v; want error %q", tt.route, tt.param, tt.value, got, err, tt.want)
		}
	}
}

// TestCheckRawPath checks the raw tool's path normalization and refusals.
func TestCheckRawPath(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in, want, wantErr string
	}{
		{in: "repos/alice/demo/branches/feature/x", want: "/repos/alice/demo/branches/feature/x"},
		{in: "/version", want: "/version"},
		{in: "/repos/alice/demo/contents/read me.md", want: "/repos/alice/demo/contents/read me.md"},
		{in: "/repos/alice/demo/contents/café:1", want: "/repos/alice/demo/contents/café:1"},
		{in: "/repos/alice/demo/compare/main...x", want: "/repos/alice/demo/compare/main...x"},
		{in: "", wantErr: "path: empty segment not allowed"},
		{in: "/", wantErr: "path: empty segment not allowed"},
		{in: "/repos//demo", wantErr: "path: empty segment not allowed"},
		{in: "/repos/alice/", wantErr: "path: empty segment not allowed"},
		{in: "/repos/./x", wantErr: "path: dot segment not allowed"},
		{in: "/repos/alice/..", wantErr: "path: dot segment not allowed"},
		{in: "../admin/users", wantErr: "path: dot segment not allowed"},
		{in: "/api/v1/version", wantErr: "path: must be relative to /api/v1, without that prefix"},
		{in: "api/v1", wantErr: "path: must be relative to /api/v1, without that prefix"},
		{in: "https://evil.example/x", wantErr: "path: absolute url not allowed"},
		{in: "//evil.example/x", wantErr: "path: absolute url not allowed"},
		{in: "mailto:x", wantErr: "path: absolute url not allowed"},
		{in: "/version?x=1", wantErr: "path: query or fragment not allowed (pass query parameters separately)"},
		{in: "/version#x", wantErr: "path: query or fragment not allowed (pass query parameters separately)"},
		{in: "/repos/alice/demo/raw/a%2Fb", wantErr: "path: percent-encoding not allowed (use the operation's own tool)"},
		{in: `/repos\alice`, wantErr: "path: backslash not allowed"},
		{in: "/version\r\n", wantErr: "path: control character not allowed"},
		{in: "/version\x00", wantErr: "path: control character not allowed"},
		{in: "/\xff", wantErr: "path: invalid utf-8"},
	}
	for _, tt := range tests {
		got, err := checkRawPath(tt.in)
		gotErr := ""
		if err != nil {
			gotErr = err.Error()
		}
		if got != tt.want || gotErr != tt.wantErr {
			t.Errorf("checkRawPath(%q) = %q, %q; want %q, %q", tt.in, got, gotErr, tt.want, tt.wantErr)
		}
	}
}

// TestMatch checks route precedence against Gitea's router on the document's routes.
func TestMatch(t *testing.T) {
	t.Parallel()
	table := newRouteTable(docRoutes(t))
	repo := func(kv ...string) map[string]string {
		m := map[string]string{"owner": "alice", "repo": "demo"}
		for i := 0; i < len(kv); i += 2 {
			m[kv[i]] = kv[i+1]
		}
		return m
	}
	tests := []struct {
		method, path string
		want         matchResult
	}{
		// Literal segments beat parameters, as in Gitea's router (chi tries static edges first).
		{"GET", "/repos/alice/demo/issues/comments", matchResult{Op: "issueGetRepoComments", Params: repo()}},
		{"GET", "/repos/alice/demo/issues/5", matchResult{Op: "issueGetIssue", Params: repo("index", "5")}},
		{"GET", "/repos/issues/search", matchResult{Op: "issueSearchIssues", Params: map[string]string{}}},
		{"get", "/repos/alice/demo", matchResult{Op: "repoGet", Params: repo()}},
		// A parameter with text ({index}.{diffType}) beats a bare parameter. Gitea checks diffType
		// with the regexp "^diff|patch$", which also takes "diff.x"; a value outside the enum is refused.
		{"GET", "/repos/alice/demo/pulls/5.diff", matchResult{Op: "repoDownloadPullDiffOrPatch", Params: repo("index", "5", "diffType", "diff")}},
		{"GET", "/repos/alice/demo/pulls/5.txt", matchResult{Err: `uncertain route for GET "/repos/alice/demo/pulls/5.txt": repoDownloadPullDiffOrPatch wants diffType in ["diff" "patch"]`}},
		{"GET", "/repos/alice/demo/pulls/5.diff.x", matchResult{Err: `uncertain route for GET "/repos/alice/demo/pulls/5.diff.x": repoDownloadPullDiffOrPatch wants diffType in ["diff" "patch"]`}},
		{"GET", "/repos/alice/demo/pulls/5", matchResult{Op: "repoGetPullRequest", Params: repo("index", "5")}},
		{"GET", "/repos/alice/demo/git/commits/abc.patch", matchResult{Op: "repoDownloadCommitDiffOrPatch", Params: repo("sha", "abc", "diffType", "patch")}},
		{"GET", "/repos/alice/demo/git/commits/abc", matchResult{Op: "repoGetSingleCommit", Params: repo("sha", "abc")}},
		// Wildcards span segments; later literals anchor at the end.
		{"GET", "/repos/alice/demo/pulls/main/feature/x", matchResult{Op: "repoGetPullRequestByBaseHead", Params: repo("base", "main", "head", "feature/x")}},
		{"GET", "/repos/alice/demo/pulls/main/commits", matchResult{Op: "repoGetPullRequestCommits", Params: repo("index", "main")}},
		{"GET", "/repos/alice/demo/commits/feature/x/status", matchResult{Op: "repoGetCombinedStatusByRef", Params: repo("ref", "feature/x")}},
		{"GET", "/repos/alice/demo/commits/a/status/status", matchResult{Op: "repoGetCombinedStatusByRef", Params: repo("ref", "a/status")}},
		{"GET", "/repos/alice/demo/commits/abc/pull", matchResult{Op: "repoGetCommitPullRequest", Params: repo("sha", "abc")}},
		{"GET", "/repos/alice/demo/contents/src/pkg/main.go", matchResult{Op: "repoGetContents", Params: repo("filepath", "src/pkg/main.go")}},
		// The method is part of the route, as chi keeps searching when a node lacks it.
		{"POST", "/repos/alice/demo/branch_protections/priority", matchResult{Op: "repoUpdateBranchProtectionPriories", Params: repo()}},
		{"PATCH", "/repos/alice/demo/branch_protections/priority", matchResult{Op: "repoEditBranchProtection", Params: repo("name", "priority")}},
		// Escaped values (from encodePath) come back unescaped.
		{"GET", "/repos/alice/demo/releases/tags/rel%2F1.0", matchResult{Op: "repoGetReleaseByTag", Params: repo("tag", "rel/1.0")}},
		{"GET", "/repos/alice/demo/releases/tags/rel/1.0", matchResult{Err: `no route for GET "/repos/alice/demo/releases/tags/rel/1.0"`}},
		{"GET", "/repos/alice/demo/issues/%zz", matchResult{Err: `no route for GET "/repos/alice/demo/issues/%zz"`}},
		{"GET", "/repos/alice/demo/branches/a//b", matchResult{Err: `no route for GET "/repos/alice/demo/branches/a//b"`}},
		{"DELETE", "/version", matchResult{Err: `no route for DELETE "/version"`}},
		{"GET", "/repos/alice/demo/tarball/main", matchResult{Err: `no route for GET "/repos/alice/demo/tarball/main"`}},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, matchOf(table, tt.method, tt.path)); diff != "" {
			t.Errorf("match(%s, %q) mismatch (-want +got):\n%s", tt.method, tt.path, diff)
		}
	}
	twins := newRouteTable([]routeSpec{{"GET", "/a/{x}", "opA", nil}, {"GET", "/a/{y}", "opB", nil}, {"GET", "/a/b", "opC", nil}})
	want := matchResult{Err: `ambiguous route for GET "/a/1": opA or opB`}
	if diff := cmp.Diff(want, matchOf(twins, "GET", "/a/1")); diff != "" {
		t.Errorf("match of equal routes mismatch (-want +got):\n%s", diff)
	}
}

// roundTripExceptions lists the operations whose sample path resolves to
// another operation, with the reason. None in Gitea 1.26.0's document.
var roundTripExceptions = map[string]string{}

// TestRoundTrip encodes sample values for every operation of the document and
// matches the path back to the same operation and values.
func TestRoundTrip(t *testing.T) {
	t.Parallel()
	specs := docRoutes(t)
	if len(specs) != 471 {
		t.Errorf("operations: got %d, want 471", len(specs))
	}
	table := newRouteTable(specs)
	for _, s := range specs {
		params := sampleParams(s)
		path, err := encodePath(s.Route, params)
		if err != nil {
			t.Errorf("%s: encodePath(%q): %v", s.OperationID, s.Route, err)
			continue
		}
		got := matchOf(table, s.Method, path)
		if reason, ok := roundTripExceptions[s.OperationID]; ok {
			if got.Op == s.OperationID {
				t.Errorf("%s round-trips but is listed as an exception (%s)", s.OperationID, reason)
			}
			continue
		}
		if diff := cmp.Diff(matchResult{Op: s.OperationID, Params: params}, got); diff != "" {
			t.Errorf("%s %s %s mismatch (-want +got):\n%s", s.OperationID, s.Method, path, diff)
		}
		if _, err := table.expand(s, params); err != nil {
			t.Errorf("%s: expand: %v", s.OperationID, err)
		}
	}
}

// TestExpandRefusesShadowedValues checks that expand refuses a path another route takes.
func TestExpandRefusesShadowedValues(t *testing.T) {
	t.Parallel()
	table := newRouteTable(docRoutes(t))
	spec := routeSpec{"GET", "/repos/{owner}/{repo}/pulls/{base}/{head}", "repoGetPullRequestByBaseHead", nil}
	params := map[string]string{"owner": "alice", "repo": "demo", "base": "main", "head": "commits"}
	_, err := table.expand(spec, params)
	want := `path "/repos/alice/demo/pulls/main/commits" does not resolve to operation "repoGetPullRequestByBaseHead"`
	if err == nil || err.Error() != want {
		t.Errorf("expand(head=commits) error = %v; want %q", err, want)
	}
	// A path that resolves to the operation with other values is refused too
	// (here a table naming the two values in the other order).
	swapped := newRouteTable([]routeSpec{{"GET", "/a/{y}/{x}", "op", nil}})
	_, err = swapped.expand(routeSpec{"GET", "/a/{x}/{y}", "op", nil}, map[string]string{"x": "1", "y": "2"})
	if want := `path "/a/1/2" does not resolve to operation "op"`; err == nil || err.Error() != want {
		t.Errorf("expand(swapped values) error = %v; want %q", err, want)
	}
}

// FuzzEncodePath checks that no accepted value escapes its route.
func FuzzEncodePath(f *testing.F) {
	specs := docRoutes(f)
	for i, v := range []string{"x", "feature/x", "../a", "a/%2e%2e/b", "a?b#c", "a b\x00", ".", "a.b", "rel/1.0", "é/ü"} {
		f.Add(uint(i*47), v)
	}
	f.Fuzz(func(t *testing.T, i uint, v string) {
		s := specs[i%uint(len(specs))]
		params := map[string]string{}
		for _, name := range routeParams(s.Route) {
			params[name] = v
		}
		path, err := encodePath(s.Route, params)
		if err != nil {
			return
		}
		if strings.ContainsAny(path, "?#") || strings.IndexFunc(path, unicode.IsControl) >= 0 || strings.ContainsRune(path, utf8.RuneError) {
			t.Fatalf("encodePath(%q, %q) = %q: raw query, fragment or control character", s.Route, v, path)
		}
		for seg := range strings.SplitSeq(strings.ReplaceAll(path, "%2F", "/"), "/") {
			if seg == "." || seg == ".." {
				t.Fatalf("encodePath(%q, %q) = %q: dot segment", s.Route, v, path)
			}
		}
		own := newRouteTable([]routeSpec{{s.Method, s.Route, s.OperationID, nil}})
		want := matchResult{Op: s.OperationID, Params: params}
		if diff := cmp.Diff(want, matchOf(own, s.Method, path)); diff != "" {
			t.Fatalf("encodePath(%q, %q) = %q escapes its route (-want +got):\n%s", s.Route, v, path, diff)
		}
	})
}

// FuzzCheckRawPath checks accepted raw paths and that the operation they match
// builds the same path through encodePath.
func FuzzCheckRawPath(f *testing.F) {
	specs := docRoutes(f)
	table := newRouteTable(specs)
	for _, p := range []string{"/repos/alice/demo/branches/feature/x", "repos/a/b/pulls/5.diff", "/api/v1/x", "//h/x", "/a/../b", "/a%2Fb", "/a\\b", "/a?b", "x:y/z", "/repos/a/b/commits/x/status/status"} {
		f.Add(p)
	}
	byOp := map[string]routeSpec{}
	for _, s := range specs {
		byOp[s.OperationID] = s
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := checkRawPath(p)
		if err != nil {
			return
		}
		if got != "/"+strings.TrimPrefix(p, "/") || strings.ContainsAny(got, `%?#\`) || !utf8.ValidString(got) || strings.IndexFunc(got, unicode.IsControl) >= 0 {
			t.Fatalf("checkRawPath(%q) = %q", p, got)
		}
		if first, _, _ := strings.Cut(got[1:], "/"); strings.Contains(first, ":") {
			t.Fatalf("checkRawPath(%q) = %q: scheme", p, got)
		}
		for seg := range strings.SplitSeq(got[1:], "/") {
			if seg == "" || seg == "." || seg == ".." {
				t.Fatalf("checkRawPath(%q) = %q: bad segment %q", p, got, seg)
			}
		}
		if again, err := checkRawPath(got); again != got || err != nil {
			t.Fatalf("checkRawPath(%q) = %q, %v; not idempotent", got, again, err)
		}
		// The raw path and the generated tool of the operation it matches agree.
		for _, method := range []string{"GET", "POST", "PUT", "PATCH", "DELETE"} {
			op, params, err := table.match(method, got)
			if err != nil {
				continue
			}
			enc, err := encodePath(byOp[op].Route, params)
			if err != nil {
				t.Fatalf("%s %q matches %s %v, which encodePath refuses: %v", method, got, op, params, err)
			}
			if again := matchOf(table, method, enc); again.Op != op || !cmp.Equal(again.Params, params) {
				t.Fatalf("%s %q matches %s %v, its encoding %q matches %v", method, got, op, params, enc, again)
			}
		}
	})
}

// FuzzTyped checks that the raw door's reading of a query or path text
// (typed) sends what the text says to Gitea: a number exactly as written, a
// boolean as Go's strconv (Gitea's reader) reads it, anything else as the
// text itself, within a list of one for an array parameter.
func FuzzTyped(f *testing.F) {
	for _, s := range []string{"10", "-1", "1.5e3", "007", "+1", "true", "F", "1", "yes", "", "a,b"} {
		f.Add(s)
	}
	schemas := []*Schema{{Type: "integer"}, {Type: "number"}, {Type: "boolean"}, {Type: "string"}, {Type: "array", Items: &Schema{Type: "integer"}}, nil}
	f.Fuzz(func(t *testing.T, text string) {
		for _, s := range schemas {
			v := typed(s, text)
			if list, ok := v.([]any); ok && s != nil && s.Type == "array" && len(list) == 1 {
				v, s = list[0], s.Items
			}
			var q = url.Values{}
			addQuery(q, "x", v, "multi")
			sent := q.Get("x")
			switch v := v.(type) {
			case json.Number:
				if sent != text || !schemaNumber.MatchString(text) || s.Type != "integer" && s.Type != "number" {
					t.Fatalf("typed(%v, %q) = number %q, sent %q", s, text, v, sent)
				}
			case bool:
				if b, err := strconv.ParseBool(text); err != nil || b != v || s.Type != "boolean" || sent != strconv.FormatBool(b) {
					t.Fatalf("typed(%v, %q) = %v, sent %q", s, text, v, sent)
				}
			case string:
				if v != text || sent != text {
					t.Fatalf("typed(%v, %q) = %q, sent %q", s, text, v, sent)
				}
			default:
				t.Fatalf("typed(%v, %q) = %#v", s, text, v)
			}
		}
	})
}

// BenchmarkEncodePath measures a wildcard and a single-segment route.
func BenchmarkEncodePath(b *testing.B) {
	params := map[string]string{"owner": "alice", "repo": "demo", "filepath": "src/pkg/main.go", "tag": "rel/1.0"}
	for _, route := range []string{"/repos/{owner}/{repo}/contents/{filepath}", "/repos/{owner}/{repo}/releases/tags/{tag}"} {
		b.Run(route[strings.LastIndexByte(route[:len(route)-1], '/')+1:], func(b *testing.B) {
			for b.Loop() {
				if _, err := encodePath(route, params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkMatch measures matching typical paths against the whole document.
func BenchmarkMatch(b *testing.B) {
	table := newRouteTable(docRoutes(b))
	for _, path := range []string{"/repos/alice/demo/issues/5/comments", "/repos/alice/demo/contents/src/pkg/main.go", "/user/repos", "/repos/alice/demo/pulls/5/reviews/3/comments", "/repos/alice/demo/commits/feature/x/status"} {
		b.Run(path, func(b *testing.B) {
			for b.Loop() {
				if _, _, err := table.match("GET", path); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestRootPathHint: found by the user-experience test. repoGetContents with
// filepath "" or "." (the repository's root, as a model asks for it) was
// refused with only "path parameter \"filepath\": missing"; the refusal now
// names the operation of the route without it, repoGetContentsList. A write,
// or a read whose route has none, gets no such hint.
func TestRootPathHint(t *testing.T) {
	t.Parallel()
	s := newScriptedGitea(t).user("bob").server(t, "GITEA_MCP_PROFILE", "gitea-author")
	for _, tc := range []struct {
		tool, op string
		args     map[string]any
		want     bool
	}{
		{"repoGetContents", "", map[string]any{"owner": "alice", "repo": "demo", "filepath": ""}, true},
		{"repoGetContents", "", map[string]any{"owner": "alice", "repo": "demo", "filepath": "."}, true},
		{"repoGetContents", "", map[string]any{"owner": "alice", "repo": "demo", "filepath": "a/../b"}, false},
		{"repoGetRawFile", "", map[string]any{"owner": "alice", "repo": "demo", "filepath": ""}, false},
		{"gitea_call_operation", "repoCreateFile", map[string]any{"owner": "alice", "repo": "demo", "filepath": "", "body": map[string]any{"content": "aGk="}}, false},
	} {
		args := tc.args
		if tc.op != "" {
			args = map[string]any{"operation": tc.op, "arguments": tc.args}
		}
		out, isErr := fakeCall(t, t.Context(), s, tc.tool, args)
		msg := str0(get(out, "error.message"))
		if !isErr || strings.Contains(msg, "call repoGetContentsList (GET /repos/{owner}/{repo}/contents)") != tc.want {
			t.Errorf("%s %v: isError %v, %q; want the hint %v", tc.tool, tc.args, isErr, msg, tc.want)
		}
	}
}
