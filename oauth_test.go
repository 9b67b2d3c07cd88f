package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"maps"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Settings of the OAuth tests: two sealing keys (hex and base64 of 32 bytes)
// and the server's application in the fake Gitea.
const (
	oauthTestKey      = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
	oauthOtherKey     = "ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0+P0A="
	oauthTestAppID    = "app-id"
	oauthTestSecret   = "app-secret-0123456789"
	oauthTestRedirect = "http://127.0.0.1/callback" // the MCP client's; never contacted
)

// oauthTestEnv is the environment of an OAuth-mode server against gitea.
func oauthTestEnv(gitea string) map[string]string {
	return map[string]string{"GITEA_URL": gitea, "GITEA_OAUTH_CLIENT_ID": oauthTestAppID, "GITEA_OAUTH_CLIENT_SECRET": oauthTestSecret,
		"MCP_OAUTH_KEY": oauthTestKey, "GITEA_MCP_PROFILE": "gitea-owner"}
}

// testOAuth returns OAuth mode sealing with key, public at http://127.0.0.1:8080.
func testOAuth(tb testing.TB, key string) *oauthServer {
	tb.Helper()
	env := oauthTestEnv("https://gitea.example.com")
	env["MCP_OAUTH_KEY"] = key
	o, err := oauthServerOf(func(k string) string { return env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	if err := o.setPublic("127.0.0.1:8080"); err != nil {
		tb.Fatal(err)
	}
	return o
}

// newOAuthTest serves an OAuth-mode server against gitea (a URL nothing need
// answer at) behind an httptest server whose URL is the public URL.
func newOAuthTest(tb testing.TB, gitea string) (*httptest.Server, *oauthServer) {
	tb.Helper()
	ts, t := newHTTPTest(tb, oauthTestEnv(gitea))
	if err := t.oauth.setPublic(ts.Listener.Addr().String()); err != nil {
		tb.Fatal(err)
	}
	return ts, t.oauth
}

// accessToken seals an access token of login for this server's resource.
func accessToken(o *oauthServer, login string, ttl time.Duration) string {
	return o.seal("access", &sealed{Aud: o.resource(), Client: oauthHash("client"), Login: login, UID: fakeUserID(login), Token: "gitea-at-" + login}, ttl)
}

// sealAt seals as o would at time at, leaving o (maybe serving) alone.
func sealAt(o *oauthServer, at time.Time, kind string, s *sealed, ttl time.Duration) string {
	return (&oauthServer{aead: o.aead, now: func() time.Time { return at }}).seal(kind, s, ttl)
}

func TestOAuthSeal(t *testing.T) {
	t.Parallel()
	o, other := testOAuth(t, oauthTestKey), testOAuth(t, oauthOtherKey)
	t0 := time.Unix(1_800_000_000, 0)
	o.now, other.now = func() time.Time { return t0 }, func() time.Time { return t0 }
	grant := &sealed{Aud: o.resource(), Client: oauthHash("client"), Login: "alice", Token: "gitea-at-alice1"}
	tok := o.seal("access", grant, time.Hour)
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	if len(raw)%3 == 0 {
		t.Fatal("the test token has no unused bits in its last character; change its length")
	}
	flip := func(i int) string {
		b := bytes.Clone(raw)
		b[i] ^= 1
		return base64.RawURLEncoding.EncodeToString(b)
	}
	client := o.seal("client", &sealed{Name: "c", RedirectURIs: []string{oauthTestRedirect}}, 0)
	tests := []struct {
		name, kind, text string
		at               time.Time
		want             error
	}{
		{"round trip", "access", tok, t0, nil},
		{"a second before expiry", "access", tok, t0.Add(time.Hour - time.Second), nil},
		{"at expiry", "access", tok, t0.Add(time.Hour), errSealExpired},
		{"a year later", "access", tok, t0.AddDate(1, 0, 0), errSealExpired},
		{"client ids do not expire", "client", client, t0.AddDate(10, 0, 0), nil},
		{"nonce altered", "access", flip(0), t0, errSealInvalid},
		{"ciphertext altered", "access", flip(20), t0, errSealInvalid},
		{"tag altered", "access", flip(len(raw) - 1), t0, errSealInvalid},
		{"truncated", "access", tok[:len(tok)-2], t0, errSealInvalid},
		{"non-canonical last character", "access", tok[:len(tok)-1] + string(base64URLAlphabet[strings.IndexByte(base64URLAlphabet, tok[len(tok)-1])^1]), t0, errSealInvalid},
		{"shorter than a nonce and tag", "access", tok[:20], t0, errSealInvalid},
		{"another kind", "refresh", tok, t0, errSealInvalid},
		{"a client id as an access token", "access", client, t0, errSealInvalid},
		{"another key", "access", other.seal("access", &sealed{Aud: o.resource(), Login: "alice", Token: "x"}, time.Hour), t0, errSealInvalid},
		{"padded", "access", tok + "=", t0, errSealInvalid},
		{"not base64url", "access", strings.Replace(tok, tok[:1], "+", 1), t0, errSealInvalid},
		{"empty", "access", "", t0, errSealInvalid},
		{"too long", "access", strings.Repeat("A", oauthMaxSealed+1), t0, errSealInvalid},
	}
	for _, tt := range tests {
		o.now = func() time.Time { return tt.at }
		got, err := o.open(tt.kind, tt.text)
		if !errors.Is(err, tt.want) || err != nil && got != nil {
			t.Errorf("%s: got %v, want %v", tt.name, err, tt.want)
		}
		if err == nil && tt.kind == "access" {
			if diff := cmp.Diff(grant, got); diff != "" {
				t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
			}
		}
	}
	if a, b := o.seal("access", grant, time.Hour), o.seal("access", grant, time.Hour); a == b {
		t.Error("two seals of the same value are equal: the nonce is not fresh")
	}
}

func TestOAuthConfig(t *testing.T) {
	t.Parallel()
	base := oauthTestEnv("https://gitea.example.com")
	with := func(kv ...string) map[string]string {
		env := maps.Clone(base)
		for i := 0; i+1 < len(kv); i += 2 {
			env[kv[i]] = kv[i+1]
		}
		return env
	}
	tests := []struct {
		env     map[string]string
		public  string // the public URL loaded; "" for none
		wantErr string // substring of the error; "" for none
	}{
		{map[string]string{"GITEA_URL": "https://gitea.example.com"}, "", ""},
		{base, "", ""},
		{with("MCP_PUBLIC_URL", "https://mcp.example.com"), "https://mcp.example.com", ""},
		{with("MCP_PUBLIC_URL", "https://mcp.example.com:8443/"), "https://mcp.example.com:8443", ""},
		{with("MCP_PUBLIC_URL", "http://127.0.0.1:8080"), "http://127.0.0.1:8080", ""},
		{with("MCP_PUBLIC_URL", "http://mcp.example.com"), "", "MCP_PUBLIC_URL"},
		{with("MCP_PUBLIC_URL", "https://mcp.example.com/gitea"), "", "MCP_PUBLIC_URL"},
		{with("MCP_PUBLIC_URL", "https://mcp.example.com?x=1"), "", "MCP_PUBLIC_URL"},
		{with("MCP_PUBLIC_URL", "https://u:p@mcp.example.com"), "", "MCP_PUBLIC_URL"},
		{with("MCP_PUBLIC_URL", "mcp.example.com"), "", "MCP_PUBLIC_URL"},
		{with("GITEA_PUBLIC_URL", "https://git.example.com/"), "", ""},
		{with("GITEA_PUBLIC_URL", "http://localhost:3000/gitea"), "", ""},
		{with("GITEA_PUBLIC_URL", "git.example.com"), "", "GITEA_PUBLIC_URL"},
		{with("GITEA_PUBLIC_URL", "ftp://git.example.com"), "", "GITEA_PUBLIC_URL"},
		{with("GITEA_PUBLIC_URL", "https://u:p@git.example.com"), "", "GITEA_PUBLIC_URL"},
		{with("GITEA_PUBLIC_URL", "https://git.example.com/?x=1"), "", "GITEA_PUBLIC_URL"},
		{with("GITEA_OAUTH_CLIENT_SECRET", ""), "", "needs both"},
		{with("GITEA_OAUTH_CLIENT_ID", ""), "", "needs both"},
		{with("GITEA_URL", ""), "", "needs GITEA_URL"},
		{with("MCP_BEARER_TOKEN", "s3cret-Token_0123456789"), "", "exclusive"},
		{with("GITEA_SUDO", "bob"), "", "exclusive"},
		{with("MCP_OAUTH_KEY", ""), "", "MCP_OAUTH_KEY: OAuth mode needs 32 random bytes"},
		{with("MCP_OAUTH_KEY", oauthTestKey[:62]), "", "MCP_OAUTH_KEY"},
		{with("MCP_OAUTH_KEY", oauthTestKey+"00"), "", "MCP_OAUTH_KEY"},
		{with("MCP_OAUTH_KEY", "c2hvcnQ="), "", "MCP_OAUTH_KEY"},
		{with("MCP_OAUTH_KEY", "not a key at all, though long enough to be one"), "", "MCP_OAUTH_KEY"},
		{with("MCP_OAUTH_KEY", oauthOtherKey), "", ""},
		{with("MCP_OAUTH_KEY", strings.TrimRight(oauthOtherKey, "=")), "", ""},
		{with("MCP_OAUTH_KEY", "ISIjJCUmJygpKissLS4vMDEyMzQ1Njc4OTo7PD0-P0A"), "", ""},
	}
	for _, tt := range tests {
		c, err := loadConfig(func(k string) string { return tt.env[k] })
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.wantErr == "" && err != nil || !strings.Contains(got, tt.wantErr) {
			t.Errorf("%v: got error %q, want %q", tt.env, got, tt.wantErr)
		}
		for _, secret := range []string{tt.env["MCP_OAUTH_KEY"], oauthTestSecret, tt.env["MCP_BEARER_TOKEN"]} {
			if secret != "" && strings.Contains(got, secret) {
				t.Errorf("%v: the error echoes a secret", tt.env)
			}
		}
		if err == nil && (c.oauth == nil) != (tt.env["GITEA_OAUTH_CLIENT_ID"] == "") {
			t.Errorf("%v: OAuth mode %v", tt.env, c.oauth != nil)
		}
		if err == nil && c.oauth != nil && c.oauth.public != tt.public {
			t.Errorf("%v: public URL %q, want %q", tt.env, c.oauth.public, tt.public)
		}
		browsers := tt.env["GITEA_PUBLIC_URL"] // where browsers are sent; GITEA_URL by default
		if browsers == "" {
			browsers = tt.env["GITEA_URL"]
		}
		if err == nil && c.oauth != nil && c.oauth.browsers != strings.TrimSuffix(browsers, "/") {
			t.Errorf("%v: browsers sent to %q", tt.env, c.oauth.browsers)
		}
	}
}

// TestOAuthPublicURL checks the default public URL, http://ADDR of -http,
// which must be a loopback address.
func TestOAuthPublicURL(t *testing.T) {
	t.Parallel()
	tests := []struct {
		env, listen, want string // want "" for an error
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "[::1]:8080", "http://[::1]:8080"},
		{"", "0.0.0.0:8080", ""},
		{"", "", ""},
		{"https://mcp.example.com", "0.0.0.0:8080", "https://mcp.example.com"},
	}
	for _, tt := range tests {
		env := oauthTestEnv("https://gitea.example.com")
		env["MCP_PUBLIC_URL"] = tt.env
		o, err := oauthServerOf(func(k string) string { return env[k] })
		if err != nil {
			t.Fatal(err)
		}
		err = o.setPublic(tt.listen)
		if tt.want == "" && (err == nil || !strings.Contains(err.Error(), "MCP_PUBLIC_URL")) || tt.want != "" && (err != nil || o.public != tt.want) {
			t.Errorf("MCP_PUBLIC_URL %q, listen %q: got %q, %v; want %q", tt.env, tt.listen, o.public, err, tt.want)
		}
	}
}

// TestOAuthProfile checks profile selection in OAuth mode: no token is read,
// and runtime switching is refused.
func TestOAuthProfile(t *testing.T) {
	t.Parallel()
	switching := &profileConfig{AllowRuntimeSwitching: true}
	for _, tt := range []struct {
		cfg           *profileConfig
		name, want    string
		wantErr       string
		wantNoProfile bool
	}{
		{nil, "", "", "", true},
		{nil, "gitea-owner", "gitea-owner", "", false},
		{nil, "gitea-reviewer", "gitea-reviewer", "", false},
		{nil, "no-such-profile", "", "unknown profile", false},
		{switching, "gitea-owner", "", "allow_runtime_switching", false},
	} {
		p, err := oauthProfile(tt.cfg, tt.name)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if tt.wantErr == "" && err != nil || !strings.Contains(got, tt.wantErr) || err == nil && profileName(p) != tt.want {
			t.Errorf("oauthProfile(%q) = %q, %q; want %q, error %q", tt.name, profileName(p), got, tt.want, tt.wantErr)
		}
	}
}

// TestOAuthStartupErrors runs the binary with OAuth settings it must refuse:
// one line on stderr and a non-zero exit.
func TestOAuthStartupErrors(t *testing.T) {
	t.Parallel()
	env := []string{"GITEA_URL=http://127.0.0.1:1", "GITEA_OAUTH_CLIENT_ID=" + oauthTestAppID, "GITEA_OAUTH_CLIENT_SECRET=" + oauthTestSecret}
	key := "MCP_OAUTH_KEY=" + oauthTestKey
	for _, tt := range []struct {
		args, env []string
		want      string
	}{
		{[]string{"-http", "127.0.0.1:0"}, env, "giteamcp: MCP_OAUTH_KEY: OAuth mode needs 32 random bytes, base64 or hex (openssl rand -base64 32)"},
		{[]string{"-http", "127.0.0.1:0"}, append(env, "MCP_OAUTH_KEY=c2hvcnQ="), "giteamcp: MCP_OAUTH_KEY: OAuth mode needs 32 random bytes, base64 or hex (openssl rand -base64 32)"},
		{[]string{"-http", "127.0.0.1:0"}, append(env, key, "MCP_BEARER_TOKEN=s3cret-Token_0123456789"),
			"giteamcp: MCP_BEARER_TOKEN and GITEA_OAUTH_CLIENT_ID are exclusive: choose static bearer mode or OAuth mode"},
		{nil, append(env, key), "giteamcp: GITEA_OAUTH_CLIENT_ID: OAuth mode signs users in over HTTP; start with -http addr"},
		{[]string{"-http", "0.0.0.0:0"}, append(env, key),
			"giteamcp: MCP_PUBLIC_URL: OAuth mode needs it unless -http listens on loopback; set the https URL clients reach"},
	} {
		cmd := exec.Command(serverBinary(t), tt.args...)
		cmd.Env = tt.env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr, cmd.Stdin = &stdout, &stderr, strings.NewReader("")
		err := cmd.Run()
		if err == nil || stdout.Len() > 0 || stderr.String() != tt.want+"\n" {
			t.Errorf("%v: exit %v, stdout %q, stderr %q; want a failure with %q", tt.args, err, stdout.String(), stderr.String(), tt.want)
		}
		if strings.Contains(stderr.String(), oauthTestSecret) || strings.Contains(stderr.String(), oauthTestKey) {
			t.Errorf("%v: stderr echoes a secret", tt.args)
		}
	}
}

func TestOAuthMetadata(t *testing.T) {
	t.Parallel()
	ts, _ := newOAuthTest(t, "http://127.0.0.1:1")
	u := ts.URL
	resource := map[string]any{"resource": u + "/mcp", "authorization_servers": []any{u}, "bearer_methods_supported": []any{"header"}}
	tests := []struct {
		path string
		want map[string]any
	}{
		{"/.well-known/oauth-protected-resource", resource},
		{"/.well-known/oauth-protected-resource/mcp", resource},
		{"/.well-known/oauth-authorization-server", map[string]any{"issuer": u,
			"authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token", "registration_endpoint": u + "/register",
			"response_types_supported": []any{"code"}, "grant_types_supported": []any{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported": []any{"S256"}, "token_endpoint_auth_methods_supported": []any{"none"},
			"authorization_response_iss_parameter_supported": true}},
	}
	for _, tt := range tests {
		resp, err := http.Get(u + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		json.NewDecoder(resp.Body).Decode(&got)
		resp.Body.Close()
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.path, diff)
		}
		if h := resp.Header; resp.StatusCode != 200 || h.Get("Access-Control-Allow-Origin") != "*" || h.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: %s, headers %v", tt.path, resp.Status, h)
		}
	}
	for _, tt := range []struct {
		method, path string
		want         int
	}{
		{"OPTIONS", "/token", 204}, {"OPTIONS", "/register", 204}, {"GET", "/token", 405}, {"POST", "/.well-known/oauth-authorization-server", 405},
		{"DELETE", "/authorize", 405}, {"OPTIONS", "/authorize", 405}, {"GET", "/other", 404}, {"GET", "/.well-known/openid-configuration", 404},
	} {
		req, _ := http.NewRequest(tt.method, u+tt.path, nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.want {
			t.Errorf("%s %s: got %s, want %d", tt.method, tt.path, resp.Status, tt.want)
		}
	}
}

// TestOAuthUnauthorized checks that /mcp admits exactly the access tokens
// sealed with the server's key for its resource, not expired, and answers
// anything else with 401 and a challenge naming the resource metadata.
func TestOAuthUnauthorized(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	other := testOAuth(t, oauthOtherKey)
	other.public = o.public
	meta := `Bearer resource_metadata="` + ts.URL + `/.well-known/oauth-protected-resource"`
	invalid := meta + `, error="invalid_token", error_description="access token ` + errSealInvalid.Error() + `"`
	good := accessToken(o, "alice", time.Hour)
	expired := sealAt(o, time.Now().Add(-2*time.Hour), "access", &sealed{Aud: o.resource(), Login: "alice", Token: "gitea-at-alice"}, time.Hour)
	tests := []struct {
		name string
		auth []string // Authorization header values
		want string   // WWW-Authenticate; "" for admitted
	}{
		{"valid", []string{"Bearer " + good}, ""},
		{"lower-case scheme", []string{"bearer " + good}, ""},
		{"missing", nil, meta},
		{"empty", []string{"Bearer "}, meta},
		{"basic", []string{"Basic " + good}, meta},
		{"two headers", []string{"Bearer " + good, "Bearer " + good}, meta},
		{"garbage", []string{"Bearer not-a-token"}, invalid},
		{"altered", []string{"Bearer " + good[:40] + strings.Map(func(r rune) rune { return r ^ 1 }, good[40:41]) + good[41:]}, invalid},
		{"expired", []string{"Bearer " + expired}, meta + `, error="invalid_token", error_description="access token expired"`},
		{"foreign key", []string{"Bearer " + accessToken(other, "alice", time.Hour)}, invalid},
		{"refresh token", []string{"Bearer " + o.seal("refresh", &sealed{Aud: o.resource(), Login: "alice", Refresh: "r"}, time.Hour)}, invalid},
		{"other resource", []string{"Bearer " + o.seal("access", &sealed{Aud: "https://other.example/mcp", Login: "alice", Token: "t"}, time.Hour)},
			meta + `, error="invalid_token", error_description="access token issued for another resource"`},
		{"the Gitea token", []string{"Bearer gitea-at-alice"}, invalid},
	}
	for _, tt := range tests {
		var kv []string
		for _, a := range tt.auth {
			kv = append(kv, "Authorization", a)
		}
		resp, body := httpDo(t, ts.URL, http.MethodPost, kv, initBody("2025-11-25"))
		got := resp.Header.Get("WWW-Authenticate")
		if got != tt.want || (tt.want == "") != (resp.StatusCode == 200) || tt.want != "" && resp.StatusCode != 401 {
			t.Errorf("%s: got %s with challenge %q, want %q", tt.name, resp.Status, got, tt.want)
		}
		for _, a := range tt.auth {
			if tok := strings.TrimPrefix(strings.TrimPrefix(a, "Bearer "), "Basic "); len(tok) > 20 && strings.Contains(string(body), tok) {
				t.Errorf("%s: the answer echoes the token", tt.name)
			}
		}
	}
}

// TestOAuthSessionOwner checks that an HTTP session serves only the user and
// client whose token created it.
func TestOAuthSessionOwner(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	alice, bob := accessToken(o, "alice", time.Hour), accessToken(o, "bob", time.Hour)
	aliceElsewhere := o.seal("access", &sealed{Aud: o.resource(), Client: oauthHash("another client"), Login: "alice", Token: "gitea-at-alice"}, time.Hour)
	// Gitea frees a login at a rename: another account may take it.
	nameTaken := o.seal("access", &sealed{Aud: o.resource(), Client: oauthHash("client"), Login: "alice", UID: fakeUserID("alice") + 1000, Token: "gitea-at-x"}, time.Hour)
	renamed := o.seal("access", &sealed{Aud: o.resource(), Client: oauthHash("client"), Login: "alice2", UID: fakeUserID("alice"), Token: "gitea-at-alice"}, time.Hour)
	sid := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+alice)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	for _, tt := range []struct {
		name, token string
		want        int
	}{
		{"creator", alice, 200},
		{"another user", bob, 404},
		{"the same user through another client", aliceElsewhere, 404},
		{"another account that took the login", nameTaken, 404},
		{"the creator, renamed", renamed, 200},
		{"creator again", alice, 200},
	} {
		resp, _, err := mcpSend(nil, ts.URL, http.MethodPost, bearer(tt.token, sid), list)
		if err != nil || resp.StatusCode != tt.want {
			t.Errorf("%s: got %v %v, want %d", tt.name, resp.Status, err, tt.want)
		}
	}
	req, _ := http.NewRequest(http.MethodDelete, ts.URL+"/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+bob)
	req.Header.Set(hdrSession, sid)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 {
		t.Errorf("DELETE of alice's session by bob: %v %v, want 404", resp.Status, err)
	}
}

func TestOAuthRegister(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	uris := func(us ...string) string {
		b, _ := json.Marshal(map[string]any{"client_name": "c", "redirect_uris": us})
		return string(b)
	}
	tests := []struct {
		body string
		want string // OAuth error code; "" for registered
	}{
		{uris("https://client.example/cb"), ""},
		{uris("https://client.example/cb?x=1", "http://localhost:3000/cb", "http://127.0.0.1/cb", "http://[::1]:8/cb"), ""},
		{uris("cursor://anysphere.cursor-mcp/oauth/callback"), ""},
		{uris("com.example.app:/oauth2redirect"), ""},
		{`{"redirect_uris":["https://client.example/cb"],"token_endpoint_auth_method":"client_secret_basic","scope":"x"}`, ""},
		{uris("http://client.example/cb"), "invalid_redirect_uri"},
		{uris("http://127.0.0.1.example.com/cb"), "invalid_redirect_uri"},
		{uris("https://client.example/cb#frag"), "invalid_redirect_uri"},
		{uris("https://user:pw@client.example/cb"), "invalid_redirect_uri"},
		{uris("https:///cb"), "invalid_redirect_uri"},
		{uris("/relative/cb"), "invalid_redirect_uri"},
		{uris("javascript:alert(1)"), "invalid_redirect_uri"},
		{uris("JavaScript:alert(1)"), "invalid_redirect_uri"},
		{uris("data:text/html,x"), "invalid_redirect_uri"},
		{uris("file:///etc/passwd"), "invalid_redirect_uri"},
		{uris("https://client.example/\x00"), "invalid_redirect_uri"},
		{uris("https://client.example/" + strings.Repeat("a", oauthMaxURI)), "invalid_redirect_uri"},
		{uris(), "invalid_redirect_uri"},
		{`{"client_name":"c"}`, "invalid_redirect_uri"},
		{uris("https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4", "https://a.example/5"), "invalid_redirect_uri"},
		{`{"client_name":"` + strings.Repeat("n", oauthMaxName+1) + `","redirect_uris":["https://client.example/cb"]}`, "invalid_client_metadata"},
		{`{"client_name":"bad\u0007name","redirect_uris":["https://client.example/cb"]}`, "invalid_client_metadata"},
		// Text the consent page shows must read as it is: no bidi or other format characters.
		{`{"client_name":"Claude\u202eedoC","redirect_uris":["https://client.example/cb"]}`, "invalid_client_metadata"},
		{`{"client_name":"Zero\u200bwidth","redirect_uris":["https://client.example/cb"]}`, "invalid_client_metadata"},
		{uris("https://evil.example/\u202emoc.elpmaxe.tneilc//:sptth"), "invalid_redirect_uri"},
		{uris("https://client.example/c b"), "invalid_redirect_uri"},
		{uris("https://client.example/caf\u00e9"), "invalid_redirect_uri"},
		{`{"client_name":"Café – naïve","redirect_uris":["https://client.example/cb"]}`, ""},
		{`{"redirect_uris":"https://client.example/cb"}`, "invalid_client_metadata"},
		{`not json`, "invalid_client_metadata"},
		{`{"redirect_uris":["https://client.example/cb"],"pad":"` + strings.Repeat("x", oauthMaxBody) + `"}`, "invalid_client_metadata"},
	}
	for _, tt := range tests {
		status, body := oauthPost(t, ts.URL+"/register", "application/json", tt.body)
		var got struct {
			ClientID     string   `json:"client_id"`
			RedirectURIs []string `json:"redirect_uris"`
			AuthMethod   string   `json:"token_endpoint_auth_method"`
			Error        string   `json:"error"`
		}
		json.Unmarshal(body, &got)
		name := tt.body[:min(len(tt.body), 120)]
		if got.Error != tt.want || (tt.want == "") != (status == 201) {
			t.Errorf("%s: got %d %q, want %q", name, status, got.Error, tt.want)
			continue
		}
		if tt.want != "" {
			continue
		}
		c, err := o.open("client", got.ClientID)
		if err != nil || got.AuthMethod != "none" || len(got.ClientID) > 4096 {
			t.Errorf("%s: client id of %d characters: %v; auth method %q", name, len(got.ClientID), err, got.AuthMethod)
		} else if diff := cmp.Diff(got.RedirectURIs, c.RedirectURIs); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", name, diff)
		}
	}
}

