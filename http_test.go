package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// httpGot is what a test checks of an HTTP answer.
type httpGot struct {
	Status    int
	Type      string   // media type of the body
	Code      int      // JSON-RPC error code, 0 for none
	Supported []string // the error's data.supported
	Session   bool     // Mcp-Session-Id was set
	Allow     string   // Allow header
	Auth      string   // WWW-Authenticate header
}

// summarize returns what the tests check of resp and its body.
func summarize(resp *http.Response, body []byte) httpGot {
	g := httpGot{Status: resp.StatusCode, Session: resp.Header.Get(hdrSession) != "",
		Allow: resp.Header.Get("Allow"), Auth: resp.Header.Get("WWW-Authenticate")}
	g.Type, _, _ = mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if _, data, ok := strings.Cut(string(body), "\ndata: "); ok && g.Type == sseType {
		body = []byte(data)
	}
	var r struct {
		Error *struct {
			Code int
			Data struct{ Supported []string }
		}
	}
	if json.Unmarshal(body, &r) == nil && r.Error != nil {
		g.Code, g.Supported = r.Error.Code, r.Error.Data.Supported
	}
	return g
}

// Media types of answers.
const (
	jsonType = "application/json"
	sseType  = "text/event-stream"
)

// TestHTTPStatus checks each status code of the transport. Header values
// $SID (a 2025-11-25 session), $OLD (2025-03-26) and $ENDED (a deleted
// session) are replaced by live session ids.
func TestHTTPStatus(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	tools := `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`
	modernHdr := func(method string) []string { return []string{hdrVersion, modernVersion, hdrMethod, method} }
	tests := []struct {
		name   string
		method string // POST when empty
		header []string
		body   string
		want   httpGot
	}{
		// The initialize era.
		{"initialize", "", nil, initBody("2025-11-25"), httpGot{Status: 200, Type: jsonType, Session: true}},
		{"initialize unknown version", "", nil, initBody("1999-01-01"), httpGot{Status: 200, Type: jsonType, Session: true}},
		{"initialize without protocolVersion", "", nil, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}`, httpGot{Status: 200, Type: jsonType, Code: codeInvalidParams}},
		{"initialize with a session", "", []string{hdrSession, "$SID"}, initBody("2025-11-25"), httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"request in session", "", []string{hdrSession, "$SID"}, tools, httpGot{Status: 200, Type: jsonType}},
		{"request with the session's version", "", []string{hdrSession, "$SID", hdrVersion, "2025-11-25"}, tools, httpGot{Status: 200, Type: jsonType}},
		{"request with another supported version", "", []string{hdrSession, "$SID", hdrVersion, "2025-06-18"}, tools, httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"request with an unsupported version", "", []string{hdrSession, "$SID", hdrVersion, "1999-01-01"}, tools, httpGot{Status: 400, Type: jsonType, Code: codeUnsupportedVersion, Supported: supportedVersions}},
		{"request without session", "", nil, tools, httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"ping without session", "", nil, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, httpGot{Status: 200, Type: jsonType}},
		{"ping without session, of a version", "", []string{hdrVersion, "2025-11-25"}, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"tools/list without session", "", nil, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"unknown session", "", []string{hdrSession, "nope"}, tools, httpGot{Status: 404, Type: jsonType, Code: codeInvalidRequest}},
		{"ended session", "", []string{hdrSession, "$ENDED"}, tools, httpGot{Status: 404, Type: jsonType, Code: codeInvalidRequest}},
		{"unknown method in session", "", []string{hdrSession, "$SID"}, `{"jsonrpc":"2.0","id":1,"method":"nope"}`, httpGot{Status: 200, Type: jsonType, Code: codeMethodNotFound}},
		{"notification", "", []string{hdrSession, "$SID"}, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, httpGot{Status: 202}},
		{"response", "", []string{hdrSession, "$SID"}, `{"jsonrpc":"2.0","id":"s1","result":{}}`, httpGot{Status: 202}},
		{"batch in 2025-03-26", "", []string{hdrSession, "$OLD"}, "[" + tools + `,{"jsonrpc":"2.0","method":"notifications/initialized"}]`, httpGot{Status: 200, Type: jsonType}},
		{"batch of notifications", "", []string{hdrSession, "$OLD"}, `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`, httpGot{Status: 202}},
		{"batch in 2025-11-25", "", []string{hdrSession, "$SID"}, "[" + tools + "]", httpGot{Status: 200, Type: jsonType, Code: codeInvalidRequest}},
		{"batch without session", "", nil, "[" + tools + "]", httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		// Accept and Content-Type.
		{"accept json", "", []string{hdrSession, "$SID", "Accept", "application/json"}, tools, httpGot{Status: 200, Type: jsonType}},
		{"accept sse only", "", []string{hdrSession, "$SID", "Accept", "text/event-stream"}, tools, httpGot{Status: 200, Type: sseType}},
		{"accept json refused", "", []string{hdrSession, "$SID", "Accept", "application/json;q=0, */*"}, tools, httpGot{Status: 200, Type: sseType}},
		{"accept any", "", []string{hdrSession, "$SID", "Accept", "*/*"}, tools, httpGot{Status: 200, Type: jsonType}},
		{"accept absent", "", []string{hdrSession, "$SID", "Accept", ""}, tools, httpGot{Status: 200, Type: jsonType}},
		{"accept html", "", []string{hdrSession, "$SID", "Accept", "text/html"}, tools, httpGot{Status: 406, Type: jsonType, Code: codeInvalidRequest}},
		{"accept q=0", "", []string{hdrSession, "$SID", "Accept", "application/json;q=0, text/event-stream;q=0"}, tools, httpGot{Status: 406, Type: jsonType, Code: codeInvalidRequest}},
		{"content type with charset", "", []string{hdrSession, "$SID", "Content-Type", "application/json; charset=UTF-8"}, tools, httpGot{Status: 200, Type: jsonType}},
		{"content type latin1", "", []string{hdrSession, "$SID", "Content-Type", "application/json; charset=latin1"}, tools, httpGot{Status: 415, Type: jsonType, Code: codeInvalidRequest}},
		{"content type text", "", []string{hdrSession, "$SID", "Content-Type", "text/plain"}, tools, httpGot{Status: 415, Type: jsonType, Code: codeInvalidRequest}},
		{"content type absent", "", []string{hdrSession, "$SID", "Content-Type", ""}, tools, httpGot{Status: 415, Type: jsonType, Code: codeInvalidRequest}},
		// Bodies.
		{"body too large", "", []string{hdrSession, "$SID"}, `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"` + strings.Repeat("a", maxMessageBytes) + `"}}`, httpGot{Status: 413, Type: jsonType, Code: codeInvalidRequest}},
		{"body not JSON", "", []string{hdrSession, "$SID"}, `{"jsonrpc":`, httpGot{Status: 400, Type: jsonType, Code: codeParse}},
		{"body empty", "", []string{hdrSession, "$SID"}, ``, httpGot{Status: 400, Type: jsonType, Code: codeParse}},
		{"body not an object", "", []string{hdrSession, "$SID"}, `"ping"`, httpGot{Status: 200, Type: jsonType, Code: codeInvalidRequest}},
		// GET, DELETE, other methods and paths.
		{"get stream", "GET", []string{hdrSession, "$SID", "Accept", "text/event-stream"}, "", httpGot{Status: 200, Type: sseType}},
		{"get without session", "GET", []string{"Accept", "text/event-stream"}, "", httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"get unknown session", "GET", []string{hdrSession, "nope", "Accept", "text/event-stream"}, "", httpGot{Status: 404, Type: jsonType, Code: codeInvalidRequest}},
		{"get json", "GET", []string{hdrSession, "$SID", "Accept", "application/json"}, "", httpGot{Status: 406, Type: jsonType, Code: codeInvalidRequest}},
		{"delete", "DELETE", []string{hdrSession, "$SID"}, "", httpGot{Status: 204}},
		{"delete without session", "DELETE", nil, "", httpGot{Status: 400, Type: jsonType, Code: codeInvalidRequest}},
		{"delete ended session", "DELETE", []string{hdrSession, "$ENDED"}, "", httpGot{Status: 404, Type: jsonType, Code: codeInvalidRequest}},
		{"put", "PUT", []string{hdrSession, "$SID"}, tools, httpGot{Status: 405, Type: jsonType, Code: codeInvalidRequest, Allow: "GET, POST, DELETE"}},
		// The stateless 2026-07-28 form.
		{"discover", "", modernHdr("server/discover"), modernBody(modernVersion, "server/discover", ""), httpGot{Status: 200, Type: jsonType}},
		{"stateless tools/list", "", modernHdr("tools/list"), modernBody(modernVersion, "tools/list", ""), httpGot{Status: 200, Type: jsonType}},
		{"stateless tools/call", "", append(modernHdr("tools/call"), hdrName, "repoGet"), modernBody(modernVersion, "tools/call", `"name":"repoGet","arguments":{"owner":"a","repo":"b"},`), httpGot{Status: 200, Type: jsonType}},
		{"stateless tools/call base64 name", "", append(modernHdr("tools/call"), hdrName, "=?base64?cmVwb0dldA==?="), modernBody(modernVersion, "tools/call", `"name":"repoGet","arguments":{"owner":"a","repo":"b"},`), httpGot{Status: 200, Type: jsonType}},
		{"stateless with a session header", "", append(modernHdr("tools/list"), hdrSession, "nope"), modernBody(modernVersion, "tools/list", ""), httpGot{Status: 200, Type: jsonType}},
		{"stateless notification", "", modernHdr("notifications/cancelled"), `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}`, httpGot{Status: 202}},
		{"Mcp-Name mismatch", "", append(modernHdr("tools/call"), hdrName, "repoDelete"), modernBody(modernVersion, "tools/call", `"name":"repoGet",`), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		// Each header once: a gateway that reads another copy than the first
		// would judge another tool, method or version than the one served.
		{"Mcp-Name twice", "", append(modernHdr("tools/call"), hdrName, "repoGet", hdrName, "repoDelete"), modernBody(modernVersion, "tools/call", `"name":"repoGet","arguments":{"owner":"a","repo":"b"},`), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"Mcp-Method twice", "", append(modernHdr("tools/list"), hdrMethod, "tools/call"), modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"version header twice", "", append(modernHdr("tools/list"), hdrVersion, "2025-11-25"), modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"Mcp-Name missing", "", modernHdr("tools/call"), modernBody(modernVersion, "tools/call", `"name":"repoGet",`), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"Mcp-Name bad base64", "", append(modernHdr("tools/call"), hdrName, "=?base64?!!?="), modernBody(modernVersion, "tools/call", `"name":"repoGet",`), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"Mcp-Method mismatch", "", modernHdr("tools/call"), modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"Mcp-Method missing", "", []string{hdrVersion, modernVersion}, modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"version header missing", "", []string{hdrMethod, "tools/list"}, modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"version header older", "", []string{hdrVersion, "2025-11-25", hdrMethod, "tools/list"}, modernBody(modernVersion, "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"version header without _meta", "", modernHdr("tools/list"), tools, httpGot{Status: 400, Type: jsonType, Code: codeInvalidParams}},
		{"_meta without protocolVersion", "", modernHdr("tools/list"), `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"` + metaCapabilities + `":{}}}}`, httpGot{Status: 400, Type: jsonType, Code: codeInvalidParams}},
		{"_meta without clientCapabilities", "", modernHdr("tools/list"), `{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{"` + metaVersion + `":"` + modernVersion + `"}}}`, httpGot{Status: 400, Type: jsonType, Code: codeInvalidParams}},
		{"unsupported _meta version", "", modernHdr("tools/list"), modernBody("2027-01-01", "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeHeaderMismatch}},
		{"unsupported header version", "", []string{hdrVersion, "2027-01-01", hdrMethod, "tools/list"}, modernBody("2027-01-01", "tools/list", ""), httpGot{Status: 400, Type: jsonType, Code: codeUnsupportedVersion, Supported: supportedVersions}},
		{"stateless unknown method", "", modernHdr("foo/bar"), modernBody(modernVersion, "foo/bar", ""), httpGot{Status: 404, Type: jsonType, Code: codeMethodNotFound}},
		{"stateless initialize", "", modernHdr("initialize"), modernBody(modernVersion, "initialize", `"protocolVersion":"2025-11-25",`), httpGot{Status: 404, Type: jsonType, Code: codeMethodNotFound}},
		{"stateless ping", "", modernHdr("ping"), modernBody(modernVersion, "ping", ""), httpGot{Status: 404, Type: jsonType, Code: codeMethodNotFound}},
		// The Go SDK pings under 2026-07-28 without _meta: answered as on stdio.
		{"stateless ping without _meta", "", modernHdr("ping"), `{"jsonrpc":"2.0","id":8,"method":"ping"}`, httpGot{Status: 200, Type: jsonType}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ended := httpSessionID(t, ts.URL, "2025-11-25")
			httpDo(t, ts.URL, http.MethodDelete, []string{hdrSession, ended}, "")
			r := strings.NewReplacer("$SID", httpSessionID(t, ts.URL, "2025-11-25"), "$OLD", httpSessionID(t, ts.URL, "2025-03-26"), "$ENDED", ended)
			kv := make([]string, len(tt.header))
			for i, s := range tt.header {
				kv[i] = r.Replace(s)
			}
			method := tt.method
			if method == "" {
				method = http.MethodPost
			}
			if diff := cmp.Diff(tt.want, summarize(httpDo(t, ts.URL, method, kv, tt.body))); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestHTTPErrorID checks that an error answered before dispatch carries the
// request's id, or null when the id is invalid.
func TestHTTPErrorID(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	modernHdr := []string{hdrVersion, modernVersion, hdrMethod, "tools/list"}
	tests := []struct {
		name   string
		header []string
		body   string
		want   string // the answer's id
	}{
		{"missing _meta", modernHdr, `{"jsonrpc":"2.0","id":101,"method":"tools/list","params":{}}`, "101"},
		{"header mismatch", modernHdr, strings.Replace(modernBody("2027-01-01", "tools/list", ""), `"id":1`, `"id":"m"`, 1), `"m"`},
		{"unsupported version", []string{hdrVersion, "2027-01-01", hdrMethod, "tools/list"}, strings.Replace(modernBody("2027-01-01", "tools/list", ""), `"id":1`, `"id":301`, 1), "301"},
		{"unsupported version, no _meta", []string{hdrVersion, "2027-01-01"}, `{"jsonrpc":"2.0","id":"u","method":"tools/list"}`, `"u"`},
		{"invalid id", modernHdr, `{"jsonrpc":"2.0","id":true,"method":"tools/list","params":{}}`, "null"},
	}
	for _, tt := range tests {
		resp, body := httpDo(t, ts.URL, http.MethodPost, tt.header, tt.body)
		var r rpcAnswer
		if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusBadRequest || r.Error == nil || string(r.ID) != tt.want {
			t.Errorf("%s: got %s %s, want 400 with an error for id %s", tt.name, resp.Status, body, tt.want)
		}
	}
}

// rpcAnswer is a decoded JSON-RPC response of the HTTP tests.
type rpcAnswer struct {
	ID     json.RawMessage
	Method string
	Result map[string]any
	Error  *rpcError
	Params map[string]any
}

// openStream opens the session's GET stream and returns the data of its
// events, closed at the end of the stream.
func openStream(tb testing.TB, ctx context.Context, base, sid string) <-chan string {
	tb.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/mcp", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(hdrSession, sid)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		tb.Fatalf("GET stream: %v %v", resp, err)
	}
	events := make(chan string, 16)
	go func() {
		defer resp.Body.Close()
		defer close(events)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				events <- data
			}
		}
	}()
	return events
}

// nextEvent returns the next event of a stream, or false at its end.
func nextEvent(tb testing.TB, events <-chan string) (string, bool) {
	tb.Helper()
	select {
	case e, ok := <-events:
		return e, ok
	case <-time.After(patience):
		tb.Fatal("no event and no end of stream in time")
	}
	return "", false
}

// TestHTTPSessionLifecycle follows one session: initialize, requests with
// its id, a notification on its GET stream, DELETE, then 404.
func TestHTTPSessionLifecycle(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	resp, body := httpDo(t, ts.URL, http.MethodPost, nil, initBody("2025-11-25"))
	sid := resp.Header.Get(hdrSession)
	if len(sid) < 16 || strings.Trim(sid, "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567") != "" {
		t.Fatalf("Mcp-Session-Id %q: want 16 or more base32 characters", sid)
	}
	var init rpcAnswer
	if err := json.Unmarshal(body, &init); err != nil || init.Result["protocolVersion"] != "2025-11-25" {
		t.Fatalf("initialize: %s", body)
	}
	in := []string{hdrSession, sid, hdrVersion, "2025-11-25"}
	if resp, _ := httpDo(t, ts.URL, http.MethodPost, in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("notifications/initialized: %s", resp.Status)
	}
	_, body = httpDo(t, ts.URL, http.MethodPost, in, `{"jsonrpc":"2.0","id":"list","method":"tools/list"}`)
	var list rpcAnswer
	if err := json.Unmarshal(body, &list); err != nil || string(list.ID) != `"list"` || len(list.Result["tools"].([]any)) == 0 {
		t.Fatalf("tools/list: %s", body)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := openStream(t, ctx, ts.URL, sid)
	httpDo(t, ts.URL, http.MethodPost, in, `{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"info"}}`)
	_, body = httpDo(t, ts.URL, http.MethodPost, in, `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"repoGet","arguments":{"owner":"a","repo":"b"}}}`)
	var res rpcAnswer
	if err := json.Unmarshal(body, &res); err != nil || res.Result["isError"] != true {
		t.Fatalf("tools/call without GITEA_URL: want an isError result, got %s", body)
	}
	var note rpcAnswer
	if e, _ := nextEvent(t, events); json.Unmarshal([]byte(e), &note) != nil || note.Method != "notifications/message" {
		t.Fatalf("GET stream: want notifications/message, got %q", e)
	}
	if resp, _ := httpDo(t, ts.URL, http.MethodDelete, in, ""); resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %s", resp.Status)
	}
	if _, open := nextEvent(t, events); open {
		t.Error("the GET stream outlived its session")
	}
	if resp, _ := httpDo(t, ts.URL, http.MethodPost, in, `{"jsonrpc":"2.0","id":4,"method":"tools/list"}`); resp.StatusCode != http.StatusNotFound {
		t.Errorf("tools/list after DELETE: got %s, want 404", resp.Status)
	}
}

// TestHTTPOrigin checks the DNS-rebinding defence: each Origin is admitted
// or refused with 403, with MCP_ALLOWED_ORIGINS naming one origin.
func TestHTTPOrigin(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, map[string]string{"MCP_ALLOWED_ORIGINS": "https://App.example.com, http://tool.example:8080"})
	tests := []struct {
		origin []string // Origin header values; none means no header
		want   int
	}{
		{nil, 200},
		{[]string{"http://localhost"}, 200},
		{[]string{"http://localhost:6274"}, 200},
		{[]string{"HTTP://LOCALHOST:6274"}, 200},
		{[]string{"https://127.0.0.1:3000"}, 200},
		{[]string{"http://127.8.9.10"}, 200},
		{[]string{"http://[::1]:8080"}, 200},
		{[]string{"https://app.example.com"}, 200},
		{[]string{"http://tool.example:8080"}, 200},
		{[]string{"http://evil.example"}, 403},
		{[]string{"null"}, 403},
		{[]string{"http://localhost.evil.example"}, 403},
		{[]string{"http://127.0.0.1.nip.io"}, 403},
		{[]string{"http://localhost@evil.example"}, 403},
		{[]string{"http://10.0.0.1"}, 403},
		{[]string{"http://[::]"}, 403},
		{[]string{"file://localhost"}, 403},
		{[]string{"http://localhost/path"}, 403},
		{[]string{"http://app.example.com"}, 403},
		{[]string{"https://app.example.com:8443"}, 403},
		{[]string{"http://tool.example"}, 403},
		{[]string{"http://localhost", "http://evil.example"}, 403},
	}
	for _, tt := range tests {
		var kv []string
		for _, o := range tt.origin {
			kv = append(kv, "Origin", o)
		}
		if resp, _ := httpDo(t, ts.URL, http.MethodPost, kv, initBody("2025-11-25")); resp.StatusCode != tt.want {
			t.Errorf("Origin %q: got %d, want %d", tt.origin, resp.StatusCode, tt.want)
		}
	}
}

// TestHTTPBearer checks static bearer mode: only the exact token, in one
// Authorization header, is admitted; the 401 never echoes it.
func TestHTTPBearer(t *testing.T) {
	t.Parallel()
	const token = "s3cret-Token_0123456789"
	ts, _ := newHTTPTest(t, map[string]string{"MCP_BEARER_TOKEN": token})
	tests := []struct {
		auth []string // Authorization header values
		want int
	}{
		{[]string{"Bearer " + token}, 200},
		{[]string{"bearer " + token}, 200},
		{[]string{"Bearer  " + token + " "}, 200},
		{nil, 401},
		{[]string{"Bearer"}, 401},
		{[]string{"Bearer "}, 401},
		{[]string{"Bearer wrong"}, 401},
		{[]string{"Bearer " + token + "x"}, 401},
		{[]string{"Bearer " + token[:len(token)-1]}, 401},
		{[]string{"Basic " + token}, 401},
		{[]string{token}, 401},
		{[]string{"Bearer " + token, "Bearer " + token}, 401},
	}
	for _, tt := range tests {
		var kv []string
		for _, a := range tt.auth {
			kv = append(kv, "Authorization", a)
		}
		resp, body := httpDo(t, ts.URL, http.MethodPost, kv, initBody("2025-11-25"))
		got := httpGot{Status: resp.StatusCode, Auth: resp.Header.Get("WWW-Authenticate")}
		want := httpGot{Status: tt.want}
		if tt.want == 401 {
			want.Auth = "Bearer"
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("Authorization %q: mismatch (-want +got):\n%s", tt.auth, diff)
		}
		if strings.Contains(string(body), token) {
			t.Errorf("Authorization %q: the answer echoes the token", tt.auth)
		}
	}
	if resp, _ := httpDo(t, strings.Replace(ts.URL, "://", "://x:"+token+"@", 1), http.MethodPost, nil, initBody("2025-11-25")); resp.StatusCode != 401 {
		t.Errorf("token as basic-auth user info: got %s, want 401", resp.Status)
	}
}

// TestHTTPConfig checks the transport's settings: each is accepted or
// refused with an error that never contains the token.
func TestHTTPConfig(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env     map[string]string
		wantErr string // substring of the error; "" for none
	}{
		{map[string]string{}, ""},
		{map[string]string{"MCP_BEARER_TOKEN": "abcdefghijklmnop"}, ""},
		{map[string]string{"MCP_BEARER_TOKEN": "A-._~+/=0123456789"}, ""},
		{map[string]string{"MCP_BEARER_TOKEN": "short"}, "MCP_BEARER_TOKEN"},
		{map[string]string{"MCP_BEARER_TOKEN": "abcdefgh ijklmnopq"}, "MCP_BEARER_TOKEN"},
		{map[string]string{"MCP_BEARER_TOKEN": "abcdefghijklmnopq\n"}, "MCP_BEARER_TOKEN"},
		{map[string]string{"MCP_ALLOWED_ORIGINS": "https://a.example, http://b.example:8080,"}, ""},
		{map[string]string{"MCP_ALLOWED_ORIGINS": "https://a.example/"}, `"https://a.example/" is not an origin`},
		{map[string]string{"MCP_ALLOWED_ORIGINS": "a.example"}, `"a.example" is not an origin`},
		{map[string]string{"MCP_ALLOWED_ORIGINS": "*"}, `"*" is not an origin`},
		{map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "1"}, ""},
		{map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "10000"}, ""},
		{map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "0"}, "MCP_HTTP_MAX_IN_FLIGHT"},
		{map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "10001"}, "MCP_HTTP_MAX_IN_FLIGHT"},
		{map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "64k"}, "MCP_HTTP_MAX_IN_FLIGHT"},
	}
	for _, tt := range tests {
		cfg, err := loadConfig(func(k string) string { return tt.env[k] })
		if err == nil {
			_, err = loadHTTPConfig(cfg)
		}
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.wantErr == "" && err != nil || !strings.Contains(got, tt.wantErr) {
			t.Errorf("%v: got error %q, want %q", tt.env, got, tt.wantErr)
		}
		if tok := tt.env["MCP_BEARER_TOKEN"]; tok != "" && strings.Contains(got, tok) {
			t.Errorf("%v: the error echoes the token", tt.env)
		}
	}
}

// TestHTTPListenAddr checks where -http binds and when it refuses to.
func TestHTTPListenAddr(t *testing.T) {
	t.Parallel()
	tests := []struct {
		addr    string
		auth    bool
		want    string
		wantErr bool
	}{
		{":8080", false, "127.0.0.1:8080", false},
		{":0", false, "127.0.0.1:0", false},
		{"127.0.0.1:8080", false, "127.0.0.1:8080", false},
		{"127.1.2.3:8080", false, "127.1.2.3:8080", false},
		{"localhost:8080", false, "localhost:8080", false},
		{"[::1]:8080", false, "[::1]:8080", false},
		{"0.0.0.0:8080", false, "", true},
		{"[::]:8080", false, "", true},
		{"192.168.1.2:8080", false, "", true},
		{"gitea-mcp.example:8080", false, "", true},
		{"0.0.0.0:8080", true, "0.0.0.0:8080", false},
		{"8080", false, "", true},
		{"", false, "", true},
	}
	for _, tt := range tests {
		got, err := httpListenAddr(tt.addr, tt.auth)
		if got != tt.want || (err != nil) != tt.wantErr {
			t.Errorf("httpListenAddr(%q, %v) = %q, %v; want %q, error %v", tt.addr, tt.auth, got, err, tt.want, tt.wantErr)
		}
	}
	s, _ := newServer(func(string) string { return "" })
	// Bounded: a server that starts serving anyway ends with its context.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.serveHTTP(ctx, "0.0.0.0:0"); err == nil || !strings.Contains(err.Error(), "MCP_BEARER_TOKEN") {
		t.Errorf("serveHTTP on 0.0.0.0 without a token: got %v, want an error naming MCP_BEARER_TOKEN", err)
	}
}

// TestHTTPConcurrent sends 200 tools/list requests at once over one
// session: each answer must carry its own request's id, the requests past
// the bound on requests in flight answered "server busy" and sent again.
func TestHTTPConcurrent(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	sid := httpSessionID(t, ts.URL, "2025-11-25")
	const n = 200
	got := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":"r%d","method":"tools/list"}`, i)
			resp, body := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid}, msg)
			// Past the bound on requests in flight the answer is "server
			// busy" and the client sends it again, as a real one would.
			for tries := 0; resp.StatusCode == http.StatusServiceUnavailable && strings.Contains(string(body), "server busy") && tries < 10000; tries++ {
				resp, body = httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid}, msg)
			}
			var a rpcAnswer
			if err := json.Unmarshal(body, &a); err != nil || resp.StatusCode != 200 || a.Error != nil || len(a.Result["tools"].([]any)) == 0 {
				got[i] = fmt.Sprintf("bad answer %s: %s", resp.Status, body)
				return
			}
			got[i] = string(a.ID)
		})
	}
	wg.Wait()
	want := make([]string, n)
	for i := range want {
		want[i] = fmt.Sprintf(`"r%d"`, i)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestHTTPSessionLimits checks that the least recently used idle session
// makes room for a new one, that idle sessions expire, and that a new
// session is refused with 503 while every session is busy.
func TestHTTPSessionLimits(t *testing.T) {
	t.Parallel()
	ts, tr := newHTTPTest(t, nil)
	tr.mu.Lock()
	tr.limit = 2
	tr.mu.Unlock()
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	status := func(sid string) int {
		resp, _ := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid}, list)
		return resp.StatusCode
	}
	a := httpSessionID(t, ts.URL, "2025-11-25")
	b := httpSessionID(t, ts.URL, "2025-11-25")
	status(a) // b is now the least recently used
	c := httpSessionID(t, ts.URL, "2025-11-25")
	if diff := cmp.Diff([]int{200, 404, 200}, []int{status(a), status(b), status(c)}); diff != "" {
		t.Errorf("eviction: mismatch (-want +got):\n%s", diff)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	openStream(t, ctx, ts.URL, a)
	openStream(t, ctx, ts.URL, c)
	if resp, _ := httpDo(t, ts.URL, http.MethodPost, nil, initBody("2025-11-25")); resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("initialize with every session busy: got %s, want 503", resp.Status)
	}
	cancel()
	tr.mu.Lock()
	tr.idle = 0
	tr.mu.Unlock()
	if !waitFor(func() bool { return status(c) == http.StatusNotFound }) { // the stream's release follows the client's close
		t.Fatal("an idle session did not expire")
	}
}

