package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadPagination(t *testing.T) {
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
		{name: "not json under a json type", ct: "application/json", body: `not json`, want: `"not json"`},
		{name: "text", ct: "text/plain", body: "hello", want: `"hello"`},
		{name: "empty", ct: "", body: "", want: `null`},
		{name: "binary", ct: "application/octet-stream", body: "\x00\xff", want: `{"content_base64":"AP8=","content_type":"application/octet-stream","size":2}`},
		{name: "items cut", ct: "application/json", body: `[1, 2, 3, 4]`, maxItems: 2, want: `[1,2]`, wantTrunc: &truncation{ItemsKept: 2, ItemsTotal: 4}},
		{name: "chars cut an array", ct: "application/json", body: `["aaaa","bbbb","cccc"]`, maxChars: 15, want: `["aaaa","bbbb"]`, wantTrunc: &truncation{ItemsKept: 2, ItemsTotal: 3}},
		{name: "chars cut an object", ct: "application/json", body: `{"a":"aaaaaaaaaaaa"}`, maxChars: 8, want: `"{\"a\""`, wantTrunc: &truncation{Chars: true}},
		{name: "commit sha kept", ct: "application/json", mask: true, body: `[{"sha":"` + sha + `","id":"` + sha + `","message":"fix ` + sha + `"}]`, want: `[{"sha":"` + sha + `","id":"` + sha + `","message":"fix ` + sha + `"}]`},
		{name: "token sha1 masked", ct: "application/json", mask: true, body: `{"id":1,"name":"ci","sha1":"` + sha + `","token_last_eight":"01234567"}`, want: `{"id":1,"name":"ci","sha1":"[MASKED]","token_last_eight":"01234567"}`, rules: []string{"gitea_token_sha1"}},
		{name: "package sha1 kept", ct: "application/json", mask: true, body: `{"name":"f.tgz","sha1":"` + sha + `"}`, want: `{"name":"f.tgz","sha1":"` + sha + `"}`},
		{name: "secret field masked", ct: "application/json", mask: true, body: `{"config":{"authorization_header":"Bearer abc"}}`, want: `{"config":{"authorization_header":"[MASKED]"}}`, rules: []string{"secret_field"}},
		{name: "planted github token masked in a key and a value", ct: "application/json", mask: true, body: `{"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa":"see ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`, want: `{"ghp_[MASKED]":"see ghp_[MASKED]"}`, rules: []string{"github"}},
		{name: "masking off", ct: "application/json", body: `{"t":"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`, want: `{"t":"ghp_bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}`},
		{name: "hidden characters", ct: "application/json", body: `{"body":"a\u200bb\u202ec"}`, want: `{"body":"abc"}`, hidden: 2},
		{name: "escapes kept", ct: "application/json", body: `["a\"b\\c\n"]`, want: `["a\"b\\c\n"]`},
		{name: "exact secret redacted with escapes", ct: "application/json", body: `{"echo":"s3cr\u0065t!"}`, want: `{"echo":"[REDACTED]!"}`},
		{name: "too deep is text", ct: "application/json", body: strings.Repeat("[", 101) + strings.Repeat("]", 101), want: `"` + strings.Repeat("[", 101) + strings.Repeat("]", 101) + `"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scrubber{red: newRedactor("s3cret"), mask: tc.mask}
			maxItems, maxChars := tc.maxItems, tc.maxChars
			if maxItems == 0 {
				maxItems = 100
			}
			if maxChars == 0 {
				maxChars = 1000
			}
			data, trunc := sc.body(&sent{header: http.Header{"Content-Type": {tc.ct}}, body: []byte(tc.body)}, maxItems, maxChars)
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
// equals the tree passes (strip hidden text, then redact) on the decoded value.
func FuzzScrubJSON(f *testing.F) {
	for _, s := range []string{`{}`, `[1,"s3cret",{"k":"v"}]`, `{"s3cret":{"x":["a\u200bs3cret"]}}`, `"s3\u0063ret"`,
		`{"sha1":"x","scopes":[]}`, strings.Repeat("[", 100) + strings.Repeat("]", 100), strings.Repeat(`{"a":`, 101) + "1" + strings.Repeat("}", 101), `[{"authorization_header":"Bearer s3cret"},"ghp_aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"]`} {
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
		want, _ := stripHiddenValue(decodeNumbers(t, string(src)))
		want = newRedactor("s3cret").redactValue(want)
		if !reflect.DeepEqual(want, got) { // cmp.Diff is slow on deep nesting; only for the report
			t.Fatalf("rewriter and tree passes differ on %q: mismatch (-want +got):\n%s", src, cmp.Diff(want, got))
		}
	})
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
	raw, _ := benchCorpus(b)
	for _, bc := range []struct {
		name string
		env  map[string]string
	}{
		{"whole", map[string]string{"MAX_TOOL_RESPONSE_ITEMS": "1000000", "MAX_TOOL_RESPONSE_CHARS": "4000000"}},
		{"default", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := testServer(b, bc.env)
			s.exec.login = "bench"
			op := s.cat.byID["issueListIssues"]
			ex := &sent{method: "GET", path: "/repos/o/r/issues", status: 200, body: raw,
				header: http.Header{"Content-Type": {"application/json;charset=utf-8"}, "X-Total-Count": {"900"}}}
			red := newRedactor("0123456789abcdef0123456789abcdef01234567", "hunter22")
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				if res := s.exec.result(b.Context(), op, ex, red); res["isError"] == true {
					b.Fatal(res)
				}
			}
		})
	}
}