func TestOAuthPKCE(t *testing.T) {
	t.Parallel()
	// RFC 7636, appendix B.
	const verifier, challenge = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk", "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
	long := strings.Repeat("a.~_-", 26)
	tests := []struct {
		name, challenge, verifier string
		want                      bool
	}{
		{"RFC 7636 example", challenge, verifier, true},
		{"128 characters", pkceChallenge(long[:128]), long[:128], true},
		{"wrong verifier", challenge, verifier[:42] + "Y", false},
		{"plain: the verifier as challenge", verifier, verifier, false},
		{"42 characters", pkceChallenge(verifier[:42]), verifier[:42], false},
		{"129 characters", pkceChallenge(long[:129]), long[:129], false},
		{"reserved character", pkceChallenge(verifier[:42] + "/"), verifier[:42] + "/", false},
		{"empty", challenge, "", false},
	}
	for _, tt := range tests {
		if got := pkceValid(tt.challenge, tt.verifier); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
	if got := pkceChallenge(verifier); got != challenge {
		t.Errorf("pkceChallenge: got %q, want %q", got, challenge)
	}
}

// TestOAuthAuthorize checks the authorization request: an unknown client or
// redirect URI gets an error page, other errors go back to the client, and
// a good request gets the consent page.
func TestOAuthAuthorize(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	c := newOAuthClient(t, ts.URL)
	tests := []struct {
		name string
		kv   []string // overrides of the good request; "" removes
		want string   // "page" (400), "consent" (200), or the error code sent back
	}{
		{"good", nil, "consent"},
		{"resource with a trailing slash", []string{"resource", ts.URL + "/mcp/"}, "consent"},
		{"no resource", []string{"resource", ""}, "consent"},
		{"no state", []string{"state", ""}, "consent"},
		{"unknown client", []string{"client_id", "nope"}, "page"},
		{"an access token as client id", []string{"client_id", accessToken(o, "alice", time.Hour)}, "page"},
		{"unregistered redirect URI", []string{"redirect_uri", "http://127.0.0.1/other"}, "page"},
		{"no redirect URI", []string{"redirect_uri", ""}, "page"},
		{"implicit grant", []string{"response_type", "token"}, "unsupported_response_type"},
		{"plain PKCE", []string{"code_challenge_method", "plain", "code_challenge", c.verifier}, "invalid_request"},
		{"no PKCE method", []string{"code_challenge_method", ""}, "invalid_request"},
		{"no PKCE", []string{"code_challenge_method", "", "code_challenge", ""}, "invalid_request"},
		{"short challenge", []string{"code_challenge", "abc"}, "invalid_request"},
		{"challenge not base64url", []string{"code_challenge", strings.Repeat("+", 43)}, "invalid_request"},
		{"another resource", []string{"resource", "https://other.example/mcp"}, "invalid_target"},
	}
	for _, tt := range tests {
		resp, page := c.get(t, c.authorizeURL(tt.kv...))
		got := "page"
		switch {
		case resp.StatusCode == 200 && strings.Contains(page, `name="request"`):
			got = "consent"
		case resp.StatusCode != 400 || resp.Header.Get("Location") != "":
			// Any site registers clients: an error must not send the
			// browser on by itself (RFC 9700, section 4.11.2).
			got = resp.Status
		case strings.Contains(page, "href="):
			back, _ := url.Parse(html.UnescapeString(regexp.MustCompile(`href="([^"]*)"`).FindStringSubmatch(page)[1]))
			if q := back.Query(); back.Scheme+"://"+back.Host+back.Path != oauthTestRedirect || q.Get("state") != "st-1" || q.Get("iss") != ts.URL {
				t.Errorf("%s: the page links back to %s", tt.name, back)
			}
			got = back.Query().Get("error")
		}
		if got != tt.want {
			t.Errorf("%s: got %s, want %s", tt.name, got, tt.want)
		}
		if h := resp.Header; resp.StatusCode != 303 && (h.Get("X-Frame-Options") != "DENY" || !strings.Contains(h.Get("Content-Security-Policy"), "frame-ancestors 'none'")) {
			t.Errorf("%s: the page may be framed: %v", tt.name, h)
		}
	}
	resp, page := c.get(t, c.authorizeURL())
	if !strings.Contains(page, "Test &lt;client&gt;") || !strings.Contains(page, oauthTestRedirect) {
		t.Errorf("the consent page does not show the client's name, escaped, and its redirect URI:\n%s", page)
	}
	cookies := resp.Cookies()
	if len(cookies) != 1 || cookies[0].Name != "giteamcp-signin" || !cookies[0].HttpOnly || cookies[0].SameSite != http.SameSiteLaxMode {
		t.Errorf("sign-in cookie %v", cookies)
	}
}

// TestOAuthToken checks the token endpoint's authorization_code grant with
// codes sealed here: single use, PKCE, and binding to the client, redirect
// URI and resource.
func TestOAuthToken(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	c, other := newOAuthClient(t, ts.URL), newOAuthClient(t, ts.URL)
	code := func(mod func(*sealed)) string {
		s := &sealed{ID: rand.Text(), RedirectURI: oauthTestRedirect, Challenge: pkceChallenge(c.verifier), Aud: o.resource(),
			Client: oauthHash(c.id), Login: "alice", Token: "gitea-at-alice", Refresh: "gitea-rt-alice", TokenExp: o.now().Add(time.Hour).Unix()}
		if mod != nil {
			mod(s)
		}
		return o.seal("code", s, oauthCodeTTL)
	}
	used := code(nil)
	expired := sealAt(o, time.Now().Add(-2*oauthCodeTTL), "code", &sealed{ID: rand.Text(), RedirectURI: oauthTestRedirect,
		Challenge: pkceChallenge(c.verifier), Aud: o.resource(), Client: oauthHash(c.id), Login: "alice", Token: "t"}, oauthCodeTTL)
	tests := []struct {
		name    string
		kv      []string // overrides of a good request; "" removes
		want    string   // OAuth error code; "" for tokens
		expires int      // expires_in of the tokens
	}{
		{"good", []string{"code", used}, "", 3600},
		{"the same code again", []string{"code", used}, "invalid_grant", 0},
		{"no resource", []string{"resource", ""}, "", 3600},
		{"Gitea token ending sooner", []string{"code", code(func(s *sealed) { s.TokenExp = o.now().Add(10 * time.Minute).Unix() })}, "", 600},
		{"Gitea token already ended", []string{"code", code(func(s *sealed) { s.TokenExp = o.now().Add(-time.Minute).Unix() })}, "invalid_grant", 0},
		{"wrong verifier", []string{"code_verifier", other.verifier}, "invalid_grant", 0},
		{"no verifier", []string{"code_verifier", ""}, "invalid_grant", 0},
		{"the challenge as verifier", []string{"code_verifier", pkceChallenge(c.verifier)}, "invalid_grant", 0},
		{"another client", []string{"client_id", other.id}, "invalid_grant", 0},
		{"unknown client", []string{"client_id", "nope"}, "invalid_client", 0},
		{"no client", []string{"client_id", ""}, "invalid_client", 0},
		{"other redirect URI", []string{"redirect_uri", "http://127.0.0.1/other"}, "invalid_grant", 0},
		{"no redirect URI", []string{"redirect_uri", ""}, "invalid_grant", 0},
		{"other resource", []string{"resource", "https://other.example/mcp"}, "invalid_target", 0},
		{"code for another resource", []string{"code", code(func(s *sealed) { s.Aud = "https://other.example/mcp" })}, "invalid_grant", 0},
		{"expired code", []string{"code", expired}, "invalid_grant", 0},
		{"access token as code", []string{"code", accessToken(o, "alice", time.Hour)}, "invalid_grant", 0},
		{"garbage code", []string{"code", "garbage"}, "invalid_grant", 0},
		{"password grant", []string{"grant_type", "password"}, "unsupported_grant_type", 0},
		{"refresh with a code", []string{"grant_type", "refresh_token", "refresh_token", used}, "invalid_grant", 0},
	}
	for _, tt := range tests {
		f := url.Values{"grant_type": {"authorization_code"}, "redirect_uri": {oauthTestRedirect}, "client_id": {c.id},
			"code_verifier": {c.verifier}, "resource": {ts.URL + "/mcp"}}
		f.Set("code", code(nil))
		for i := 0; i+1 < len(tt.kv); i += 2 {
			f.Set(tt.kv[i], tt.kv[i+1])
			if tt.kv[i+1] == "" {
				f.Del(tt.kv[i])
			}
		}
		status, tok := c.token(t, f)
		if tok.Error != tt.want || tt.want == "" && (status != 200 || tok.Type != "Bearer" || tok.Expires < tt.expires-1 || tok.Expires > tt.expires || tok.Access == "" || tok.Refresh == "") {
			t.Errorf("%s: got %d %q (%s), expires_in %d; want %q, expires_in %d (a second less if one passed)", tt.name, status, tok.Error, tok.Description, tok.Expires, tt.want, tt.expires)
		}
		if tt.want == "" {
			if g, err := o.open("access", tok.Access); err != nil || g.Login != "alice" || g.Token != "gitea-at-alice" || g.Client != oauthHash(c.id) || g.Aud != o.resource() {
				t.Errorf("%s: access token %v", tt.name, err)
			}
			if strings.Contains(tok.raw, "gitea-at-alice") || strings.Contains(tok.raw, "gitea-rt-alice") {
				t.Errorf("%s: the answer carries a Gitea token in clear", tt.name)
			}
		}
	}
}

// TestOAuthSignIn runs the whole sign-in against a fake Gitea: consent,
// Gitea, callback, code, tokens, MCP calls as the user, refresh; and checks
// that a sign-in cannot be finished by another browser or site.
func TestOAuthSignIn(t *testing.T) {
	t.Parallel()
	gitea := newScriptedGitea(t)
	g := gitea.oauthProvider("alice")
	ts, o := newOAuthTest(t, gitea.URL)
	c := newOAuthClient(t, ts.URL)

	resp, _ := c.consent(t, "allow")
	tok := c.exchange(t, c.back(t, resp).Get("code"))
	sid := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+tok.Access)
	who, err := mcpWhoami(ts.URL, tok.Access, sid)
	if err != nil || str(who["login"]) != "alice" || str(who["mode"]) != "oauth" || str(who["profile"]) != "gitea-owner" {
		t.Fatalf("gitea_whoami: %v %v", who, err)
	}

	status, fresh := c.token(t, url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tok.Refresh}, "client_id": {c.id}})
	if status != 200 || fresh.Access == "" || fresh.Refresh == "" || fresh.Access == tok.Access {
		t.Fatalf("refresh: %d %s %s", status, fresh.Error, fresh.Description)
	}
	if who, err := mcpWhoami(ts.URL, fresh.Access, sid); err != nil || str(who["login"]) != "alice" {
		t.Errorf("gitea_whoami after the refresh, in the same session: %v %v", who, err)
	}
	if g, _ := o.open("access", fresh.Access); g == nil || g.Token == "gitea-at-alice" || !strings.HasPrefix(g.Token, "gitea-at-") {
		t.Error("the refreshed access token does not carry a new Gitea token")
	}
	for _, tt := range []struct {
		name string
		form url.Values
		want string
	}{
		{"by another client", url.Values{"refresh_token": {tok.Refresh}, "client_id": {newOAuthClient(t, ts.URL).id}}, "invalid_grant"},
		{"an access token", url.Values{"refresh_token": {tok.Access}, "client_id": {c.id}}, "invalid_grant"},
		{"Gitea refuses", url.Values{"refresh_token": {o.seal("refresh", &sealed{Aud: o.resource(), Client: oauthHash(c.id), Login: "alice", Refresh: "revoked"}, time.Hour)},
			"client_id": {c.id}}, "invalid_grant"},
	} {
		tt.form.Set("grant_type", "refresh_token")
		if status, got := c.token(t, tt.form); got.Error != tt.want {
			t.Errorf("refresh %s: got %d %q, want %q", tt.name, status, got.Error, tt.want)
		}
	}

	// bob signs in through the same client in another browser.
	g.setUser("bob")
	bob := *c
	bob.browser = newBrowser()
	resp, _ = bob.consent(t, "allow")
	bobTok := bob.exchange(t, bob.back(t, resp).Get("code"))
	bobSid := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+bobTok.Access)
	if who, err := mcpWhoami(ts.URL, bobTok.Access, bobSid); err != nil || str(who["login"]) != "bob" {
		t.Errorf("gitea_whoami as bob: %v %v", who, err)
	}
	// Another call acts as the login bob's token carries (its answer, Gitea's
	// 404, names him) without asking Gitea who he is.
	asked := gitea.count("GET", "/user")
	_, body, err := mcpSend(nil, ts.URL, http.MethodPost, bearer(bobTok.Access, bobSid), `{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"gitea_call_operation",`+
		`"arguments":{"operation":"repoGet","arguments":{"owner":"bob","repo":"none"}}}}`)
	if err != nil || !strings.Contains(string(body), `\"identity\":{\"login\":\"bob\"`) {
		t.Errorf("a call as bob: %v %.400s", err, body)
	}
	if n := gitea.count("GET", "/user") - asked; n != 0 {
		t.Errorf("a call as bob asked Gitea %d times who he is; want 0", n)
	}

	// Cancel at the consent page.
	resp, _ = c.consent(t, "deny")
	if q := c.back(t, resp); q.Get("error") != "access_denied" || q.Get("code") != "" {
		t.Errorf("cancel: %v", q.Get("error"))
	}

	// The consent and Gitea's answer must come from the browser that saw the
	// consent page, and the consent from a same-origin page.
	_, page := c.get(t, c.authorizeURL())
	request := formFields(page).Get("request")
	stranger := &oauthClient{base: c.base, id: c.id, browser: newBrowser()}
	for _, tt := range []struct {
		name   string
		client *oauthClient
		method string
		url    string
		header []string
		want   int
	}{
		{"consent from another browser", stranger, "POST", "/authorize", nil, 400},
		{"consent from another site", c, "POST", "/authorize", []string{"Sec-Fetch-Site", "cross-site"}, 403},
		{"consent from the same origin", c, "POST", "/authorize", []string{"Sec-Fetch-Site", "same-origin"}, 303},
		{"callback in another browser", stranger, "GET", "/oauth/callback?" + url.Values{"state": {request}, "code": {"x"}}.Encode(), nil, 400},
		{"callback with a forged state", c, "GET", "/oauth/callback?state=forged&code=x", nil, 400},
		{"callback with an expired state", c, "GET", "/oauth/callback?state=" +
			sealAt(o, time.Now().Add(-oauthStateTTL), "state", &sealed{RedirectURI: oauthTestRedirect}, oauthStateTTL) + "&code=x", nil, 400},
	} {
		var body io.Reader
		if tt.method == "POST" {
			body = strings.NewReader(url.Values{"request": {request}, "action": {"allow"}}.Encode())
		}
		req, _ := http.NewRequest(tt.method, c.base+tt.url, body)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		for i := 0; i+1 < len(tt.header); i += 2 {
			req.Header.Set(tt.header[i], tt.header[i+1])
		}
		tt.client.browser.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
		resp, _ := tt.client.do(t, req)
		if resp.StatusCode != tt.want {
			t.Errorf("%s: got %s, want %d", tt.name, resp.Status, tt.want)
		}
	}

	// Gitea's refusal goes back to the client with what Gitea said.
	c.browser.CheckRedirect = stopAtClient
	resp, _ = c.get(t, c.base+"/oauth/callback?error=access_denied&error_description=the+user+said+no&state="+url.QueryEscape(request))
	if q := c.back(t, resp); q.Get("error") != "access_denied" || q.Get("error_description") != "Gitea did not grant access: access_denied: the user said no" {
		t.Errorf("callback with Gitea's refusal: %v", q)
	}
	// Gitea's failure to redeem its code is shown to the user, with what Gitea
	// said (its echo of the code redacted) and the likely fix, and a link
	// that brings the error back to the client.
	resp, page = c.get(t, c.base+"/oauth/callback?code=secret-gitea-code&state="+url.QueryEscape(request))
	said := "Gitea answered 400 Bad Request: unauthorized_client: client is not authorized: [redacted][31m"
	back, _ := url.Parse(html.UnescapeString(regexp.MustCompile(`href="([^"]*)"`).FindStringSubmatch(page + `href=""`)[1]))
	if resp.StatusCode != http.StatusBadGateway || !strings.Contains(page, html.EscapeString(said)) || !strings.Contains(page, "start the sign-in again") ||
		strings.Contains(page, "secret-gitea-code") || back.Query().Get("error") != "server_error" || back.Query().Get("error_description") != "Gitea did not complete the sign-in: "+said {
		t.Errorf("callback when Gitea refuses its code: %s\n%s", resp.Status, page)
	}
}