// TestHTTPSessionsFair checks that a full session table makes room by
// ending an idle session of whoever holds the most, not the least recently
// used of all: one user opening sessions cannot push out another's.
func TestHTTPSessionsFair(t *testing.T) {
	t.Parallel()
	tr := newTestTransport(t, nil)
	tr.limit = 3
	start, n := time.Now(), 0
	open := func(owner string) string {
		hs := tr.create(owner)
		if hs == nil {
			t.Fatalf("no session for %s", owner)
		}
		tr.release(hs)
		n++
		tr.mu.Lock()
		hs.last = start.Add(time.Duration(n) * time.Second) // used in order of creation
		tr.mu.Unlock()
		return owner + ":" + hs.id
	}
	kept := func() []string {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		var out []string
		for id, hs := range tr.sessions {
			out = append(out, hs.owner+":"+id)
		}
		slices.Sort(out)
		return out
	}
	bob := open("bob") // the least recently used of all
	open("alice")
	a2 := open("alice")
	a3 := open("alice") // alice holds 2 of 3: her oldest makes room
	if diff := cmp.Diff(sorted(bob, a2, a3), kept()); diff != "" {
		t.Errorf("alice's third session: mismatch (-want +got):\n%s", diff)
	}
	bob2 := open("bob") // alice still holds the most
	if diff := cmp.Diff(sorted(bob, a3, bob2), kept()); diff != "" {
		t.Errorf("bob's second session: mismatch (-want +got):\n%s", diff)
	}
}

