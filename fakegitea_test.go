package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"hash/crc32"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// fakeToken is the token the fake Gitea accepts unless a test adds others.
const fakeToken = "f4cef4cef4cef4cef4cef4cef4cef4cef4cef4ce"

// scriptedGitea is the one in-process stand-in for Gitea of the offline tests
// (go test -short): it answers what a test scripts, so that the server's own
// branches that read Gitea (the live policy checks, the workflow gates, the
// OAuth sign-in) run without a real Gitea, and it injects the faults a real
// Gitea cannot be made to produce on demand (hangs, stalls, cut or oversized
// bodies, wrong content types, redirects, rate limits). What Gitea itself
// does is tested against the real Gitea (giteaserver_test.go), never here.
// Requests under /api/v1 need an accepted token (401 otherwise); unscripted
// requests get the fallback answer, 404 unless a test sets another.
type scriptedGitea struct {
	*httptest.Server
	mu       sync.Mutex
	tokens   map[string]string       // accepted "Authorization: token ..." values, with the login GET /user answers ("" for none)
	answers  map[string][]fakeAnswer // by "METHOD /path" (under /api/v1 without it), answered in turn, the last repeated
	fallback fakeAnswer              // the answer to everything unscripted
	got      []fakeRequest           // every request, in order
	dials    atomic.Int64            // connections opened to the fake
	stop     chan struct{}           // closed when the test ends: held answers let go
}

// fakeAnswer is one scripted answer: a status with a body and headers, or a
// fault that serve writes instead.
type fakeAnswer struct {
	status int
	body   string
	header http.Header      // set on the answer; a Content-Type without values sends none (no sniffing)
	serve  http.HandlerFunc // the fault, if not nil (the request body is read already)
}

// fakeRequest is one request the fake received.
type fakeRequest struct {
	Method, Path, Query, Body string
	Sudo                      string // the Sudo header
}

// newScriptedGitea starts a fake Gitea over HTTP that accepts fakeToken; it
// stops with the test.
func newScriptedGitea(tb testing.TB) *scriptedGitea {
	return startScriptedGitea(tb, (*httptest.Server).Start)
}

// newScriptedGiteaTLS is newScriptedGitea over HTTPS, with the certificate
// of httptest (f.Certificate()).
func newScriptedGiteaTLS(tb testing.TB) *scriptedGitea {
	return startScriptedGitea(tb, (*httptest.Server).StartTLS)
}

// startScriptedGitea starts a fake Gitea with start.
func startScriptedGitea(tb testing.TB, start func(*httptest.Server)) *scriptedGitea {
	tb.Helper()
	f := &scriptedGitea{tokens: map[string]string{fakeToken: ""}, answers: map[string][]fakeAnswer{},
		fallback: fakeAnswer{status: http.StatusNotFound, body: `{"message":"not found"}`}, stop: make(chan struct{})}
	f.Server = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.Config.ErrorLog = log.New(io.Discard, "", 0) // handshakes refused and connections cut on purpose
	f.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			f.dials.Add(1)
		}
	}
	start(f.Server)
	tb.Cleanup(func() { close(f.stop); f.Close() })
	return f
}

// on scripts the answers to method and path (relative to /api/v1, without
// the query): status with each body in turn, the last one repeated.
func (f *scriptedGitea) on(method, path string, status int, bodies ...string) *scriptedGitea {
	var as []fakeAnswer
	for _, b := range bodies {
		as = append(as, fakeAnswer{status: status, body: b})
	}
	if len(bodies) == 0 {
		as = []fakeAnswer{{status: status}}
	}
	return f.answer(method, path, as...)
}

// answer scripts the answers to method and path in turn, the last one
// repeated; a path outside the API (the OAuth endpoints) is given whole.
func (f *scriptedGitea) answer(method, path string, as ...fakeAnswer) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answers[method+" "+path] = as
	return f
}

