package main

import (
	"encoding/json"
	"net/http"
	"net/url"
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

func TestDecodeBody(t *testing.T) {
	for _, tc := range []struct {
		ct   string
		body string
		want any
	}{
		{"application/json;charset=utf-8", `{"a":1}`, map[string]any{"a": jsonNumber("1")}},
		{"application/json", `not json`, "not json"},
		{"text/plain", "hello", "hello"},
		{"", "", nil},
		{"application/octet-stream", "\x00\xff", map[string]any{"content_base64": "AP8=", "content_type": "application/octet-stream", "size": 2}},
	} {
		got := decodeBody(&sent{header: http.Header{"Content-Type": {tc.ct}}, body: []byte(tc.body)})
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%q %q: mismatch (-want +got):\n%s", tc.ct, tc.body, diff)
		}
	}
}

func jsonNumber(s string) any { return json.Number(s) }