// TestOAuthFixes checks that each example of Gitea's token endpoint errors
// finds its fix in oauthFixes, and no earlier one; an error Gitea did not
// answer gets the generic advice.
func TestOAuthFixes(t *testing.T) {
	t.Parallel()
	o := testOAuth(t, oauthTestKey)
	for i, f := range oauthFixes {
		want := f.fix
		if strings.Contains(want, "%s") {
			want = fmt.Sprintf(want, o.public+"/oauth/callback")
		}
		for _, ex := range f.examples {
			if got := o.fix(&giteaRefusal{status: "400 Bad Request", said: ex}); got != want {
				t.Errorf("fix %d, example %q: got %q", i, ex, got)
			}
		}
	}
	if got := o.fix(errors.New("dial tcp: invalid client secret")); !strings.Contains(got, "GITEA_URL") {
		t.Errorf("an error Gitea did not answer: got %q", got)
	}
}

// oauthClient is an MCP client that signs its user in through the server's
// OAuth endpoints with a browser of its own.
type oauthClient struct {
	base     string // the server's public URL
	id       string // registered client id
	verifier string // PKCE verifier of its sign-ins
	browser  *http.Client
}

// stopAtClient stops a browser at the redirect to the MCP client.
func stopAtClient(req *http.Request, via []*http.Request) error {
	if strings.HasPrefix(req.URL.String(), oauthTestRedirect) || len(via) >= 10 {
		return http.ErrUseLastResponse
	}
	return nil
}