// then adds an answer to those scripted for method and path: the one given
// after all the others.
func (f *scriptedGitea) then(method, path string, status int, body string) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	key := method + " " + path
	f.answers[key] = append(f.answers[key], fakeAnswer{status: status, body: body})
	return f
}

// otherwise sets the answer to every request not scripted.
func (f *scriptedGitea) otherwise(a fakeAnswer) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fallback = a
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
	if path == prPath { // and refs/pull/1/head, where Gitea shows the pull request, at its head (executor.shownHead)
		var refs []string
		for _, x := range v {
			head, _ := get(x, "head.sha").(string)
			refs = append(refs, fmt.Sprintf(`[{"ref":"refs/pull/1/head","object":{"sha":%q}}]`, head))
		}
		f.on(http.MethodGet, pullRef, http.StatusOK, refs...)
	}
	return f.on(http.MethodGet, path, http.StatusOK, bodies...)
}

// user scripts who the token belongs to (GET /user).
func (f *scriptedGitea) user(login string) *scriptedGitea {
	return f.json("/user", map[string]any{"login": login})
}

// accept adds a token the fake accepts; an unscripted GET /user with it
// answers login, if there is one.
func (f *scriptedGitea) accept(token string, login ...string) *scriptedGitea {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tokens[token] = strings.Join(login, "")
	return f
}