// sorted returns ss sorted.
func sorted(ss ...string) []string { return slices.Sorted(slices.Values(ss)) }

// TestHTTPClientDisconnect shows that the request's context reaches Gitea:
// a client that gives up cancels the Gitea call in flight.
func TestHTTPClientDisconnect(t *testing.T) {
	t.Parallel()
	arrived, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	gitea := newScriptedGitea(t)
	gitea.answer("GET", "/repos/a/b", gitea.fakeHold(arrived, cancelled))
	ts, _ := newHTTPTest(t, map[string]string{"GITEA_URL": gitea.URL, "GITEA_TOKEN": fakeToken})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp",
		strings.NewReader(modernBody(modernVersion, "tools/call", `"name":"repoGet","arguments":{"owner":"a","repo":"b"},`)))
	req.Header = http.Header{"Accept": {"application/json"}, "Content-Type": {"application/json"},
		hdrVersion: {modernVersion}, hdrMethod: {"tools/call"}, hdrName: {"repoGet"}}
	go func() {
		<-arrived
		cancel()
	}()
	if _, err := http.DefaultClient.Do(req); err == nil {
		t.Fatal("the request finished before the client gave up")
	}
	select {
	case <-cancelled:
	case <-time.After(patience):
		t.Fatal("the Gitea request was not cancelled")
	}
}