// newBrowser is an HTTP client with a cookie jar that stops at the MCP client.
func newBrowser() *http.Client {
	jar, _ := cookiejar.New(nil)
	return &http.Client{Jar: jar, Timeout: time.Minute, CheckRedirect: stopAtClient}
}

// newOAuthClient registers a client with the server at base.
func newOAuthClient(tb testing.TB, base string) *oauthClient {
	tb.Helper()
	status, body := oauthPost(tb, base+"/register", "application/json", `{"client_name":"Test <client>","redirect_uris":["`+oauthTestRedirect+`"]}`)
	var reg struct {
		ClientID string `json:"client_id"`
	}
	if status != http.StatusCreated || json.Unmarshal(body, &reg) != nil || reg.ClientID == "" {
		tb.Fatalf("register: %d %s", status, body)
	}
	return &oauthClient{base: base, id: reg.ClientID, verifier: rand.Text() + rand.Text(), browser: newBrowser()}
}

// authorizeURL is a good authorization request with kv overriding its
// parameters ("" removes one).
func (c *oauthClient) authorizeURL(kv ...string) string {
	q := url.Values{"response_type": {"code"}, "client_id": {c.id}, "redirect_uri": {oauthTestRedirect}, "state": {"st-1"},
		"code_challenge": {pkceChallenge(c.verifier)}, "code_challenge_method": {"S256"}, "resource": {c.base + "/mcp"}}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
		if kv[i+1] == "" {
			q.Del(kv[i])
		}
	}
	return c.base + "/authorize?" + q.Encode()
}

