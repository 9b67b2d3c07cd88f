package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeToken is the token the fake Gitea accepts unless a test adds others.
const fakeToken = "f4cef4cef4cef4cef4cef4cef4cef4cef4cef4ce"

// scriptedGitea is the one in-process stand-in for Gitea of the offline tests
// (go test -short): it answers what a test scripts, so that the server's own
// branches that read Gitea (the live policy checks, the workflow gates) run
// without a real Gitea. What Gitea itself does is tested against the real
// Gitea (giteaserver_test.go), never here. Unscripted requests get 404.
type scriptedGitea struct {
	*httptest.Server
	mu      sync.Mutex
	tokens  map[string]bool         // accepted "Authorization: token ..." values
	answers map[string][]fakeAnswer // by "METHOD /path" under /api/v1, answered in turn, the last repeated
	got     []fakeRequest           // every request, in order
}

// fakeAnswer is one scripted answer.
type fakeAnswer struct {
	status int
	body   string
}

// fakeRequest is one request the fake received.
type fakeRequest struct {
	Method, Path, Query, Body string
	Sudo                      string // the Sudo header
}

// newScriptedGitea starts a fake Gitea that accepts fakeToken; it stops with the test.
func newScriptedGitea(tb testing.TB) *scriptedGitea {
	tb.Helper()
	f := &scriptedGitea{tokens: map[string]bool{fakeToken: true}, answers: map[string][]fakeAnswer{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(f.Close)
	return f
}

// on scripts the answers to method and path (relative to /api/v1, without
// the query): status with each body in turn, the last one repeated.
func (f *scriptedGitea) on(method, path string, status int, bodies ...string) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := method + " " + path
	f.answers[key] = nil
	for _, b := range bodies {
		f.answers[key] = append(f.answers[key], fakeAnswer{status, b})
	}
	if len(bodies) == 0 {
		f.answers[key] = []fakeAnswer{{status, ""}}
	}
	return f
}

// then adds an answer to those scripted for method and path: the one given
// after all the others.
func (f *scriptedGitea) then(method, path string, status int, body string) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := method + " " + path
	f.answers[key] = append(f.answers[key], fakeAnswer{status, body})
	return f
}

// json scripts a 200 answer of v, encoded, to a GET of path.
func (f *scriptedGitea) json(path string, v ...any) *scriptedGitea {
	var bodies []string
	for _, x := range v {
		b, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		bodies = append(bodies, string(b))
	}
	return f.on(http.MethodGet, path, http.StatusOK, bodies...)
}

// user scripts who the token belongs to (GET /user).
func (f *scriptedGitea) user(login string) *scriptedGitea {
	return f.json("/user", map[string]any{"login": login})
}

// accept adds a token the fake accepts.
func (f *scriptedGitea) accept(token string) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = true
	return f
}

// serve answers one request from the script.
func (f *scriptedGitea) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimPrefix(r.URL.EscapedPath(), "/api/v1")
	f.mu.Lock()
	f.got = append(f.got, fakeRequest{r.Method, path, r.URL.RawQuery, string(body), r.Header.Get("Sudo")})
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	ok = ok && f.tokens[tok]
	key := r.Method + " " + path
	queue := f.answers[key]
	a := fakeAnswer{http.StatusNotFound, `{"message":"not found"}`}
	if len(queue) > 0 {
		a = queue[0]
		if len(queue) > 1 {
			f.answers[key] = queue[1:]
		}
	}
	f.mu.Unlock()
	if !ok {
		a = fakeAnswer{http.StatusUnauthorized, `{"message":"token is required"}`}
	}
	if a.body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	w.WriteHeader(a.status)
	w.Write([]byte(a.body))
}

// requests returns the requests received so far.
func (f *scriptedGitea) requests() []fakeRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]fakeRequest(nil), f.got...)
}

// writes returns "METHOD /path" of every request received that is not a GET.
func (f *scriptedGitea) writes() []string {
	var out []string
	for _, r := range f.requests() {
		if r.Method != http.MethodGet {
			out = append(out, r.Method+" "+r.Path)
		}
	}
	return out
}

// server starts a server on the fake with fakeToken and the settings kv
// (name, value pairs).
func (f *scriptedGitea) server(tb testing.TB, kv ...string) *server {
	tb.Helper()
	env := map[string]string{"GITEA_URL": f.URL, "GITEA_TOKEN": fakeToken}
	for i := 0; i+1 < len(kv); i += 2 {
		env[kv[i]] = kv[i+1]
	}
	return testServer(tb, env)
}

// fakeCall calls tool with args on s as a client would and returns the
// decoded text of its result and whether it is an error.
func fakeCall(tb testing.TB, ctx context.Context, s *server, tool string, args map[string]any) (map[string]any, bool) {
	tb.Helper()
	params, err := json.Marshal(map[string]any{"name": tool, "arguments": args})
	if err != nil {
		tb.Fatal(err)
	}
	res, rerr := s.callTool(ctx, nil, params)
	if rerr != nil {
		tb.Fatalf("%s: %v", tool, rerr.Message)
	}
	var out map[string]any
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &out); err != nil {
		tb.Fatalf("%s: result text is not JSON: %v\n%s", tool, err, text)
	}
	return out, res["isError"] == true
}

// TestScriptedGitea checks the fake itself: scripted answers in turn, 404 for
// the rest, 401 without an accepted token, and the request log.
func TestScriptedGitea(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).on("GET", "/a", 200, `{"n":1}`, `{"n":2}`)
	get := func(path, token string) (int, string) {
		req, _ := http.NewRequest("GET", f.URL+"/api/v1"+path, nil)
		req.Header.Set("Authorization", "token "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for _, tc := range []struct {
		path, token string
		status      int
		body        string
	}{
		{"/a", fakeToken, 200, `{"n":1}`},
		{"/a", fakeToken, 200, `{"n":2}`},
		{"/a", fakeToken, 200, `{"n":2}`},
		{"/b", fakeToken, 404, `{"message":"not found"}`},
		{"/a", "other", 401, `{"message":"token is required"}`},
	} {
		if status, body := get(tc.path, tc.token); status != tc.status || body != tc.body {
			t.Errorf("GET %s: got %d %s, want %d %s", tc.path, status, body, tc.status, tc.body)
		}
	}
	if n := len(f.requests()); n != 5 {
		t.Errorf("logged %d requests, want 5", n)
	}
}
