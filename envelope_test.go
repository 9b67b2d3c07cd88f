package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadPagination(t *testing.T) {
	t.Parallel()
	n := func(i int) *int { return &i }
	for _, tc := range []struct {
		name   string
		query  string
		header http.Header
		want   *pagination
	}{
		{"no headers", "", http.Header{}, nil},
		{"first page", "limit=2", http.Header{"X-Total-Count": {"5"}, "Link": {`<http://g/api/v1/repos/a/b/issues?limit=2&page=2>; rel="next",<http://g/api/v1/repos/a/b/issues?limit=2&page=3>; rel="last"`}},
			&pagination{Page: 1, Limit: 2, TotalCount: n(5), NextPage: n(2), LastPage: n(3)}},
		{"last page", "page=3&limit=2", http.Header{"X-Total-Count": {"5"}, "Link": {`<http://g/x?page=1&limit=2>; rel="first", <http://g/x?page=2&limit=2>; rel="prev"`}},
			&pagination{Page: 3, Limit: 2, TotalCount: n(5)}},
		{"limit from link", "", http.Header{"Link": {`<http://g/x?page=2&limit=30>; rel="next"`}},
			&pagination{Page: 1, Limit: 30, NextPage: n(2)}},
		{"garbage", "page=x", http.Header{"X-Total-Count": {"many"}, "Link": {`nonsense, <::>; rel=next`}},
			&pagination{Page: 1}},
	} {
		q, _ := url.ParseQuery(tc.query)
		got := readPagination(&sent{query: q, header: tc.header})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestErrorKind(t *testing.T) {
	t.Parallel()
	want := map[int]string{400: "bad_request", 401: "unauthorized", 403: "forbidden", 404: "not_found",
		405: "method_not_allowed", 409: "conflict", 413: "payload_too_large", 418: "client_error", 422: "validation",
		423: "locked", 429: "rate_limited", 500: "server_error", 503: "server_error", 302: "redirect"}
	got := map[int]string{}
	for status := range want {
		got[status] = errorKind(status)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestScrubBody(t *testing.T) {
	t.Parallel()
	const sha = "0123456789abcdef0123456789abcdef01234567"
	for _, tc := range []struct {
		name      string
		ct, body  string
		maxItems  int
		maxChars  int
		mask      bool
		want      string // data, encoded
		wantTrunc *truncation
		rules     []string
		hidden    int
	}{
		{name: "json object", ct: "application/json;charset=utf-8", body: `{"a": 1, "b": [true, null, "x"]}`, want: `{"a":1,"b":[true,null,"x"]}`},
		{name: "not json under a json type", ct: "application/json", body: `not json`, want: `"error: the answer says application/json but is not valid JSON (8 bytes; invalid character 'o' in literal null (expecting 'u')); it is withheld"`},
		{name: "text", ct: "text/plain", body: "hello", want: `"hello"`},
		{name: "empty", ct: "", body: "", want: `null`},
		{name: "binary", ct: "application/octet-stream", body: "\x00\xff", want: `{"content_base64":"AP8=","content_type":"application/octet-stream","size":2}`},
		{name: "items cut", ct: "application/json", body: `[1, 2, 3, 4]`, maxItems: 2, want: `[1,2]`, wantTrunc: &truncation{ItemsKept: 2, ItemsTotal: 4}},
		{name: "chars cut an array", ct: "application/json", body: `["aaaa","bbbb","cccc"]`, maxChars: 15, want: `["aaaa","bbbb"]`, wantTrunc: &truncation{ItemsKept: 2, ItemsTotal: 3}},
		{name: "chars cut an object", ct: "application/json", body: `{"a":"aaaaaaaaaaaa"}`, maxChars: 8, want: `"{\"a\""`, wantTrunc: &truncation{Chars: true}},
		{name: "commit shas kept", ct: "application/json", mask: true, body: `[{"sha":"` + sha + `","id":"` + sha + `","commit_id":"` + sha + `","merge_commit_sha":"` + sha + `","message":"revert ` + sha + `","parents":[{"sha":"` + sha + `"}]}]`,
			want: `[{"sha":"` + sha + `","id":"` + sha + `","commit_id":"` + sha + `","merge_commit_sha":"` + sha + `","message":"revert ` + sha + `","parents":[{"sha":"` + sha + `"}]}]`},
		{name: "token sha1 masked", ct: "application/json", mask: true, body: `[{"id":1,"name":"ci","sha1":"` + sha + `","token_last_eight":"01234567","scopes":["read:repository"]}]`, want: `[{"id":1,"name":"ci","sha1":"[MASKED]","token_last_eight":"01234567","scopes":["read:repository"]}]`, rules: []string{"gitea_token_sha1"}},
		{name: "token sha1 masked by scopes", ct: "application/json", mask: true, body: `{"scopes":[],"sha1":"abc"}`, want: `{"scopes":[],"sha1":"[MASKED]"}`, rules: []string{"gitea_token_sha1"}},
		{name: "package sha1 kept", ct: "application/json", mask: true, body: `{"id":2,"name":"f.tgz","sha1":"` + sha + `","md5":"x"}`, want: `{"id":2,"name":"f.tgz","sha1":"` + sha + `","md5":"x"}`},
		{name: "secret fields masked in any case, empty kept", ct: "application/json", mask: true, body: `{"id":3,"authorization_header":"Bearer x","config":{"url":"https://h"},"Token":"abc","password":""}`,
			want: `{"id":3,"authorization_header":"[MASKED]","config":{"url":"https://h"},"Token":"[MASKED]","password":""}`, rules: []string{"secret_field"}},
		{name: "planted tokens masked in keys and values", ct: "application/json", mask: true, body: `{"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":[1,true,null,{"body":"use xoxb-123456789012-abcdefghij"}]}`,
			want: `{"ghp_[MASKED]":[1,true,null,{"body":"use xoxb-[MASKED]"}]}`, rules: []string{"github", "slack_token"}},
		{name: "all passes in order", ct: "application/json", mask: true, body: `{"body":"ghp_\u200b0123456789abcdefghijABCDEFGHIJklmnop and s3c\u200bret","password":"x","s3cret":[{"sha1":"abc","scopes":[]},"\u202eplain"]}`,
			want: `{"body":"ghp_[MASKED] and [REDACTED]","password":"[MASKED]","[REDACTED]":[{"sha1":"[MASKED]","scopes":[]},"plain"]}`, rules: []string{"gitea_token_sha1", "github", "secret_field"}, hidden: 3},
		{name: "masking off", ct: "application/json", body: `{"t":"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`, want: `{"t":"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`},
		{name: "hidden characters", ct: "application/json", body: `{"k\u200b":["a\u202eb",{"c":"\u2066d"}],"n":1}`, want: `{"k":["ab",{"c":"d"}],"n":1}`, hidden: 3},
		{name: "escapes kept", ct: "application/json", body: `["a\"b\\c\n"]`, want: `["a\"b\\c\n"]`},
		{name: "exact secret redacted with escapes", ct: "application/json", body: `{"echo":"s3cr\u0065t!"}`, want: `{"echo":"[REDACTED]!"}`},
		{name: "exact secret redacted in keys and values", ct: "application/json", body: `{"s3cret":{"user":"s3crets3cret","list":["a","x-s3cret-y",{"n":12,"s3cret":null}]},"ok":"fine","n":1.50}`,
			want: `{"[REDACTED]":{"user":"[REDACTED]","list":["a","x-[REDACTED]-y",{"n":12,"[REDACTED]":null}]},"ok":"fine","n":1.50}`},
		{name: "too deep is text", ct: "application/json", body: strings.Repeat("[", 101) + strings.Repeat("]", 101), want: `"` + strings.Repeat("[", 101) + strings.Repeat("]", 101) + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scrubber{red: newRedactor("s3cret"), mask: tc.mask, maxBinary: 100}
			maxItems, maxChars := tc.maxItems, tc.maxChars
			if maxItems == 0 {
				maxItems = 100
			}
			if maxChars == 0 {
				maxChars = 1000
			}
			data, trunc, err := sc.body(&sent{header: http.Header{"Content-Type": {tc.ct}}, class: classifyMedia(tc.ct), body: []byte(tc.body)}, maxItems, maxChars)
			if err != nil {
				data = "error: " + err.Error()
			}
			got := struct {
				Data   string
				Trunc  *truncation
				Rules  []string
				Hidden int
			}{string(encode(data)), trunc, sc.rules, sc.hidden}
			want := struct {
				Data   string
				Trunc  *truncation
				Rules  []string
				Hidden int
			}{tc.want, tc.wantTrunc, tc.rules, tc.hidden}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// FuzzScrubJSON checks the streaming rewriter: on any valid JSON it writes
// valid JSON; a planted exact secret never survives; without masking it
// equals scrubTree on the decoded value.
func FuzzScrubJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"s3cret",{"k":"v"}]`, `{"s3cret":{"x":["a\u200bs3cret"]}}`, `"s3\u0063ret"`,
		`{"sha1":"x","scopes":[]}`, `{"type":"file","encoding":"base64","content":"czNjcmV0IGF0IOKArg=="}`, `{"content":"/w==","encoding":"base64"}`, `{"content_base64":"czNj4oCLcmV0"}`, strings.Repeat("[", 100) + strings.Repeat("]", 100), strings.Repeat(`{"a":`, 101) + "1" + strings.Repeat("}", 101), `[{"authorization_header":"Bearer s3cret"},"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]`} {
		f.Add([]byte(s), false)
	}
	f.Fuzz(func(t *testing.T, src []byte, mask bool) {
		if !json.Valid(src) {
			return
		}
		sc := &scrubber{red: newRedactor("s3cret"), mask: mask}
		out, _, _, ok := sc.json(src, 1<<30, 1<<30)
		if deep := depth(decodeNumbers(t, string(src))) > maxJSONDepth; ok == deep {
			t.Fatalf("rewriter on %q: ok %v, nested deeper than %d: %v", src, ok, maxJSONDepth, deep)
		}
		if !ok {
			return
		}
		if !json.Valid(out) {
			t.Fatalf("invalid JSON out of %q: %q", src, out)
		}
		got := decodeNumbers(t, string(out))
		visit(got, func(s string) {
			if strings.Contains(s, "s3cret") {
				t.Fatalf("secret survived in %q: %q", src, out)
			}
		})
		if mask {
			return
		}
		want, ok := scrubTree(decodeNumbers(t, string(src)), sc.red)
		if ok && !reflect.DeepEqual(want, got) { // cmp.Diff is slow on deep nesting; only for the report
			t.Fatalf("rewriter and scrubTree differ on %q: mismatch (-want +got):\n%s", src, cmp.Diff(want, got))
		}
	})
}

// scrubTree is the reference for scrubber.json without masking: scrubString
// on every string value and object key of a decoded value. It reports false
// if two keys of one object scrub to the same key: which value the output
// keeps depends on their order, which the decoded value has lost.
func scrubTree(v any, r *redactor) (any, bool) {
	switch v := v.(type) {
	case string:
		s, _, _ := scrubString(v, r, false)
		return s, true
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			var ok bool
			if out[i], ok = scrubTree(e, r); !ok {
				return nil, false
			}
		}
		return out, true
	case map[string]any:
		for _, f := range fileFields { // decoded file content: see TestFileContent
			if _, ok := v[f.member].(string); ok && !slices.ContainsFunc(f.has, func(h string) bool { _, present := v[h]; return !present || h == "encoding" && v[h] != "base64" }) {
				return nil, false
			}
		}
		out := make(map[string]any, len(v))
		for k, e := range v {
			k, _, _ = scrubString(k, r, false)
			ne, ok := scrubTree(e, r)
			if _, dup := out[k]; dup || !ok {
				return nil, false
			}
			out[k] = ne
		}
		return out, true
	}
	return v, true
}

// depth is the nesting depth of a decoded value: 0 for a scalar.
func depth(v any) int {
	d := 0
	switch v := v.(type) {
	case []any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	case map[string]any:
		for _, e := range v {
			d = max(d, depth(e))
		}
		return d + 1
	}
	return 0
}

// visit calls fn on every string value and object key of a decoded value.
func visit(v any, fn func(string)) {
	switch v := v.(type) {
	case string:
		fn(v)
	case []any:
		for _, e := range v {
			visit(e, fn)
		}
	case map[string]any:
		for k, e := range v {
			fn(k)
			visit(e, fn)
		}
	}
}

// BenchmarkResultPipeline runs the whole result pipeline (decode, strip,
// redact, mask, bound, encode the envelope) on a 1 MB Gitea-like JSON list:
// "whole" with bounds that keep all of it, "default" with the default bounds.
func BenchmarkResultPipeline(b *testing.B) {
	raw := benchCorpus(b)
	for _, bc := range []struct {
		name string
		env  map[string]string
	}{
		{"whole", map[string]string{"MAX_TOOL_RESPONSE_ITEMS": "1000000", "MAX_TOOL_RESPONSE_CHARS": "4000000"}},
		{"default", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := testServer(b, bc.env)
			s.exec.self.me = account{Login: "bench"}
			op := s.cat.byID["issueListIssues"]
			ex := &sent{method: "GET", path: "/repos/o/r/issues", status: 200, body: raw, class: jsonBody,
				header: http.Header{"Content-Type": {"application/json;charset=utf-8"}, "X-Total-Count": {"900"}}}
			red := newRedactor("0123456789abcdef0123456789abcdef01234567", "hunter22")
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if res := s.exec.result(b.Context(), op, ex, red, false); res.Error != nil {
					b.Fatal(res)
				}
			}
		})
	}
}

// TestCredentialIssuingDelivered shows that a freshly minted access token
// reaches the caller in mask and block modes (its sha1 would otherwise be
// masked as an access token's), while exact redaction still applies.
func TestCredentialIssuingDelivered(t *testing.T) {
	t.Parallel()
	const minted = "0123456789abcdef0123456789abcdef01234567"
	body := []byte(`{"id":7,"name":"ci","sha1":"` + minted + `","token_last_eight":"01234567","scopes":["read:user"],"echo":"s3cret-token"}`)
	for _, mode := range []string{"mask", "block"} {
		s := testServer(t, map[string]string{"SECRET_DETECTION_MODE": mode, "GITEA_TOKEN": "s3cret-token"})
		s.exec.self.me = account{Login: "alice"}
		for _, tc := range []struct {
			op   string
			want string // the sha1 as delivered
		}{{"userCreateToken", minted}, {"userGetTokens", "[MASKED]"}} {
			ex := &sent{method: "POST", path: "/users/alice/tokens", status: 201, body: body, class: jsonBody, header: http.Header{"Content-Type": {"application/json"}}}
			env := s.exec.result(t.Context(), s.cat.byID[tc.op], ex, newRedactor("s3cret-token"), false)
			text := env.text()
			if mode == "block" && tc.op == "userGetTokens" {
				if env.Error == nil || env.Error.Kind != "secret_blocked" {
					t.Errorf("%s %s: %s", mode, tc.op, text)
				}
				continue
			}
			if !strings.Contains(text, `"sha1":"`+tc.want+`"`) || strings.Contains(text, "s3cret-token") {
				t.Errorf("%s %s: %s", mode, tc.op, text)
			}
		}
	}
}

// TestErrorMessageCut: a Gitea error message longer than maxErrorMessage is
// scrubbed whole before it is cut, so that a secret across the cut becomes
// a marker, not a prefix (TestE2EErrorMessageCut finds it with Gitea's echo).
func TestErrorMessageCut(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_TOKEN": "s3cret-token-0123456789"})
	for _, secret := range []string{"s3cret-token-0123456789", "ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd"} {
		msg := strings.Repeat("r", maxErrorMessage-len(`not found: `)-12) + secret
		ex := &sent{method: "GET", path: "/x", status: 404, body: encode(map[string]string{"message": "not found: " + msg}), class: jsonBody, header: http.Header{"Content-Type": {"application/json"}}}
		env := s.exec.result(t.Context(), s.cat.byID["repoGet"], ex, newRedactor("s3cret-token-0123456789"), false)
		if got := env.Error.Message; len(got) > maxErrorMessage || strings.Contains(got, secret[:6]) || !strings.HasPrefix(got, "not found: rrr") || len(got) < maxErrorMessage-20 {
			t.Errorf("%d bytes ending %q", len(got), got[max(0, len(got)-30):])
		}
	}
}

// TestGiteaURLsHidden: a workflow tool's data and any error message name
// Gitea's pages without GITEA_URL, and GITEA_MCP_REVEAL_ENDPOINTS=1 keeps it.
func TestGiteaURLsHidden(t *testing.T) {
	t.Parallel()
	for _, reveal := range []bool{false, true} {
		gitea := newScriptedGitea(t).user("alice")
		gitea.on("GET", "/repos/alice/demo/issues/1/comments", 200, `[{"id":7,"html_url":"`+gitea.URL+`/alice/demo/issues/1#issuecomment-7"}]`).
			on("GET", "/repos/alice/demo/issues/2/comments", 404, `{"message":"no issue at `+gitea.URL+`/api/v1/repos/alice/demo/issues/2"}`)
		s := gitea.server(t, "GITEA_MCP_REVEAL_ENDPOINTS", map[bool]string{true: "1"}[reveal])
		var got []string
		for _, index := range []int{1, 2} {
			res, _ := fakeCall(t, t.Context(), s, "gitea_list_issue_comments", map[string]any{"owner": "alice", "repo": "demo", "index": index})
			data, _ := res["data"].([]any)
			failure, _ := res["error"].(map[string]any)
			if len(data) == 1 {
				got = append(got, data[0].(map[string]any)["html_url"].(string))
			} else if failure != nil {
				got = append(got, failure["message"].(string))
			} else {
				t.Fatalf("index %d: neither one comment nor an error: %v", index, res)
			}
		}
		want := []string{"/alice/demo/issues/1#issuecomment-7", "no issue at /repos/alice/demo/issues/2"}
		if reveal {
			want = []string{gitea.URL + "/alice/demo/issues/1#issuecomment-7", "no issue at " + gitea.URL + "/api/v1/repos/alice/demo/issues/2"}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("GITEA_MCP_REVEAL_ENDPOINTS=%v: mismatch (-want +got):\n%s", reveal, diff)
		}
	}
}

// TestEmptyGiteaMessage: found by the user-experience test. Gitea 1.26
// answers repoUpdatePullRequest on a pull request already up to date with
// 500 and "message": "", and the error said message "" only; it now says
// what Gitea answered.
func TestEmptyGiteaMessage(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("bob").on("GET", issuePath, 500, `{"message":"","url":"http://gitea/api/swagger"}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-author")
	out, isErr := fakeCall(t, t.Context(), s, "gitea_call_operation", map[string]any{"operation": "issueGetIssue",
		"arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1}})
	if msg := get(out, "error.message"); !isErr || msg != "Gitea answered 500 Internal Server Error and gave no message" {
		t.Errorf("isError %v, message %q", isErr, msg)
	}
	for _, tc := range []struct {
		body, want string
	}{
		{`{"message":"not found"}`, "not found"},
		{``, "Gitea answered 404 Not Found and gave no message"},
	} {
		if got := errorMessage(&sent{status: 404, body: []byte(tc.body)}); got != tc.want {
			t.Errorf("errorMessage(404, %q) = %q, want %q", tc.body, got, tc.want)
		}
	}
}

// TestRedirectOutside: a redirect to a repository outside the profile's
// repositories (Gitea redirects a renamed or transferred repository's old
// name, whoever asks) does not name it; one within them, or under no
// repositories, does.
func TestRedirectOutside(t *testing.T) {
	t.Parallel()
	x := &executor{cfg: &config{apiBase: "http://gitea.test/api/v1"}}
	limited := &profile{Name: "alice-only", repoPats: [][2]string{{"alice", "*"}}}
	for _, tc := range []struct {
		p              *profile
		method, target string
		want           string
	}{
		{limited, "GET", "/api/v1/repos/bob/hidden/contents/a.txt", "Gitea redirected this GET to a repository outside the repositories of alice-only, which is not named; not followed"},
		{limited, "POST", "/api/v1/repos/bob/hidden/issues", "Gitea redirected this POST to a repository outside the repositories of alice-only, which is not named; not followed"},
		{limited, "GET", "/api/v1/repos/bob", "Gitea redirected this GET to a repository outside the repositories of alice-only, which is not named; not followed"},
		{limited, "GET", "/api/v1/repos/alice/new?x=1", "Gitea redirected to /repos/alice/new (its query left out); not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant"},
		{&profile{Name: "any"}, "GET", "/api/v1/repos/bob/hidden", "Gitea redirected to /repos/bob/hidden; not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant"},
		{nil, "GET", "/api/v1/repos/bob/hidden", "Gitea redirected to /repos/bob/hidden; not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant"},
	} {
		ex := &sent{method: tc.method, status: http.StatusMovedPermanently, header: http.Header{"Location": {tc.target}}}
		if got := x.redirectMessage(ex, tc.p); got != tc.want {
			t.Errorf("%s %s: %q\nwant %q", tc.method, tc.target, got, tc.want)
		}
	}
}

// TestUnnamedOutside: under repositories, a repository outside them that
// Gitea's error message names (a fork's conflict names the caller's existing
// fork) is left out; one within them, or under no repositories, is kept.
func TestUnnamedOutside(t *testing.T) {
	t.Parallel()
	const conflict = "repository is already forked by user [uname: bob, repo path: alice/demo, fork path: bob/hidden]"
	for _, tc := range []struct {
		p    *profile
		want string
	}{
		{&profile{Name: "demo", repoPats: [][2]string{{"alice", "demo"}, {"bob", "demo"}}},
			"repository is already forked by user [uname: bob, repo path: alice/demo, fork path: a repository outside the repositories of demo]"},
		{&profile{Name: "bob", repoPats: [][2]string{{"alice", "demo"}, {"bob", "*"}}}, conflict},
		{&profile{Name: "any"}, conflict},
		{nil, conflict},
	} {
		if got := tc.p.unnamed(conflict); got != tc.want {
			t.Errorf("%v: %q\nwant %q", tc.p, got, tc.want)
		}
	}
}

// TestUnnamedInResult: the result of a call Gitea refuses loses the
// repository outside the list that its message names, as TestUnnamedOutside
// shows unnamed doing (a fake Gitea answers the fork's conflict).
func TestUnnamedInResult(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo", "repositories": ["alice/demo", "bob/demo"], "allowed_operations": ["gitea.read", "gitea.repo.create"]}]}`), 0o600)
	f := newScriptedGitea(t)
	f.user("bob").on("POST", "/repos/alice/demo/forks", http.StatusConflict, `{"message":"repository is already forked by user [uname: bob, repo path: alice/demo, fork path: bob/hidden]"}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "demo", "GITEA_MCP_CONFIG", config)
	out, _ := fakeCall(t, t.Context(), s, "gitea_call_operation", map[string]any{"operation": "createFork", "arguments": map[string]any{"owner": "alice", "repo": "demo", "body": map[string]any{}}})
	if msg := str0(get(out, "error.message")); !strings.Contains(msg, "fork path: a repository outside the repositories of demo") || strings.Contains(msg, "hidden") {
		t.Errorf("error message %q; want the fork outside unnamed", msg)
	}
}
