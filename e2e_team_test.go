package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// oauthE2EApp registers, as alice, a confidential OAuth2 application in
// Gitea whose redirect URIs are publics + /oauth/callback, removed at the
// end, and returns its client id and secret.
func oauthE2EApp(t *testing.T, g *giteaInstance, publics ...string) (string, string) {
	t.Helper()
	if g.Passwords["alice"] == "" {
		t.Skip("signing in through Gitea's web UI needs the test users' passwords: a throwaway Gitea, not GITEA_TEST_URL")
	}
	var uris []string
	for _, p := range publics {
		uris = append(uris, p+"/oauth/callback")
	}
	var app struct {
		ID           int64  `json:"id"`
		ClientID     string `json:"client_id"`
		ClientSecret string `json:"client_secret"`
	}
	status, _, data, err := g.api("alice", "POST", "/user/applications/oauth2", map[string]any{"name": "giteamcp-e2e-" + rand.Text(),
		"redirect_uris": uris, "confidential_client": true})
	if err != nil || status != http.StatusCreated || json.Unmarshal(data, &app) != nil || app.ClientSecret == "" {
		t.Fatalf("register the OAuth2 application in Gitea: %d %v", status, err)
	}
	t.Cleanup(func() { g.api("alice", "DELETE", fmt.Sprintf("/user/applications/oauth2/%d", app.ID), nil) })
	return app.ClientID, app.ClientSecret
}

// listenLoopback reserves a loopback listener and returns it with its URL.
func listenLoopback(t *testing.T) (net.Listener, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln, "http://" + ln.Addr().String()
}

// serveOAuthOn serves, in this process, an OAuth-mode server with env on ln
// and returns its transport.
func serveOAuthOn(t *testing.T, ln net.Listener, env map[string]string) *httpTransport {
	t.Helper()
	tr := newTestTransport(t, env)
	if err := tr.oauth.setPublic(ln.Addr().String()); err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewUnstartedServer(tr)
	ts.Listener.Close()
	ts.Listener = ln
	ts.Start()
	t.Cleanup(ts.Close)
	return tr
}

// TestE2EOAuthGiteaPublicURL signs alice in through a server whose GITEA_URL
// is an address her browser cannot reach (a proxy to Gitea that only the
// server uses), with GITEA_PUBLIC_URL the address it can: the browser goes
// only to the public address, the server only to its own. Then a server with
// a wrong client secret shows Gitea's answer and the fix on the page and in
// its log, naming invalid_client, and no secret.
func TestE2EOAuthGiteaPublicURL(t *testing.T) {
	g := needGitea(t)
	gitea, _ := url.Parse(g.URL)
	var mu sync.Mutex
	internal := map[string]int{} // paths the internal address served
	proxy := httputil.NewSingleHostReverseProxy(gitea)
	inside := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		internal[r.URL.Path]++
		mu.Unlock()
		proxy.ServeHTTP(w, r)
	}))
	defer inside.Close()

	ln, public := listenLoopback(t)
	badLn, badPublic := listenLoopback(t)
	id, secret := oauthE2EApp(t, g, public, badPublic)
	env := map[string]string{"GITEA_URL": inside.URL, "GITEA_PUBLIC_URL": g.URL, "GITEA_MCP_PROFILE": "gitea-owner", "MCP_OAUTH_KEY": oauthTestKey,
		"MCP_PUBLIC_URL": public, "GITEA_OAUTH_CLIENT_ID": id, "GITEA_OAUTH_CLIENT_SECRET": secret}
	serveOAuthOn(t, ln, env)

	c := newOAuthClient(t, public)
	c.browser.Transport = &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		if addr == inside.Listener.Addr().String() {
			return nil, errors.New("the browser cannot reach the server's GITEA_URL")
		}
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}}
	authResp, _ := giteaAuthorize(t, g, c, "alice")
	tok := c.exchange(t, c.back(t, authResp).Get("code"))
	sid := httpSessionID(t, public, "2025-11-25", "Authorization", "Bearer "+tok.Access)
	if who, err := mcpWhoami(public, tok.Access, sid); err != nil || str(who["login"]) != "alice" {
		t.Errorf("gitea_whoami after signing in: %v %v", who, err)
	}
	// A call acts as the login Gitea gave at sign-in, which the access token
	// carries: the server asks Gitea for the repository, not again who alice is.
	owner, repo := ownerRepo(g)
	mu.Lock()
	asked := internal["/api/v1/user"]
	mu.Unlock()
	resp, body, err := mcpSend(nil, public, http.MethodPost, bearer(tok.Access, sid), fmt.Sprintf(`{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"gitea_call_operation",`+
		`"arguments":{"operation":"repoGet","arguments":{"owner":%q,"repo":%q}}}}`, owner, repo))
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `\"login\":\"alice\"`) || !strings.Contains(string(body), `\"status\":200`) {
		t.Errorf("repoGet as alice: %v %.300s", err, body)
	}
	mu.Lock()
	if internal["/api/v1/user"] != asked || internal["/api/v1/repos/"+owner+"/"+repo] != 1 {
		t.Errorf("repoGet asked Gitea %d more times who the user is and %d times for the repository; want 0 and 1",
			internal["/api/v1/user"]-asked, internal["/api/v1/repos/"+owner+"/"+repo])
	}
	t.Logf("the server's own requests to GITEA_URL: %v", internal)
	if internal["/login/oauth/access_token"] != 1 || internal["/login/oauth/authorize"] != 0 || internal["/user/login"] != 0 {
		t.Errorf("want only the server's token request at GITEA_URL, no browser's: %v", internal)
	}
	mu.Unlock()

	// A wrong client secret, in the server's program, whose log is read.
	badAddr := badLn.Addr().String()
	badLn.Close()
	const wrong = "wrong-secret-0123456789"
	server := startHTTPProgram(t, badAddr, "GITEA_URL="+g.URL, "GITEA_MCP_PROFILE=gitea-owner",
		"MCP_OAUTH_KEY="+oauthTestKey, "MCP_PUBLIC_URL="+badPublic, "GITEA_OAUTH_CLIENT_ID="+id, "GITEA_OAUTH_CLIENT_SECRET="+wrong)
	bad := newOAuthClient(t, badPublic)
	resp, page := giteaAuthorize(t, g, bad, "alice")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("sign-in with a wrong client secret: %s, want the error page (502)", resp.Status)
	}
	t.Logf("the page: %s", page)
	server.stop() // the log is complete once the server has exited
	t.Logf("the log: %s", server.log.String())
	if want := "OAuth mode: clients connect to " + badPublic + "/mcp; users sign in through Gitea at " + g.URL; !strings.Contains(server.log.String(), want) {
		t.Errorf("the log does not say %q", want)
	}
	for where, text := range map[string]string{"page": page, "log": server.log.String()} {
		for _, want := range []string{"invalid_client", "invalid client secret", "GITEA_OAUTH_CLIENT_SECRET"} {
			if !strings.Contains(text, want) {
				t.Errorf("the %s does not say %q", where, want)
			}
		}
		if strings.Contains(text, wrong) || strings.Contains(text, secret) {
			t.Errorf("the %s carries a client secret", where)
		}
	}
}