// do sends req with the browser and returns the response and its body.
func (c *oauthClient) do(tb testing.TB, req *http.Request) (*http.Response, string) {
	tb.Helper()
	resp, err := c.browser.Do(req)
	if err != nil {
		tb.Fatalf("%s %s%s: %v", req.Method, req.URL.Host, req.URL.Path, errors.Unwrap(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		tb.Fatal(err)
	}
	return resp, string(b)
}

// get loads u in the browser.
func (c *oauthClient) get(tb testing.TB, u string) (*http.Response, string) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	return c.do(tb, req)
}

// post submits a form in the browser.
func (c *oauthClient) post(tb testing.TB, u string, form url.Values) (*http.Response, string) {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return c.do(tb, req)
}

// hiddenRE matches a hidden input of an HTML form.
var hiddenRE = regexp.MustCompile(`<input type="hidden" name="([^"]+)" value="([^"]*)">`)

// formFields returns the hidden fields of the forms of page.
func formFields(page string) url.Values {
	v := url.Values{}
	for _, m := range hiddenRE.FindAllStringSubmatch(page, -1) {
		v.Set(html.UnescapeString(m[1]), html.UnescapeString(m[2]))
	}
	return v
}

// consent opens the consent page and answers it with action ("allow" or
// "deny"); it returns where the browser stops.
func (c *oauthClient) consent(tb testing.TB, action string) (*http.Response, string) {
	tb.Helper()
	resp, page := c.get(tb, c.authorizeURL())
	f := formFields(page)
	if resp.StatusCode != http.StatusOK || f.Get("request") == "" {
		tb.Fatalf("consent page: %s", resp.Status)
	}
	f.Set("action", action)
	return c.post(tb, c.base+"/authorize", f)
}

// back returns the parameters the server sent the browser back to the client
// with, after checking state and iss.
func (c *oauthClient) back(tb testing.TB, resp *http.Response) url.Values {
	tb.Helper()
	u, err := url.Parse(resp.Header.Get("Location"))
	if resp.StatusCode != http.StatusSeeOther || err != nil || u.Scheme+"://"+u.Host+u.Path != oauthTestRedirect {
		tb.Fatalf("%s: want a redirect to the client, got %s to %s", resp.Request.URL.Path, resp.Status, u.Path)
	}
	q := u.Query()
	if q.Get("iss") != c.base || q.Get("state") != "st-1" {
		tb.Errorf("redirect to the client: iss %q, state %q", q.Get("iss"), q.Get("state"))
	}
	return q
}

// oauthTokens is a token endpoint answer.
type oauthTokens struct {
	Access      string `json:"access_token"`
	Refresh     string `json:"refresh_token"`
	Type        string `json:"token_type"`
	Expires     int    `json:"expires_in"`
	Error       string `json:"error"`
	Description string `json:"error_description"`
	raw         string
}

// token posts form to the token endpoint.
func (c *oauthClient) token(tb testing.TB, form url.Values) (int, oauthTokens) {
	tb.Helper()
	status, body := oauthPost(tb, c.base+"/token", "application/x-www-form-urlencoded", form.Encode())
	tok := oauthTokens{raw: string(body)}
	if err := json.Unmarshal(body, &tok); err != nil {
		tb.Fatalf("token endpoint: %d, not JSON", status)
	}
	return status, tok
}

// exchange trades a code for tokens.
func (c *oauthClient) exchange(tb testing.TB, code string) oauthTokens {
	tb.Helper()
	status, tok := c.token(tb, url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {oauthTestRedirect},
		"client_id": {c.id}, "code_verifier": {c.verifier}, "resource": {c.base + "/mcp"}})
	if status != http.StatusOK || tok.Access == "" {
		tb.Fatalf("code exchange: %d %s: %s", status, tok.Error, tok.Description)
	}
	return tok
}

