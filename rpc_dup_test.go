package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRPCFoldedDuplicates: an envelope, its params or params' _meta that
// names a member twice under encoding/json's matching (case and Unicode
// simple folding) is refused as an invalid request: encoding/json keeps the
// last, a gateway or log may read the first. Each line is served as it is
// over stdio and as a 2025-03-26 batch element.
func TestRPCFoldedDuplicates(t *testing.T) {
	t.Parallel()
	s := testServer(t, map[string]string{"GITEA_MCP_TOOLS": "repoGet"})
	for _, tc := range []struct {
		line    string
		refused bool
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"ping"}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"a":1,"b":2}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":{"k":1,"K":2}}}`, false}, // deeper: not the envelope's
		{`{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}`, true},
		{`{"jsonrpc":"2.0","id":"1","method":"ping","id":2}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repoGet","Name":"x"}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repoGet","ńame":"x","arguments":{}}}`, false},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{},"_META":{}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/protocolversion":"x"}}}`, true},
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","paramſ":{},"params":{}}`, true},     // ſ folds to s
		{`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"K":1,"\u212a":2}}`, true}, // the Kelvin sign folds to k
	} {
		for _, batch := range []bool{false, true} {
			sess := newSession(s, func([]byte) {})
			sess.version = "2025-03-26"
			line := tc.line
			if batch {
				line = "[" + line + "]"
			}
			out := sess.handleRaw(context.Background(), []byte(line))
			if batch && len(out) > 2 {
				out = out[1 : len(out)-1]
			}
			var r struct{ Error *rpcError }
			if err := json.Unmarshal(out, &r); err != nil {
				t.Fatalf("%s: %v: %s", line, err, out)
			}
			if refused := r.Error != nil && r.Error.Code == codeInvalidRequest; refused != tc.refused {
				t.Errorf("%s: got %.200s, want refused %v", line, out, tc.refused)
			}
		}
	}
}

// TestHTTPFoldedDuplicates: over HTTP too, in a session and stateless, an
// envelope that repeats a member under folding is refused, not served.
func TestHTTPFoldedDuplicates(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	sid := httpSessionID(t, ts.URL, "2025-11-25")
	for _, tc := range []struct {
		headers []string
		body    string
	}{
		{[]string{hdrSession, sid}, `{"jsonrpc":"2.0","id":1,"method":"ping","METHOD":"tools/list"}`},
		{[]string{hdrSession, sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"a","Cursor":"b"}}`},
		{[]string{hdrVersion, modernVersion, hdrMethod, "tools/list"}, `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"` +
			modernVersion + `","io.modelcontextprotocol/clientCapabilities":{}},"cursor":"a","ſ":1,"S":2}}`},
	} {
		_, body := httpDo(t, ts.URL, http.MethodPost, tc.headers, tc.body)
		if !strings.Contains(string(body), `"code":-32600`) || !strings.Contains(string(body), "repeated") {
			t.Errorf("%s: got %.200s, want -32600 repeated", tc.body, body)
		}
	}
}

// TestReadLineLimit: a line of up to max bytes is read whole, with or
// without its newline; one byte more is too long, the last line of the
// input included, and the next line is read as it is.
func TestReadLineLimit(t *testing.T) {
	t.Parallel()
	const max = 100
	a := func(n int) string { return strings.Repeat("a", n) }
	for _, tc := range []struct {
		in   string
		want []string // each line read, "!" for errTooLong
	}{
		{a(max) + "\nb\n", []string{a(max), "b"}},
		{a(max+1) + "\nb\n", []string{"!", "b"}},
		{a(max), []string{a(max)}},
		{a(max + 1), []string{"!"}},
		{"b\n" + a(max+1), []string{"b", "!"}},
	} {
		r := bufio.NewReaderSize(strings.NewReader(tc.in), 16)
		var got []string
		for {
			line, err := readLine(r, max)
			if errors.Is(err, errTooLong) {
				got = append(got, "!")
				continue
			}
			if len(line) > 0 {
				got = append(got, string(line))
			}
			if err != nil {
				break
			}
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%.20q...: mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}