// TestHTTPServe serves on a real listener and shuts down when the context
// is cancelled, ending the GET streams.
func TestHTTPServe(t *testing.T) {
	t.Parallel()
	s, err := newServer(func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.newHTTPTransport(&httpConfig{inFlight: maxInFlight}).serve(ctx, ln) }()
	base := "http://" + ln.Addr().String()
	events := openStream(t, context.Background(), base, httpSessionID(t, base, "2025-11-25"))
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve: %v", err)
		}
	case <-time.After(patience):
		t.Fatal("serve did not return after cancel")
	}
	for _, open := nextEvent(t, events); open; _, open = nextEvent(t, events) {
	}
	if _, err := http.Get(base + "/mcp"); err == nil {
		t.Error("the server still answers after shutdown")
	}
}

// FuzzHTTPAccepts checks that Accept parsing never panics and that a header
// naming the type alone allows it.
func FuzzHTTPAccepts(f *testing.F) {
	for _, s := range []string{"application/json, text/event-stream", "*/*;q=0.1", "application/json;q=0, */*", "text/*;q=abc", ";;,", "a/b;q=1e999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		accepts([]string{header}, "application/json")
		if !accepts([]string{header + ",application/json"}, "application/json") && !strings.Contains(header, "application/json") {
			t.Errorf("Accept %q plus application/json refuses application/json", header)
		}
	})
}