// oauthPost posts body to u and returns the status and answer.
func oauthPost(tb testing.TB, u, contentType, body string) (int, []byte) {
	tb.Helper()
	resp, err := http.Post(u, contentType, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// mcpIDs numbers the requests of mcpWhoami: ids in flight in a session differ.
var mcpIDs atomic.Int64

// mcpWhoami calls gitea_whoami in session sid and returns the data of its
// envelope.
func mcpWhoami(base, token, sid string) (map[string]any, error) {
	call := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"gitea_whoami","arguments":{}}}`, mcpIDs.Add(1))
	resp, body, err := mcpSend(nil, base, http.MethodPost, bearer(token, sid), call)
	if err != nil {
		return nil, err
	}
	var a struct {
		Result struct {
			Content []struct{ Text string }
			IsError bool
		}
	}
	var who map[string]any
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &a) != nil || len(a.Result.Content) != 1 || a.Result.IsError ||
		json.Unmarshal([]byte(a.Result.Content[0].Text), &who) != nil {
		return nil, fmt.Errorf("gitea_whoami: %s: %.300s", resp.Status, body)
	}
	data, _ := who["data"].(map[string]any)
	return data, nil
}

// FuzzOAuthOpen feeds the unsealing parser arbitrary text as every kind: it
// never panics, and what it accepts seals and opens again to the same value.
func FuzzOAuthOpen(f *testing.F) {
	o := testOAuth(f, oauthTestKey)
	f.Add(accessToken(o, "alice", time.Hour))
	f.Add(o.seal("client", &sealed{Name: "c", RedirectURIs: []string{oauthTestRedirect}}, 0))
	f.Add(testOAuth(f, oauthOtherKey).seal("access", &sealed{Login: "x"}, time.Hour))
	for _, s := range []string{"", "A", "not-a-token", strings.Repeat("A", 40), "////", "=="} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, kind := range []string{"client", "state", "code", "access", "refresh"} {
			s, err := o.open(kind, text)
			if err != nil {
				continue
			}
			exp := s.Exp
			again, err := o.open(kind, o.seal(kind, s, 0))
			if err != nil || again.Exp != exp {
				t.Fatalf("%s: resealed value does not open: %v", kind, err)
			}
			if diff := cmp.Diff(s, again); diff != "" {
				t.Fatalf("%s: mismatch (-want +got):\n%s", kind, diff)
			}
		}
	})
}

// FuzzOAuthRegister feeds registration arbitrary bodies: the answer is 201
// with a client id that opens to redirect URIs passing checkRedirectURI, or
// 400.
func FuzzOAuthRegister(f *testing.F) {
	o := testOAuth(f, oauthTestKey)
	for _, s := range []string{`{"redirect_uris":["https://a.example/cb"]}`, `{"redirect_uris":["cursor://x/cb"],"client_name":"c"}`,
		`{"redirect_uris":["javascript:x"]}`, `{}`, `[]`, `null`, `{"redirect_uris":[1]}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		w := httptest.NewRecorder()
		o.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/register", bytes.NewReader(body)))
		var got struct {
			ClientID string `json:"client_id"`
		}
		switch json.Unmarshal(w.Body.Bytes(), &got); w.Code {
		case 400:
		case 201:
			c, err := o.open("client", got.ClientID)
			if err != nil {
				t.Fatalf("registered client id does not open: %v", err)
			}
			if _, err := checkClient(c.RedirectURIs, c.Name); err != nil {
				t.Fatalf("registered a client that fails the checks: %v", err)
			}
		default:
			t.Fatalf("status %d", w.Code)
		}
	})
}