// serve answers one request from the script.
func (f *scriptedGitea) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	path, api := strings.CutPrefix(r.URL.EscapedPath(), "/api/v1")
	if !api {
		path = r.URL.Path
	}
	f.mu.Lock()
	f.got = append(f.got, fakeRequest{r.Method, path, r.URL.RawQuery, string(body), r.Header.Get("Sudo")})
	tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "token ")
	login, known := f.tokens[tok]
	key := r.Method + " " + path
	queue := f.answers[key]
	a := f.fallback
	switch {
	case len(queue) > 0:
		a = queue[0]
		if len(queue) > 1 {
			f.answers[key] = queue[1:]
		}
	case key == "GET /user" && login != "":
		a = fakeAnswer{status: http.StatusOK, body: fmt.Sprintf(`{"login":%q,"id":%d}`, login, fakeUserID(login))}
	}
	f.mu.Unlock()
	if api && !(ok && known) {
		a = fakeAnswer{status: http.StatusUnauthorized, body: `{"message":"token is required"}`}
	}
	if a.serve != nil {
		a.serve(w, r)
		return
	}
	if a.body != "" {
		w.Header().Set("Content-Type", "application/json")
	}
	for k, v := range a.header {
		w.Header()[k] = v
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

// count returns how many requests method and path got ("" for any method).
func (f *scriptedGitea) count(method, path string) int {
	n := 0
	for _, r := range f.requests() {
		if r.Path == path && (method == "" || r.Method == method) {
			n++
		}
	}
	return n
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

// fakeWith is an answer with headers kv (name, value pairs; a value ""
// sends no such header, for Content-Type not even a sniffed one).
func fakeWith(status int, body string, kv ...string) fakeAnswer {
	a := fakeAnswer{status: status, body: body, header: http.Header{}}
	for i := 0; i+1 < len(kv); i += 2 {
		k := http.CanonicalHeaderKey(kv[i])
		if kv[i+1] == "" {
			a.header[k] = nil
		} else {
			a.header.Add(k, kv[i+1])
		}
	}
	return a
}

// fakeHold is a fault: an answer that never comes. It signals arrived (if not
// nil) when the request is in, and released once the client gives up on it.
func (f *scriptedGitea) fakeHold(arrived, released chan<- struct{}) fakeAnswer {
	return fakeAnswer{serve: func(w http.ResponseWriter, r *http.Request) {
		fakeSignal(arrived)
		select {
		case <-r.Context().Done():
			fakeSignal(released)
		case <-f.stop:
		}
	}}
}

// fakeSignal sends on c unless c is nil.
func fakeSignal(c chan<- struct{}) {
	if c != nil {
		c <- struct{}{}
	}
}

// fakeStall is a fault: the status line and the start of a JSON body, then
// nothing until the client gives up.
func (f *scriptedGitea) fakeStall() fakeAnswer {
	return fakeAnswer{serve: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"id":1,`))
		w.(http.Flusher).Flush()
		select {
		case <-r.Context().Done():
		case <-f.stop:
		}
	}}
}

// fakeRaw is a fault: raw bytes instead of an HTTP answer, then the
// connection closes (a body cut short, a framing the client cannot trust).
func fakeRaw(s string) fakeAnswer {
	return fakeAnswer{serve: func(w http.ResponseWriter, r *http.Request) {
		conn, buf, _ := w.(http.Hijacker).Hijack()
		buf.WriteString(s)
		buf.Flush()
		conn.Close()
	}}
}

// fakeHuge is a fault: a 50 MB JSON array, with a Content-Length if declared
// (chunked otherwise), written until the client stops reading; written (if
// not nil) gets the bytes written.
func fakeHuge(declared bool, written *atomic.Int64) fakeAnswer {
	return fakeAnswer{serve: func(w http.ResponseWriter, r *http.Request) {
		elem := []byte(`{"name":"` + strings.Repeat("x", 1000) + `"},`)
		count := 50 << 20 / len(elem)
		w.Header().Set("Content-Type", "application/json")
		if declared {
			w.Header().Set("Content-Length", strconv.Itoa(count*len(elem)+1))
		}
		total, _ := w.Write([]byte("["))
		for range count {
			k, err := w.Write(elem)
			if total += k; err != nil {
				break
			}
		}
		if written != nil {
			written.Store(int64(total))
		}
	}}
}

// fakeOAuth is the OAuth2 provider of a fake Gitea: it signs in its current
// user at once, checking the server's application and PKCE, and makes the
// access tokens it grants tokens of the API.
type fakeOAuth struct {
	f      *scriptedGitea
	mu     sync.Mutex
	login  string               // who signs in next
	codes  map[string][2]string // code -> login, PKCE challenge
	grants map[string]string    // refresh token -> login
	n      int
}

// oauthProvider makes f an OAuth2 provider for the application
// oauthTestAppID where login signs in.
func (f *scriptedGitea) oauthProvider(login string) *fakeOAuth {
	p := &fakeOAuth{f: f, login: login, codes: map[string][2]string{}, grants: map[string]string{}}
	f.answer(http.MethodGet, "/login/oauth/authorize", fakeAnswer{serve: p.authorize})
	f.answer(http.MethodPost, "/login/oauth/access_token", fakeAnswer{serve: p.token})
	return p
}

// setUser makes login the user who signs in next.
func (p *fakeOAuth) setUser(login string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.login = login
}

// authorize signs the current user in and redirects back with a code.
func (p *fakeOAuth) authorize(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	q := r.URL.Query()
	if q.Get("client_id") != oauthTestAppID || q.Get("response_type") != "code" || q.Get("code_challenge_method") != "S256" {
		http.Error(w, "bad authorization request", http.StatusBadRequest)
		return
	}
	p.n++
	code := fmt.Sprintf("gitea-code-%d", p.n)
	p.codes[code] = [2]string{p.login, q.Get("code_challenge")}
	http.Redirect(w, r, q.Get("redirect_uri")+"?"+url.Values{"code": {code}, "state": {q.Get("state")}}.Encode(), http.StatusSeeOther)
}

// token redeems a code or a refresh token.
func (p *fakeOAuth) token(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	defer p.mu.Unlock()
	r.ParseForm()
	form := r.PostForm
	login := ""
	switch c, ok := p.codes[form.Get("code")]; {
	case form.Get("client_id") != oauthTestAppID || form.Get("client_secret") != oauthTestSecret:
	case form.Get("grant_type") == "authorization_code" && ok && pkceChallenge(form.Get("code_verifier")) == c[1]:
		login = c[0]
		delete(p.codes, form.Get("code"))
	case form.Get("grant_type") == "refresh_token":
		login = p.grants[form.Get("refresh_token")]
	}
	w.Header().Set("Content-Type", "application/json")
	if login == "" { // Gitea's error; this one echoes what it got, which the server must redact
		w.WriteHeader(http.StatusBadRequest)
		json.NewEncoder(w).Encode(map[string]string{"error": "unauthorized_client",
			"error_description": "client is not authorized: " + form.Get("code") + form.Get("refresh_token") + "\x1b[31m"})
		return
	}
	p.n++
	at, rt := fmt.Sprintf("gitea-at-%d", p.n), fmt.Sprintf("gitea-rt-%d", p.n)
	p.grants[rt] = login
	p.f.accept(at, login)
	json.NewEncoder(w).Encode(map[string]any{"access_token": at, "refresh_token": rt, "token_type": "bearer", "expires_in": 3600})
}

// TestScriptedGitea checks the fake itself: scripted answers in turn, the
// fallback for the rest, 401 without an accepted token under /api/v1 only,
// headers (a Content-Type of none), the login of an accepted token, and the
// request log.
func TestScriptedGitea(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).on("GET", "/a", 200, `{"n":1}`, `{"n":2}`).accept("other-token", "bob").
		answer("GET", "/raw", fakeWith(200, "plain", "Content-Type", "", "Retry-After", "7")).
		answer("GET", "/login/oauth/authorize", fakeAnswer{status: 303})
	get := func(path, token string) (int, string, http.Header) {
		req, _ := http.NewRequest("GET", f.URL+path, nil)
		req.Header.Set("Authorization", "token "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	for i, tc := range []struct {
		path, token string
		status      int
		body, ctype string
	}{
		{"/api/v1/a", fakeToken, 200, `{"n":1}`, "application/json"},
		{"/api/v1/a", fakeToken, 200, `{"n":2}`, "application/json"},
		{"/api/v1/a", "other-token", 200, `{"n":2}`, "application/json"},
		{"/api/v1/b", fakeToken, 404, `{"message":"not found"}`, "application/json"},
		{"/api/v1/a", "wrong", 401, `{"message":"token is required"}`, "application/json"},
		{"/api/v1/user", fakeToken, 404, `{"message":"not found"}`, "application/json"},
		{"/api/v1/user", "other-token", 200, `{"login":"bob","id":4123767105}`, "application/json"},
		{"/api/v1/raw", fakeToken, 200, "plain", ""},
		{"/login/oauth/authorize", "", 303, "", ""},
	} {
		status, body, h := get(tc.path, tc.token)
		if status != tc.status || body != tc.body || h.Get("Content-Type") != tc.ctype {
			t.Errorf("%d: GET %s: got %d %s (%q), want %d %s (%q)", i, tc.path, status, body, h.Get("Content-Type"), tc.status, tc.body, tc.ctype)
		}
		if tc.path == "/api/v1/raw" && h.Get("Retry-After") != "7" {
			t.Errorf("GET %s: Retry-After %q, want 7", tc.path, h.Get("Retry-After"))
		}
	}
	f.otherwise(fakeAnswer{status: 500, body: `{"message":"boom"}`})
	if status, body, _ := get("/api/v1/b", fakeToken); status != 500 || body != `{"message":"boom"}` {
		t.Errorf("after otherwise: got %d %s, want 500 boom", status, body)
	}
	if n, c := len(f.requests()), f.count("GET", "/a"); n != 10 || c != 4 {
		t.Errorf("logged %d requests, %d of GET /a; want 10 and 4", n, c)
	}
}

// fakeUserID is the id the fake gives login: stable, and another for every
// login, as Gitea's user ids are.
func fakeUserID(login string) int64 {
	return int64(crc32.ChecksumIEEE([]byte(login))) + 1
}