// FuzzHTTPHeaderValue checks the =?base64?...?= decoding: no panics, and a
// value without the sentinel is itself.
func FuzzHTTPHeaderValue(f *testing.F) {
	for _, s := range []string{"repoGet", "=?base64?cmVwb0dldA==?=", "=?base64?!!?=", "=?base64??=", "=?base64?", "?="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		got, ok := decodeHeaderValue(v)
		if !strings.HasPrefix(v, "=?base64?") && (got != v || !ok) {
			t.Errorf("decodeHeaderValue(%q) = %q, %v; want it unchanged", v, got, ok)
		}
	})
}

// FuzzHTTPOrigin checks that an admitted Origin is listed or names a
// loopback host.
func FuzzHTTPOrigin(f *testing.F) {
	c := &httpConfig{origins: []string{"https://app.example.com"}}
	for _, s := range []string{"http://localhost:1", "http://[::1]", "http://127.0.0.1.evil", "null", "https://app.example.com", "http://localhost@evil"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, origin string) {
		if !c.originAllowed(origin) {
			return
		}
		h := origin[strings.Index(origin, "://")+3:]
		if host, _, err := net.SplitHostPort(h); err == nil {
			h = host
		}
		h = strings.Trim(h, "[]")
		if !strings.EqualFold(origin, "https://app.example.com") && !isLoopback(h) {
			t.Errorf("Origin %q admitted: host %q is not loopback", origin, h)
		}
	})
}