// BenchmarkOAuthAuthenticate measures opening an access token for a request.
func BenchmarkOAuthAuthenticate(b *testing.B) {
	o := testOAuth(b, oauthTestKey)
	t := &httpTransport{oauth: o}
	req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
	req.Header.Set("Authorization", "Bearer "+accessToken(o, "alice", time.Hour))
	for b.Loop() {
		if _, err := t.authenticate(req); err != nil {
			b.Fatal(err)
		}
	}
}

// TestOAuthCookie checks the sign-in cookie's attributes: with an https
// MCP_PUBLIC_URL (TLS, here or at a proxy in front) it is __Host- prefixed
// and Secure; on loopback http it can be neither. Both are HttpOnly, Lax and
// scoped to the whole host.
func TestOAuthCookie(t *testing.T) {
	t.Parallel()
	tests := []struct {
		public string
		want   string // the Set-Cookie line without its value
	}{
		{"https://mcp.example.com", "__Host-giteamcp-signin=; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax"},
		{"https://mcp.example.com:8443", "__Host-giteamcp-signin=; Path=/; Max-Age=600; HttpOnly; Secure; SameSite=Lax"},
		{"http://127.0.0.1:8080", "giteamcp-signin=; Path=/; Max-Age=600; HttpOnly; SameSite=Lax"},
	}
	for _, tt := range tests {
		o := testOAuth(t, oauthTestKey)
		o.public = tt.public
		q := url.Values{"client_id": {o.seal("client", &sealed{RedirectURIs: []string{oauthTestRedirect}}, 0)}, "redirect_uri": {oauthTestRedirect},
			"response_type": {"code"}, "code_challenge_method": {"S256"}, "code_challenge": {pkceChallenge(strings.Repeat("v", 43))}}
		w := httptest.NewRecorder()
		o.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/authorize?"+q.Encode(), nil))
		got := w.Header().Get("Set-Cookie")
		if name, rest, ok := strings.Cut(got, "="); ok {
			_, attrs, _ := strings.Cut(rest, ";")
			got = name + "=;" + attrs
		}
		if w.Code != http.StatusOK || got != tt.want {
			t.Errorf("%s: %d, cookie %q, want %q", tt.public, w.Code, got, tt.want)
		}
	}
}