// TestE2EOAuthTwoInstances runs two servers with one key behind a
// round-robin proxy, as behind a load balancer: alice's sign-in starts on
// one and finishes on the other, and her stateless calls alternate between
// them. A code redeemed on one can be replayed on the other only with the
// client's PKCE verifier.
func TestE2EOAuthTwoInstances(t *testing.T) {
	g := needGitea(t)
	ln, public := listenLoopback(t)
	id, secret := oauthE2EApp(t, g, public)
	env := map[string]string{"GITEA_URL": g.URL, "GITEA_MCP_PROFILE": "gitea-owner", "MCP_OAUTH_KEY": oauthTestKey,
		"MCP_PUBLIC_URL": public, "GITEA_OAUTH_CLIENT_ID": id, "GITEA_OAUTH_CLIENT_SECRET": secret}
	var backends []*url.URL
	for range 2 {
		bln, base := listenLoopback(t)
		serveOAuthOn(t, bln, env)
		u, _ := url.Parse(base)
		backends = append(backends, u)
	}
	var n atomic.Int64
	var mu sync.Mutex
	served := map[string][]int{} // method and path -> the instances that served it, in order
	rp := &httputil.ReverseProxy{Rewrite: func(pr *httputil.ProxyRequest) {
		i := int(n.Add(1) % 2)
		pr.SetURL(backends[i])
		pr.Out.Host = pr.In.Host
		mu.Lock()
		served[pr.In.Method+" "+pr.In.URL.Path] = append(served[pr.In.Method+" "+pr.In.URL.Path], i)
		mu.Unlock()
	}}
	front := &http.Server{Handler: rp}
	go front.Serve(ln)
	defer front.Close()

	c := newOAuthClient(t, public)
	resp, _ := giteaAuthorize(t, g, c, "alice")
	back := c.back(t, resp)
	tok := c.exchange(t, back.Get("code"))
	mu.Lock()
	start, finish := served["GET /authorize"], served["POST /token"]
	mu.Unlock()
	t.Logf("instances that served the sign-in: %v", served)
	if len(start) != 1 || len(finish) != 1 || start[0] == finish[0] {
		t.Fatalf("the sign-in started on instance %v and finished on %v; want one each, different", start, finish)
	}

	// A replay of the code on the other instance needs the verifier; with it,
	// within the code's 60 s, it succeeds (README says so).
	replay := url.Values{"grant_type": {"authorization_code"}, "code": {back.Get("code")}, "client_id": {c.id},
		"redirect_uri": {oauthTestRedirect}, "code_verifier": {strings.Repeat("x", 43)}}
	other := *c // straight to the instance that did not redeem the code
	other.base = backends[1-finish[0]].String()
	if status, got := other.token(t, replay); status != http.StatusBadRequest || got.Error != "invalid_grant" {
		t.Errorf("the code replayed on the other instance without the verifier: %d %q", status, got.Error)
	}
	replay.Set("code_verifier", c.verifier)
	status, got := other.token(t, replay)
	t.Logf("the code replayed with the verifier on the instance that did not redeem it: %d %q %q", status, got.Error, got.Description)

	// Stateless calls alternate between the instances, each as alice.
	for i := range 6 {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"gitea_whoami","arguments":{},"_meta":{%q:%q,%q:{}}}}`,
			i, metaVersion, modernVersion, metaCapabilities)
		resp, out, err := mcpSend(nil, public, http.MethodPost, append(bearer(tok.Access, ""), hdrVersion, modernVersion,
			hdrMethod, "tools/call", hdrName, "gitea_whoami"), body)
		if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(out), `\"login\":\"alice\"`) {
			t.Errorf("call %d: %v %v %.300s", i, resp, err, out)
		}
	}
	mu.Lock()
	calls := served["POST /mcp"]
	mu.Unlock()
	if len(calls) != 6 || calls[0] == calls[1] || calls[1] == calls[2] {
		t.Errorf("calls served by instances %v; want them alternating", calls)
	}
}