// FuzzHTTPPost sends arbitrary headers and bodies through the handler: it
// must answer with a known status and, but for 202 and 204, a JSON body.
func FuzzHTTPPost(f *testing.F) {
	s, err := newServer(func(string) string { return "" })
	if err != nil {
		f.Fatal(err)
	}
	h := s.newHTTPTransport(&httpConfig{inFlight: maxInFlight})
	f.Add("application/json", "application/json", modernVersion, "tools/list", "", modernBody(modernVersion, "tools/list", ""))
	f.Add("*/*", "application/json", modernVersion, "tools/call", "=?base64?eA==?=", modernBody(modernVersion, "tools/call", `"name":"x",`))
	f.Add("text/event-stream", "application/json;charset=utf-8", "", "", "", initBody("2025-11-25"))
	f.Add("", "text/plain", "1999", "ping", "", `[{}]`)
	f.Fuzz(func(t *testing.T, accept, ctype, version, method, name, body string) {
		req := httptest.NewRequest(http.MethodPost, "/mcp", strings.NewReader(body))
		for k, v := range map[string]string{"Accept": accept, "Content-Type": ctype, hdrVersion: version, hdrMethod: method, hdrName: name} {
			if v != "" {
				req.Header.Set(k, v)
			}
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case 200, 400, 404, 406, 413, 415:
			data := w.Body.String()
			if w.Header().Get("Content-Type") == sseType {
				data = strings.TrimSpace(strings.TrimPrefix(data, "event: message\ndata: "))
			}
			if !json.Valid([]byte(data)) {
				t.Errorf("status %d with a body that is not JSON: %q", w.Code, w.Body)
			}
		case 202:
		default:
			t.Errorf("unexpected status %d: %s", w.Code, w.Body)
		}
	})
}

// BenchmarkHTTPToolsList measures one tools/list round trip over a session.
func BenchmarkHTTPToolsList(b *testing.B) {
	ts, _ := newHTTPTest(b, nil)
	sid := httpSessionID(b, ts.URL, "2025-11-25")
	for b.Loop() {
		if resp, _ := httpDo(b, ts.URL, http.MethodPost, []string{hdrSession, sid}, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`); resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// BenchmarkHTTPStateless measures one stateless tools/list round trip.
func BenchmarkHTTPStateless(b *testing.B) {
	ts, _ := newHTTPTest(b, nil)
	body := modernBody(modernVersion, "tools/list", "")
	for b.Loop() {
		if resp, _ := httpDo(b, ts.URL, http.MethodPost, []string{hdrVersion, modernVersion, hdrMethod, "tools/list"}, body); resp.StatusCode != 200 {
			b.Fatal(resp.Status)
		}
	}
}

// TestHTTPCORS checks CORS on /mcp: an origin of MCP_ALLOWED_ORIGINS gets
// its preflight answered before authentication and CORS headers on every
// answer, the 401 included; no other origin, loopback ones included, gets any.
func TestHTTPCORS(t *testing.T) {
	t.Parallel()
	const token, app = "s3cret-Token_0123456789", "https://app.example.com"
	ts, _ := newHTTPTest(t, map[string]string{"MCP_BEARER_TOKEN": token, "MCP_ALLOWED_ORIGINS": app})
	type got struct {
		Status                           int
		Origin, Methods, Headers, Expose string
	}
	preflight := got{Status: 204, Origin: app, Methods: corsMethods, Headers: corsHeaders, Expose: corsExposed}
	tests := []struct {
		name, method string
		kv           []string
		want         got
	}{
		{"preflight", "OPTIONS", []string{"Origin", app, "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type,mcp-protocol-version"}, preflight},
		{"preflight, origin in another case", "OPTIONS", []string{"Origin", "https://APP.example.com", "Access-Control-Request-Method", "POST"},
			got{Status: 204, Origin: "https://APP.example.com", Methods: corsMethods, Headers: corsHeaders, Expose: corsExposed}},
		{"preflight of a loopback origin", "OPTIONS", []string{"Origin", "http://localhost:5173", "Access-Control-Request-Method", "POST"}, got{Status: 401}},
		{"preflight of another origin", "OPTIONS", []string{"Origin", "https://evil.example", "Access-Control-Request-Method", "POST"}, got{Status: 403}},
		{"OPTIONS that is no preflight", "OPTIONS", []string{"Origin", app}, got{Status: 401, Origin: app, Expose: corsExposed}},
		{"POST without token", "POST", []string{"Origin", app}, got{Status: 401, Origin: app, Expose: corsExposed}},
		{"POST with token", "POST", []string{"Origin", app, "Authorization", "Bearer " + token}, got{Status: 200, Origin: app, Expose: corsExposed}},
		{"POST from loopback", "POST", []string{"Origin", "http://localhost:5173", "Authorization", "Bearer " + token}, got{Status: 200}},
		{"POST without Origin", "POST", []string{"Authorization", "Bearer " + token}, got{Status: 200}},
		{"POST from another origin", "POST", []string{"Origin", "https://evil.example", "Authorization", "Bearer " + token}, got{Status: 403}},
		{"two origins", "POST", []string{"Origin", app, "Origin", app, "Authorization", "Bearer " + token}, got{Status: 403}},
	}
	for _, tt := range tests {
		resp, _ := httpDo(t, ts.URL, tt.method, tt.kv, initBody("2025-11-25"))
		h := resp.Header
		g := got{resp.StatusCode, h.Get("Access-Control-Allow-Origin"), h.Get("Access-Control-Allow-Methods"), h.Get("Access-Control-Allow-Headers"), h.Get("Access-Control-Expose-Headers")}
		if diff := cmp.Diff(tt.want, g); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
		if h.Get("Vary") != "Origin" {
			t.Errorf("%s: Vary %q, want Origin", tt.name, h.Get("Vary"))
		}
	}
}

// TestHTTPBusy fills the bound on requests in flight, shared by all sessions,
// with calls that hang in Gitea: one more request is refused at once with
// 503 and stdio's "server busy" error, in a session or stateless, while a
// notification still gets through; once the calls end, requests are served.
func TestHTTPBusy(t *testing.T) {
	t.Parallel()
	const bound = 3
	arrived := make(chan struct{}, bound)
	h := newScriptedGitea(t).user("alice")
	h.otherwise(h.fakeHold(arrived, nil))
	ts, _ := newHTTPTest(t, map[string]string{"GITEA_URL": h.URL, "GITEA_TOKEN": fakeToken, "MCP_HTTP_MAX_IN_FLIGHT": fmt.Sprint(bound)})
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel) // before the servers close
	sid := httpSessionID(t, ts.URL, "2025-11-25")
	var wg sync.WaitGroup
	for i := range bound {
		sid := httpSessionID(t, ts.URL, "2025-11-25") // a session each: the bound is the server's
		wg.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, ts.URL+"/mcp", strings.NewReader(fmt.Sprintf(
				`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"repoGet","arguments":{"owner":"alice","repo":"r"}}}`, i)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set(hdrSession, sid)
			if resp, err := http.DefaultClient.Do(req); err == nil {
				resp.Body.Close()
			}
		})
	}
	awaitSignals(t, arrived, bound, "calls reached Gitea")
	busy := fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"server busy: %d messages in flight; send it again once one is answered"}}`, bound)
	for name, tc := range map[string]struct {
		kv   []string
		body string
	}{
		"session":   {[]string{hdrSession, sid}, `{"jsonrpc":"2.0","id":7,"method":"ping"}`},
		"stateless": {[]string{hdrVersion, modernVersion, hdrMethod, "ping"}, strings.Replace(modernBody(modernVersion, "ping", ""), `"id":1`, `"id":7`, 1)},
	} {
		resp, body := httpDo(t, ts.URL, http.MethodPost, tc.kv, tc.body)
		if diff := cmp.Diff(busy, string(body)); diff != "" || resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "1" {
			t.Errorf("%s: %s, Retry-After %q; body mismatch (-want +got):\n%s", name, resp.Status, resp.Header.Get("Retry-After"), diff)
		}
	}
	if resp, _ := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid}, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`); resp.StatusCode != http.StatusAccepted {
		t.Errorf("a notification while busy: got %s, want 202", resp.Status)
	}
	cancel()
	wg.Wait()
	if !waitFor(func() bool {
		resp, _ := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid}, `{"jsonrpc":"2.0","id":8,"method":"ping"}`)
		return resp.StatusCode == http.StatusOK
	}) {
		t.Error("requests still refused after the calls in flight ended")
	}
}

// BenchmarkHTTPCallOverhead measures one tools/call of repoGet against a
// local server answering like Gitea (so that the network to it costs the
// same each time): served straight by a session (the JSON-RPC layer that
// stdio adds nothing but a line to), and over HTTP in a session and
// stateless. The differences are the HTTP transport's own cost per call.
// Besides wall time (which a loaded machine inflates) it reports the CPU
// time of the whole process (client, server and local Gitea) per call.
func BenchmarkHTTPCallOverhead(b *testing.B) {
	repo := []byte(`{"id":1,"name":"demo","full_name":"alice/demo","owner":{"login":"alice"},"description":"a repository","default_branch":"main","stars_count":3}`)
	gitea := newScriptedGitea(b).user("alice").on("GET", "/repos/alice/demo", http.StatusOK, string(repo))
	dials := &gitea.dials // connections the server opened to Gitea
	ts, tr := newHTTPTest(b, map[string]string{"GITEA_URL": gitea.URL, "GITEA_TOKEN": fakeToken,
		"MCP_HTTP_MAX_IN_FLIGHT": "256"})
	call := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"repoGet","arguments":{"owner":"alice","repo":"demo"}}}`
	check := func(b *testing.B, out []byte) {
		if !bytes.Contains(out, []byte(`\"full_name\":\"alice/demo\"`)) {
			b.Fatalf("%.300s", out)
		}
	}
	cpu := func(b *testing.B, loop func()) {
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		for b.Loop() {
			loop()
		}
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		used := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/op")
	}
	b.Run("session", func(b *testing.B) {
		sess := newSession(tr.srv, func([]byte) {})
		sess.handleRaw(b.Context(), []byte(initBody("2025-11-25")))
		cpu(b, func() { check(b, sess.handleRaw(b.Context(), []byte(call))) })
	})
	sid := httpSessionID(b, ts.URL, "2025-11-25")
	b.Run("http-session", func(b *testing.B) {
		cpu(b, func() {
			_, body := httpDo(b, ts.URL, http.MethodPost, []string{hdrSession, sid}, call)
			check(b, body)
		})
	})
	modern := strings.Replace(modernBody(modernVersion, "tools/call", `"name":"repoGet","arguments":{"owner":"alice","repo":"demo"},`), `"id":1`, `"id":2`, 1)
	b.Run("http-stateless", func(b *testing.B) {
		cpu(b, func() {
			_, body := httpDo(b, ts.URL, http.MethodPost, []string{hdrVersion, modernVersion, hdrMethod, "tools/call", hdrName, "repoGet"}, modern)
			check(b, body)
		})
	})
	b.Run("http-stateless-200", func(b *testing.B) { // 200 callers at once
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
		defer client.CloseIdleConnections()
		kv := []string{hdrVersion, modernVersion, hdrMethod, "tools/call", hdrName, "repoGet"}
		var before, after syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &before)
		dialed := dials.Load()
		b.SetParallelism(100)
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				resp, body, err := mcpSend(client, ts.URL, http.MethodPost, kv, modern)
				if err != nil || resp.StatusCode != http.StatusOK {
					b.Fatal(resp, err)
				}
				check(b, body)
			}
		})
		syscall.Getrusage(syscall.RUSAGE_SELF, &after)
		used := time.Duration(after.Utime.Nano() + after.Stime.Nano() - before.Utime.Nano() - before.Stime.Nano())
		b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/op")
		b.ReportMetric(float64(dials.Load()-dialed)/float64(b.N), "gitea-dials/op")
	})
}