// tokenLike matches the secrets the server sends Gitea: codes, verifiers,
// client secrets and refresh tokens.
var tokenLike = regexp.MustCompile(`^[A-Za-z0-9._~-]{8,}$`)

// FuzzOAuthSaid feeds what Gitea's token endpoint may answer through
// oauthSaid: the text is valid UTF-8 without control characters, at most
// 303 bytes, and never carries a value the server sent as a secret.
func FuzzOAuthSaid(f *testing.F) {
	f.Add("unauthorized_client", "invalid client secret", "s3cret")
	f.Add("invalid_client", "cannot load client with client id: 'x'", "x")
	f.Add("", "\x1b[31mred\u2028"+strings.Repeat("é", 200), "é")
	f.Add("x", "abcd\x01efgh", "abcdefgh")
	f.Fuzz(func(t *testing.T, code, desc, secret string) {
		said := oauthSaid(code, desc, url.Values{"client_secret": {secret}, "client_id": {"id"}})
		if !utf8.ValidString(said) || len(said) > 303 || strings.IndexFunc(said, unicode.IsControl) >= 0 {
			t.Errorf("oauthSaid(%q, %q) = %q", code, desc, said)
		}
		if tokenLike.MatchString(secret) && strings.Contains(said, secret) {
			t.Errorf("oauthSaid(%q, %q) = %q carries the secret %q", code, desc, said, secret)
		}
	})
}

// oauthServerOf builds an OAuth server against https://gitea.example.com from
// the settings getenv gives, as the HTTP mode builds it from the configuration.
func oauthServerOf(getenv func(string) string) (*oauthServer, error) {
	c, err := loadOAuth(getenv, &url.URL{Scheme: "https", Host: "gitea.example.com"})
	if err != nil || c == nil {
		return nil, err
	}
	return newOAuthServer(c, giteaClient(&config{timeout: time.Second})), nil
}

// TestOAuthInstructionsMode checks that initialize's instructions name the
// identity mode of the caller who sent it: oauth, as gitea_whoami says.
func TestOAuthInstructionsMode(t *testing.T) {
	t.Parallel()
	ts, o := newOAuthTest(t, "http://127.0.0.1:1")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	_, body, err := mcpSend(nil, ts.URL, http.MethodPost, bearer(accessToken(o, "alice", time.Hour), ""), init)
	if err != nil || !strings.Contains(string(body), "identity mode oauth") {
		t.Errorf("initialize: %v, instructions without \"identity mode oauth\": %.300s", err, body)
	}
}

// TestOAuthTokenWithoutID checks an access token sealed before user ids were
// sealed with the login: its account is asked of Gitea (once per call, as
// then), never taken as a login without an id, which would let a renamed user
// pass the self-approval check by login.
func TestOAuthTokenWithoutID(t *testing.T) {
	t.Parallel()
	gitea := newScriptedGitea(t).accept("gitea-at-alice", "alice")
	ts, o := newOAuthTest(t, gitea.URL)
	for _, tt := range []struct {
		name  string
		uid   int64
		asked int
	}{{"without an id", 0, 1}, {"with an id", fakeUserID("alice"), 0}} {
		tok := o.seal("access", &sealed{Aud: o.resource(), Client: oauthHash("client"), Login: "alice", UID: tt.uid, Token: "gitea-at-alice"}, time.Hour)
		sid := httpSessionID(t, ts.URL, "2025-11-25", "Authorization", "Bearer "+tok)
		before := gitea.count("GET", "/user")
		_, body, err := mcpSend(nil, ts.URL, http.MethodPost, bearer(tok, sid), `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"gitea_call_operation",`+
			`"arguments":{"operation":"repoGet","arguments":{"owner":"alice","repo":"none"}}}}`)
		if err != nil || !strings.Contains(string(body), `\"identity\":{\"login\":\"alice\"`) {
			t.Errorf("%s: a call as alice: %v %.400s", tt.name, err, body)
		}
		if n := gitea.count("GET", "/user") - before; n != tt.asked {
			t.Errorf("%s: the call asked Gitea %d times who alice is; want %d", tt.name, n, tt.asked)
		}
	}
}