// TestE2EHTTPBusyLoad sends 500 requests at once over HTTP to the built
// server, half in a session and half stateless, each for one of a few
// repositories of the real Gitea. Each gets either the answer to itself
// (its id, the repository it asked for) or, beyond the 64 in flight, the
// "server busy" error with its id; the busy ones are sent again until all
// are answered, each once. The server's peak resident memory stays under
// 200 MB.
func TestE2EHTTPBusyLoad(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	server := startHTTPProgram(t, "127.0.0.1:0", "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_MCP_PROFILE=gitea-owner")
	base := server.base
	client := &http.Client{Timeout: 2 * time.Minute, Transport: &http.Transport{MaxIdleConnsPerHost: 500}}
	defer client.CloseIdleConnections()
	sid := httpSessionID(t, base, "2025-11-25")
	targets := []loadTarget{{owner, repo, 200}, {owner, "missing-1", 404}, {"bob", "missing-2", 404}}
	const n = 500
	busyText := fmt.Sprintf("server busy: %d messages in flight", maxInFlight)
	answered := make([]int, n)
	pending := make([]int, n)
	for i := range pending {
		pending[i] = i
	}
	for round := 1; len(pending) > 0; round++ {
		if round > 50 {
			t.Fatalf("%d requests still busy after 50 rounds", len(pending))
		}
		var mu sync.Mutex
		var again []int
		var wg sync.WaitGroup
		start := make(chan struct{})
		for _, i := range pending {
			wg.Go(func() {
				<-start
				tg := targets[i%len(targets)]
				id := fmt.Sprintf("load-%d", i)
				params := map[string]any{"name": "gitea_call_operation",
					"arguments": map[string]any{"operation": "repoGet", "arguments": map[string]any{"owner": tg.owner, "repo": tg.repo}}}
				kv := []string{hdrSession, sid, hdrVersion, "2025-11-25"}
				if i%2 == 1 {
					params["_meta"] = map[string]any{metaVersion: modernVersion, metaCapabilities: map[string]any{}}
					kv = []string{hdrVersion, modernVersion, hdrMethod, "tools/call", hdrName, "gitea_call_operation"}
				}
				resp, body, err := mcpSend(client, base, http.MethodPost, kv, string(encode(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})))
				var r struct {
					ID     string
					Result struct{ Content []struct{ Text string } }
					Error  *rpcError
				}
				var env struct {
					Status  int
					Request struct{ Path string }
				}
				switch {
				case err != nil:
					t.Errorf("%s: %v", id, err)
				case json.Unmarshal(body, &r) != nil || r.ID != id:
					t.Errorf("%s: HTTP %d, the answer of another request or none: %.300s", id, resp.StatusCode, body)
				case resp.StatusCode == http.StatusServiceUnavailable && r.Error != nil && strings.HasPrefix(r.Error.Message, busyText):
					mu.Lock()
					again = append(again, i)
					mu.Unlock()
				case len(r.Result.Content) != 1 || json.Unmarshal([]byte(r.Result.Content[0].Text), &env) != nil ||
					env.Request.Path != "/repos/"+tg.owner+"/"+tg.repo || env.Status != tg.status:
					t.Errorf("%s: HTTP %d, not the answer for %s/%s: %.300s", id, resp.StatusCode, tg.owner, tg.repo, body)
				default:
					mu.Lock()
					answered[i]++
					mu.Unlock()
				}
			})
		}
		close(start)
		wg.Wait()
		t.Logf("round %d: %d sent at once, %d answered, %d busy", round, len(pending), len(pending)-len(again), len(again))
		if round == 1 && len(again) == 0 {
			t.Errorf("500 at once: none was refused as busy, want the excess over %d refused", maxInFlight)
		}
		pending = again
	}
	for i, a := range answered {
		if a != 1 {
			t.Errorf("load-%d answered %d times, want once", i, a)
		}
	}
	peak := procStatus(t, server.cmd.Process.Pid, "VmHWM")
	t.Logf("the server's peak resident memory: %d kB", peak)
	if peak > 200<<10 {
		t.Errorf("peak resident memory %d kB, want under 200 MB", peak)
	}
}