// TestHTTPSlowBody: found by attacking the transport's time limits. A client
// that sent a request's headers and then its body slowly, or never, held its
// connection and a goroutine for as long as it liked everywhere but on an
// authenticated POST /mcp: the OAuth endpoints read their bodies without a
// deadline, and an answer given without reading the body (401 before the
// token is known) waited for the rest of it. Now every request must arrive
// whole within the transport's read timeout, and the server closes the
// connection of one that does not.
func TestHTTPSlowBody(t *testing.T) {
	t.Parallel()
	tr := newTestTransport(t, oauthTestEnv("http://127.0.0.1:1"))
	tr.read = 200 * time.Millisecond
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	if err := tr.oauth.setPublic(addr); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go tr.serve(ctx, ln)
	deadline := time.Now().Add(10 * time.Second) // one for all: they wait together
	for _, tt := range []struct{ path, typ string }{
		{"/register", "application/json"},
		{"/token", "application/x-www-form-urlencoded"},
		{"/authorize", "application/x-www-form-urlencoded"},
		{"/mcp", "application/json"}, // no token: 401 at once, then the body is awaited
	} {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nAccept: application/json\r\nContent-Length: 1000\r\n\r\n{", tt.path, addr, tt.typ)
		c.SetReadDeadline(deadline)
		defer func() {
			var buf bytes.Buffer
			if _, err := buf.ReadFrom(c); err != nil {
				t.Errorf("POST %s with 1 byte of a 1000-byte body: the connection is still open after 10 s (%v)", tt.path, err)
			}
		}()
	}
}

// TestHTTPBatchInitialize checks that an initialize inside a 2025-03-26
// batch is refused with -32600 (initialize must not be part of a batch), so
// that it cannot renegotiate the session the batch runs in: the session
// keeps its version and the batch's other messages are served.
func TestHTTPBatchInitialize(t *testing.T) {
	t.Parallel()
	ts, _ := newHTTPTest(t, nil)
	sid := httpSessionID(t, ts.URL, "2025-03-26")
	_, body := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid},
		`[{"jsonrpc":"2.0","id":2,"method":"initialize","params":{"protocolVersion":"2025-11-25"}},{"jsonrpc":"2.0","id":3,"method":"ping"}]`)
	want := `[{"jsonrpc":"2.0","id":2,"error":{"code":-32600,"message":"invalid request: initialize must not be part of a batch"}},{"jsonrpc":"2.0","id":3,"result":{}}]`
	if diff := cmp.Diff(want, string(body)); diff != "" {
		t.Errorf("batch with initialize: mismatch (-want +got):\n%s", diff)
	}
	if resp, body := httpDo(t, ts.URL, http.MethodPost, []string{hdrSession, sid, hdrVersion, "2025-03-26"}, `{"jsonrpc":"2.0","id":4,"method":"ping"}`); resp.StatusCode != http.StatusOK {
		t.Errorf("ping at the session's version after the batch: %s %s", resp.Status, body)
	}
}

// countingReader counts the bytes read from r.
type countingReader struct {
	r io.Reader
	n int
}

// Read reads from r and counts.
func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += n
	return n, err
}

// TestHTTPBodyInSlot checks that a POST body is read whole only in a slot
// of MCP_HTTP_MAX_IN_FLIGHT: while every slot is taken, a large request is
// refused as busy after at most maxNotificationBytes of its body (bodies
// pending for a slot held no memory bound), and a notification still gets
// through; with a slot free the large request is served.
func TestHTTPBodyInSlot(t *testing.T) {
	t.Parallel()
	tr := newTestTransport(t, map[string]string{"MCP_HTTP_MAX_IN_FLIGHT": "1"})
	post := func(sid, body string) (*httptest.ResponseRecorder, int) {
		cr := &countingReader{r: strings.NewReader(body)}
		req := httptest.NewRequest(http.MethodPost, "/mcp", cr)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(hdrSession, sid)
		w := httptest.NewRecorder()
		tr.ServeHTTP(w, req)
		return w, cr.n
	}
	w, _ := post("", initBody("2025-11-25"))
	sid := w.Header().Get(hdrSession)
	large := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 1<<20) + `"}}`
	note := `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}`
	type got struct{ Status, Read int }
	for _, tt := range []struct {
		name string
		busy bool
		body string
		want got
	}{
		{"a large request while busy", true, large, got{http.StatusServiceUnavailable, maxNotificationBytes + 1}},
		{"a notification while busy", true, note, got{http.StatusAccepted, len(note)}},
		{"a large request with a slot free", false, large, got{http.StatusOK, len(large)}},
	} {
		if tt.busy {
			tr.slots <- struct{}{} // the one slot taken
		}
		w, n := post(sid, tt.body)
		if tt.busy {
			<-tr.slots
		}
		if diff := cmp.Diff(tt.want, got{w.Code, n}); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestHTTPSessionsBusyHolder checks whom a full session table ends when the
// user who holds the most keeps their sessions busy: none of anyone else's.
// mallory's new session is refused while all of hers are busy, ends her own
// idle one once she has one, and bob, holding fewer, ends only his own.
func TestHTTPSessionsBusyHolder(t *testing.T) {
	t.Parallel()
	tr := newTestTransport(t, nil)
	tr.limit = 3
	kept := func() []string {
		tr.mu.Lock()
		defer tr.mu.Unlock()
		var out []string
		for _, hs := range tr.sessions {
			out = append(out, hs.owner+":"+hs.id)
		}
		slices.Sort(out)
		return out
	}
	name := func(hs *httpSession) string {
		if hs == nil {
			return "no session"
		}
		return hs.owner + ":" + hs.id
	}
	bob := tr.create("bob")
	tr.release(bob)                                      // idle
	m1, m2 := tr.create("mallory"), tr.create("mallory") // busy: a stream each
	if hs := tr.create("mallory"); hs != nil {
		t.Errorf("mallory's third session with all of hers busy: got one, ending %v", kept())
	}
	if diff := cmp.Diff(sorted(name(bob), name(m1), name(m2)), kept()); diff != "" {
		t.Errorf("after mallory's refused session: mismatch (-want +got):\n%s", diff)
	}
	tr.release(m1)
	m3 := tr.create("mallory")
	if diff := cmp.Diff(sorted(name(bob), name(m2), name(m3)), kept()); diff != "" {
		t.Errorf("mallory's session with one of hers idle: mismatch (-want +got):\n%s", diff)
	}
	bob2 := tr.create("bob")
	if diff := cmp.Diff(sorted(name(m2), name(m3), name(bob2)), kept()); diff != "" {
		t.Errorf("bob's second session: mismatch (-want +got):\n%s", diff)
	}
}

// TestHTTPSessionsPerUser: the session limit counts users, not the OAuth
// clients they sign in through: mallory's sessions through two clients are
// hers, so when they are all busy her next one, through a third client, is
// refused and bob's idle session lives on.
func TestHTTPSessionsPerUser(t *testing.T) {
	t.Parallel()
	tr := newTestTransport(t, nil)
	tr.limit = 3
	bob := tr.create("c1 id 2")
	tr.release(bob)
	tr.create("c1 id 3")
	tr.create("c2 id 3") // mallory's, busy, through two clients
	if hs := tr.create("c3 id 3"); hs != nil {
		t.Errorf("mallory's third session through a third client, all hers busy: got one")
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.sessions[bob.id] == nil {
		t.Error("bob's idle session ended by mallory's")
	}
}

// TestHTTPSessionsStreams checks, over HTTP in OAuth mode, that GET streams
// keep one user's sessions busy without ending another's: mallory fills the
// table with sessions, each with a stream, and her next initialize gets 503
// while bob's idle session lives on; and that a user's streams are bounded
// (429 beyond), bob's counted apart from mallory's.
func TestHTTPSessionsStreams(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	tr := ts.Config.Handler.(*httpTransport)
	tr.mu.Lock()
	tr.limit, tr.most = 5, 4
	tr.mu.Unlock()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stream := func(token, sid string) int {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ts.URL+"/mcp", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set(hdrSession, sid)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("GET stream: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			resp.Body.Close()
		}
		return resp.StatusCode // a stream's body stays open until ctx ends
	}
	bob, mallory := accessToken(o, "bob", time.Hour), accessToken(o, "mallory", time.Hour)
	bobSID := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+bob)
	var sids []string
	for range 4 {
		sid := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+mallory)
		if status := stream(mallory, sid); status != http.StatusOK {
			t.Fatalf("mallory's stream: %d", status)
		}
		sids = append(sids, sid)
	}
	type got struct{ Init, BobList, Stream, BobStream int }
	var g got
	resp, _ := httpDo(t, ts.URL, http.MethodPost, []string{"Authorization", "Bearer " + mallory}, initBody("2025-11-25"))
	g.Init = resp.StatusCode
	resp, _ = httpDo(t, ts.URL, http.MethodPost, bearer(bob, bobSID), `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	g.BobList = resp.StatusCode
	g.Stream, g.BobStream = stream(mallory, sids[0]), stream(bob, bobSID)
	want := got{http.StatusServiceUnavailable, http.StatusOK, http.StatusTooManyRequests, http.StatusOK}
	if diff := cmp.Diff(want, g); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}
