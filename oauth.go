package main

// OAuth mode (GITEA_OAUTH_CLIENT_ID): the HTTP transport is an OAuth 2.1
// resource server whose every request acts as the Gitea user its token names.
// Gitea has no dynamic client registration, so the server is also the
// authorization server MCP clients talk to: it registers clients, asks the
// user's consent, signs the user in through Gitea's own OAuth2 provider with
// the server's application, and hands out tokens of its own. Everything it
// hands out (client ids, the state passed through Gitea, codes, access and
// refresh tokens) is sealed with AES-256-GCM under MCP_OAUTH_KEY, so that
// instances sharing the key serve the same clients without shared state. The
// Gitea tokens travel only inside those seals: never logged, never returned.

import (
	"cmp"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Lifetimes of what OAuth mode hands out. An access token also ends with the
// Gitea access token it carries.
const (
	oauthAccessTTL  = time.Hour
	oauthRefreshTTL = 30 * 24 * time.Hour
	oauthCodeTTL    = time.Minute
	oauthStateTTL   = 10 * time.Minute // from the consent page to Gitea's answer
)

// Bounds on what clients send.
const (
	oauthMaxSealed    = 8 << 10  // characters of a sealed value
	oauthMaxBody      = 16 << 10 // bytes of a registration or token request
	oauthMaxRedirects = 4        // redirect_uris of one client
	oauthMaxURI       = 512      // bytes of one redirect URI
	oauthMaxName      = 100      // bytes of client_name
)

// oauthServer is OAuth mode: its configuration, the sealing key and the ids of
// the codes this instance has redeemed.
type oauthServer struct {
	gitea    string // GITEA_URL without a trailing slash: the server's own calls
	browsers string // GITEA_PUBLIC_URL (default GITEA_URL): where browsers are sent to sign in
	clientID string // GITEA_OAUTH_CLIENT_ID: the server's application in Gitea
	secret   string // GITEA_OAUTH_CLIENT_SECRET
	public   string // MCP_PUBLIC_URL, scheme://host[:port]: the issuer; the resource is public + "/mcp"
	aead     cipher.AEAD
	client   *http.Client // to Gitea; redirects are not followed
	cop      *http.CrossOriginProtection
	now      func() time.Time
	// identify asks Gitea, through the executor, whose a token is ("" if
	// Gitea does not say); set by newHTTPTransport.
	identify func(ctx context.Context, token string) account

	mu   sync.Mutex
	used map[string]int64 // redeemed code id -> its expiry (Unix seconds)
}

// oauthConfig is OAuth mode's settings, read by loadConfig; the HTTP mode
// builds the OAuth server from them (newOAuthServer).
type oauthConfig struct {
	gitea, browsers, clientID, secret, public string // as in oauthServer
	key                                       []byte // MCP_OAUTH_KEY, 32 bytes
}

// loadOAuth reads OAuth mode's settings: nil without GITEA_OAUTH_CLIENT_ID
// and GITEA_OAUTH_CLIENT_SECRET, an error when they are incomplete,
// conflict with static bearer or sudo mode, or lack a usable key.
func loadOAuth(getenv func(string) string, gitea *url.URL) (*oauthConfig, error) {
	id, secret := getenv("GITEA_OAUTH_CLIENT_ID"), getenv("GITEA_OAUTH_CLIENT_SECRET")
	switch {
	case id == "" && secret == "":
		return nil, nil
	case id == "" || secret == "":
		return nil, errors.New("GITEA_OAUTH_CLIENT_ID and GITEA_OAUTH_CLIENT_SECRET: OAuth mode needs both (the server's OAuth2 application in Gitea)")
	case gitea == nil:
		return nil, errors.New("GITEA_OAUTH_CLIENT_ID: OAuth mode needs GITEA_URL")
	case getenv("MCP_BEARER_TOKEN") != "":
		return nil, errors.New("MCP_BEARER_TOKEN and GITEA_OAUTH_CLIENT_ID are exclusive: choose static bearer mode or OAuth mode")
	case getenv("GITEA_SUDO") != "":
		return nil, errors.New("GITEA_SUDO and GITEA_OAUTH_CLIENT_ID are exclusive: in OAuth mode every request acts as its signed-in user")
	}
	key, err := parseOAuthKey(getenv("MCP_OAUTH_KEY"))
	if err != nil {
		return nil, err
	}
	o := &oauthConfig{gitea: strings.TrimSuffix(gitea.String(), "/"), clientID: id, secret: secret, key: key}
	o.browsers = o.gitea
	if raw := getenv("GITEA_PUBLIC_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("GITEA_PUBLIC_URL: want http(s)://host[:port][/path], the address browsers reach Gitea at")
		}
		o.browsers = strings.TrimSuffix(u.String(), "/")
	}
	if raw := getenv("MCP_PUBLIC_URL"); raw != "" {
		if o.public, err = checkPublicURL(raw); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// newOAuthServer builds OAuth mode's server from its settings, with client
// for its own calls to Gitea.
func newOAuthServer(c *oauthConfig, client *http.Client) *oauthServer {
	block, _ := aes.NewCipher(c.key) // 32 bytes: AES-256, which GCM accepts
	aead, _ := cipher.NewGCM(block)
	return &oauthServer{gitea: c.gitea, browsers: c.browsers, clientID: c.clientID, secret: c.secret, public: c.public, aead: aead,
		client: client, cop: http.NewCrossOriginProtection(), now: time.Now, used: map[string]int64{}}
}

// parseOAuthKey decodes MCP_OAUTH_KEY: 32 bytes as hex or base64 (standard or
// URL alphabet, padded or not). The error never echoes the value.
func parseOAuthKey(s string) ([]byte, error) {
	if k, err := hex.DecodeString(s); err == nil && len(k) == 32 {
		return k, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == 32 {
			return k, nil
		}
	}
	return nil, errors.New("MCP_OAUTH_KEY: OAuth mode needs 32 random bytes, base64 or hex (openssl rand -base64 32)")
}

// checkPublicURL checks MCP_PUBLIC_URL: https://host[:port], or http on a
// loopback host, with nothing after the authority but an optional "/".
func checkPublicURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || strings.TrimSuffix(raw, "/") != u.Scheme+"://"+u.Host ||
		u.Scheme != "https" && !(u.Scheme == "http" && isLoopback(u.Hostname())) {
		return "", fmt.Errorf("MCP_PUBLIC_URL %q: want https://host[:port] (http only on loopback) without a path", raw)
	}
	return u.Scheme + "://" + u.Host, nil
}

// setPublic completes the public URL once the listen address is known: by
// default http://listen, which must be a loopback address.
func (o *oauthServer) setPublic(listen string) error {
	if o.public == "" {
		p, err := checkPublicURL("http://" + listen)
		if err != nil {
			return errors.New("MCP_PUBLIC_URL: OAuth mode needs it unless -http listens on loopback; set the https URL clients reach")
		}
		o.public = p
	}
	return o.cop.AddTrustedOrigin(o.public)
}

// resource is the protected resource: the MCP endpoint's public URL.
func (o *oauthServer) resource() string { return o.public + "/mcp" }

// oauthProfile selects the profile of OAuth mode like selectProfile, without
// reading its token: every request brings its user's. Runtime switching is
// refused, since one user's switch would change every user's profile.
func oauthProfile(cfg *profileConfig, name string) (*profile, error) {
	if cfg != nil && cfg.AllowRuntimeSwitching {
		return nil, errors.New("GITEA_MCP_CONFIG: allow_runtime_switching would let one OAuth user switch the profile of all; OAuth mode needs it off")
	}
	p, _, err := selectProfile(cfg, name, func(string) string { return "unused" })
	return p, err
}

// sealed is the content of everything OAuth mode hands out. Its kind (the
// additional data of the seal) says which fields are used.
type sealed struct {
	Exp int64 `json:"exp,omitempty"` // Unix seconds; 0 only for client ids, which do not expire

	// kind "client": a registration
	Name         string   `json:"n,omitempty"`
	RedirectURIs []string `json:"ru,omitempty"`

	// kinds "state" and "code": one sign-in
	RedirectURI string `json:"r,omitempty"`  // the MCP client's
	Challenge   string `json:"cc,omitempty"` // the MCP client's PKCE S256 challenge
	State       string `json:"s,omitempty"`  // the MCP client's state
	Browser     string `json:"b,omitempty"`  // hash of the sign-in cookie of the browser that consented
	Verifier    string `json:"v,omitempty"`  // PKCE verifier toward Gitea
	ID          string `json:"id,omitempty"` // a code's id, for single use

	// kinds "code", "access" and "refresh": a grant
	Aud      string `json:"aud,omitempty"`  // the resource
	Client   string `json:"cid,omitempty"`  // hash of the MCP client id
	Login    string `json:"sub,omitempty"`  // Gitea login, verified at sign-in
	UID      int64  `json:"uid,omitempty"`  // Gitea user id, verified with the login
	Token    string `json:"gt,omitempty"`   // Gitea access token
	Refresh  string `json:"grt,omitempty"`  // Gitea refresh token
	TokenExp int64  `json:"gexp,omitempty"` // Gitea access token's expiry (code)
}

// Why a sealed value is refused; the texts go into error descriptions.
var (
	errNoToken     = errors.New("no bearer token")
	errSealInvalid = errors.New("invalid: malformed, altered, or sealed with another key or for another use")
	errSealExpired = errors.New("expired")
	errAudience    = errors.New("issued for another resource")
)

// seal encrypts s as kind, expiring after ttl (0: never), into URL-safe text:
// base64url of a random 96-bit nonce and the AES-256-GCM ciphertext.
func (o *oauthServer) seal(kind string, s *sealed, ttl time.Duration) string {
	if ttl > 0 {
		s.Exp = o.now().Add(ttl).Unix()
	}
	nonce := make([]byte, o.aead.NonceSize())
	rand.Read(nonce)
	return base64.RawURLEncoding.EncodeToString(o.aead.Seal(nonce, nonce, encode(s), []byte("giteamcp-oauth-v1 "+kind)))
}

// open decrypts a value sealed as kind and checks its expiry.
func (o *oauthServer) open(kind, text string) (*sealed, error) {
	if len(text) > oauthMaxSealed {
		return nil, errSealInvalid
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	n := o.aead.NonceSize()
	if err != nil || len(raw) < n+o.aead.Overhead() {
		return nil, errSealInvalid
	}
	plain, err := o.aead.Open(nil, raw[:n], raw[n:], []byte("giteamcp-oauth-v1 "+kind))
	var s sealed
	if err != nil || json.Unmarshal(plain, &s) != nil || s.Exp == 0 && kind != "client" {
		return nil, errSealInvalid
	}
	if s.Exp != 0 && o.now().Unix() >= s.Exp {
		return nil, errSealExpired
	}
	return &s, nil
}

// oauthHash is a short SHA-256 digest: how seals name a client id or a cookie.
func oauthHash(s string) string {
	h := sha256.Sum256([]byte(s))
	return base64.RawURLEncoding.EncodeToString(h[:16])
}

// ServeHTTP serves the OAuth endpoints: the metadata documents, registration,
// authorization (consent, then Gitea), Gitea's callback and tokens. The JSON
// endpoints admit any origin (CORS): they take no cookies.
func (o *oauthServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var serve func(http.ResponseWriter, *http.Request)
	methods, cors := "GET", true
	switch r.URL.Path {
	case "/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp":
		serve = o.resourceMetadata
	case "/.well-known/oauth-authorization-server":
		serve = o.serverMetadata
	case "/register":
		serve, methods = o.register, "POST"
	case "/token":
		serve, methods = o.token, "POST"
	case "/authorize":
		serve, methods, cors = o.authorize, "GET, POST", false
	case "/oauth/callback":
		serve, cors = o.callback, false
	default:
		httpFail(w, http.StatusNotFound, nil, errorf(codeInvalidRequest, "not found: the MCP endpoint is /mcp"))
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if cors {
		w.Header().Set("Access-Control-Allow-Origin", "*")
	}
	switch {
	case cors && r.Method == http.MethodOptions:
		w.Header().Set("Access-Control-Allow-Methods", methods)
		w.Header().Set("Access-Control-Allow-Headers", "Authorization, Content-Type, Mcp-Protocol-Version")
		w.WriteHeader(http.StatusNoContent)
	case !slices.Contains(strings.Split(methods, ", "), r.Method):
		w.Header().Set("Allow", methods)
		oauthError(w, http.StatusMethodNotAllowed, "invalid_request", "method "+r.Method+" not allowed")
	default:
		serve(w, r)
	}
}

// resourceMetadata serves the protected resource metadata (RFC 9728).
func (o *oauthServer) resourceMetadata(w http.ResponseWriter, _ *http.Request) {
	oauthJSON(w, http.StatusOK, map[string]any{"resource": o.resource(), "authorization_servers": []string{o.public},
		"bearer_methods_supported": []string{"header"}})
}

// serverMetadata serves the authorization server metadata (RFC 8414).
func (o *oauthServer) serverMetadata(w http.ResponseWriter, _ *http.Request) {
	oauthJSON(w, http.StatusOK, map[string]any{"issuer": o.public,
		"authorization_endpoint": o.public + "/authorize", "token_endpoint": o.public + "/token", "registration_endpoint": o.public + "/register",
		"response_types_supported": []string{"code"}, "grant_types_supported": []string{"authorization_code", "refresh_token"},
		"code_challenge_methods_supported": []string{"S256"}, "token_endpoint_auth_methods_supported": []string{"none"},
		"authorization_response_iss_parameter_supported": true})
}

// register serves dynamic client registration (RFC 7591) of public clients.
// The client id is the sealed registration itself: nothing is stored, and
// the bounds keep it short. Other metadata is ignored; the answer says what
// the client got.
func (o *oauthServer) register(w http.ResponseWriter, r *http.Request) {
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
		Name         string   `json:"client_name"`
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, oauthMaxBody))
	if err != nil || json.Unmarshal(body, &m) != nil {
		oauthError(w, http.StatusBadRequest, "invalid_client_metadata", fmt.Sprintf("want a JSON object of client metadata of at most %d bytes", oauthMaxBody))
		return
	}
	if code, err := checkClient(m.RedirectURIs, m.Name); err != nil {
		oauthError(w, http.StatusBadRequest, code, err.Error())
		return
	}
	id := o.seal("client", &sealed{Name: m.Name, RedirectURIs: m.RedirectURIs}, 0)
	oauthJSON(w, http.StatusCreated, map[string]any{"client_id": id, "client_id_issued_at": o.now().Unix(),
		"client_name": m.Name, "redirect_uris": m.RedirectURIs, "token_endpoint_auth_method": "none",
		"grant_types": []string{"authorization_code", "refresh_token"}, "response_types": []string{"code"}})
}

// browserSchemes are URI schemes a browser acts on itself: never a redirect URI.
var browserSchemes = []string{"javascript", "data", "vbscript", "file", "blob", "about", "filesystem"}

// checkClient checks a registration and returns the OAuth error code and the
// error of the first problem.
func checkClient(uris []string, name string) (string, error) {
	// Printable: no control, bidi or zero-width character changes how the consent page reads.
	if len(name) > oauthMaxName || !utf8.ValidString(name) || strings.IndexFunc(name, func(r rune) bool { return !unicode.IsPrint(r) }) >= 0 {
		return "invalid_client_metadata", fmt.Errorf("client_name: want at most %d bytes of printable UTF-8", oauthMaxName)
	}
	if len(uris) == 0 || len(uris) > oauthMaxRedirects {
		return "invalid_redirect_uri", fmt.Errorf("redirect_uris: got %d, want 1 to %d", len(uris), oauthMaxRedirects)
	}
	for _, s := range uris {
		if err := checkRedirectURI(s); err != nil {
			return "invalid_redirect_uri", err
		}
	}
	return "", nil
}

// checkRedirectURI checks one redirect URI: printable ASCII, absolute,
// without fragment or credentials, and https, http on a loopback host (RFC 8252, section 7.3), or
// a private-use scheme of a native app (section 7.1) that a browser does not
// act on itself.
func checkRedirectURI(s string) error {
	u, err := url.Parse(s)
	switch {
	case len(s) > oauthMaxURI:
		return fmt.Errorf("redirect_uris: longer than %d bytes", oauthMaxURI)
	case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r > '~' }) >= 0: // shown on the consent page as it is
		return fmt.Errorf("redirect_uris: %q: want printable ASCII, the rest percent-encoded", s)
	case err != nil || u.Scheme == "" || strings.Contains(s, "#") || u.User != nil:
		return fmt.Errorf("redirect_uris: %q: want an absolute URI without fragment or credentials", s)
	case u.Scheme == "https" && u.Host == "":
		return fmt.Errorf("redirect_uris: %q: https without a host", s)
	case u.Scheme == "http" && !isLoopback(u.Hostname()):
		return fmt.Errorf("redirect_uris: %q: http only on a loopback host (localhost, 127.0.0.1, [::1]); use https", s)
	case slices.Contains(browserSchemes, u.Scheme):
		return fmt.Errorf("redirect_uris: %q: scheme %s is not a redirect target", s, u.Scheme)
	}
	return nil
}

// oauthPage is the consent page (with Request) or an error page (Message).
var oauthPage = template.Must(template.New("page").Parse(`<!doctype html>
<html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>Gitea MCP sign-in</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}code{word-break:break-all}</style>
{{if .Request}}<h1>Sign in with Gitea</h1>
<p><b>{{or .Name "An application without a name"}}</b> asks to work on Gitea at <b>{{.Gitea}}</b> as you, through this MCP server.</p>
<p>Its access will be sent to <code>{{.RedirectURI}}</code>. Continue only if you started this sign-in from that application.</p>
<form method="post" action="/authorize"><input type="hidden" name="request" value="{{.Request}}">
<button name="action" value="allow">Continue to Gitea</button> <button name="action" value="deny">Cancel</button></form>
{{else}}<h1>Sign-in failed</h1>
<p>{{.Message}}</p>{{if .Fix}}<p>Likely fix, for the server's operator: {{.Fix}}</p>{{end}}
{{if .Back}}<p><a href="{{.Back}}">Return to the application</a></p>{{end}}{{end}}
`))

// oauthPageData fills oauthPage.
type oauthPageData struct {
	Request, Name, Gitea, RedirectURI string       // consent
	Message, Fix                      string       // error
	Back                              template.URL // error: the MCP client's redirect URI with the error (registered, checked)
}

// authorize serves the authorization endpoint: GET checks the request and
// shows the consent page, POST takes the decision and sends the browser to
// Gitea. Errors get an error page, never a redirect: any site can register
// a client, so a redirect would make this server an open redirector (RFC
// 9700, section 4.11.2); the page links back to the client's registered
// redirect URI with the error (RFC 6749, section 4.1.2.1).
func (o *oauthServer) authorize(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		o.decide(w, r)
		return
	}
	q := r.URL.Query()
	id, ru, state := q.Get("client_id"), q.Get("redirect_uri"), q.Get("state")
	client, err := o.open("client", id)
	if err != nil || !slices.Contains(client.RedirectURIs, ru) {
		oauthHTML(w, http.StatusBadRequest, oauthPageData{Message: "This sign-in link names an unknown client or a redirect URI the client did not register. Start again from your MCP client."})
		return
	}
	fail := func(code, desc string) { // a page, not a redirect: any site registers clients (RFC 9700, section 4.11.2)
		back, _ := o.backURL(ru, "error", code, "error_description", desc, "state", state)
		oauthHTML(w, http.StatusBadRequest, oauthPageData{Message: "This sign-in request is invalid: " + desc + ".", Back: template.URL(back)})
	}
	challenge := q.Get("code_challenge")
	switch {
	case q.Get("response_type") != "code":
		fail("unsupported_response_type", "response_type: want code")
	case q.Get("code_challenge_method") != "S256":
		fail("invalid_request", "code_challenge_method: want S256 (PKCE is required; plain is refused)")
	case len(challenge) != 43 || strings.Trim(challenge, base64URLAlphabet) != "":
		fail("invalid_request", "code_challenge: want the 43-character base64url S256 challenge")
	case !o.forResource(q.Get("resource")):
		fail("invalid_target", "resource: this server's resource is "+o.resource())
	default:
		browser := ""
		if c, err := r.Cookie(o.cookieName()); err == nil && len(c.Value) <= 64 {
			browser = c.Value
		}
		if browser == "" {
			browser = rand.Text()
		}
		http.SetCookie(w, &http.Cookie{Name: o.cookieName(), Value: browser, Path: "/", MaxAge: int(oauthStateTTL.Seconds()),
			HttpOnly: true, Secure: strings.HasPrefix(o.public, "https:"), SameSite: http.SameSiteLaxMode})
		req := o.seal("state", &sealed{RedirectURI: ru, Challenge: challenge, State: state, Browser: oauthHash(browser),
			Verifier: rand.Text() + rand.Text(), Aud: o.resource(), Client: oauthHash(id)}, oauthStateTTL)
		if len(req) > oauthMaxSealed { // it would not open again: say why now
			fail("invalid_request", "state: too long")
			return
		}
		oauthHTML(w, http.StatusOK, oauthPageData{Request: req, Name: client.Name, Gitea: o.browsers, RedirectURI: ru})
	}
}

// base64URLAlphabet is the alphabet of unpadded base64url.
const base64URLAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"

// forResource reports whether a resource parameter (RFC 8707) names this
// server's resource; an absent one does.
func (o *oauthServer) forResource(res string) bool {
	return res == "" || strings.TrimSuffix(res, "/") == o.resource()
}

// cookieName names the cookie that ties a sign-in to the browser that
// consented; with https its __Host- prefix keeps sibling hosts from setting it.
func (o *oauthServer) cookieName() string {
	if strings.HasPrefix(o.public, "https:") {
		return "__Host-giteamcp-signin"
	}
	return "giteamcp-signin"
}

// sameBrowser reports whether the request comes from the browser that
// consented to the sign-in s.
func (o *oauthServer) sameBrowser(r *http.Request, s *sealed) bool {
	c, err := r.Cookie(o.cookieName())
	return err == nil && subtle.ConstantTimeCompare([]byte(oauthHash(c.Value)), []byte(s.Browser)) == 1
}

// expiredSignIn is the error page of a sign-in that cannot continue.
const expiredSignIn = "This sign-in expired or was started in another browser. Start again from your MCP client."

// decide takes the consent page's answer: a same-origin POST from the browser
// that saw the page. Allowed, it sends the browser to Gitea's authorization
// endpoint with the sealed request as state and a PKCE challenge of its own.
func (o *oauthServer) decide(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, oauthMaxBody)
	if err := o.cop.Check(r); err != nil {
		oauthHTML(w, http.StatusForbidden, oauthPageData{Message: "The consent came from another site; it was refused."})
		return
	}
	req := r.PostFormValue("request")
	s, err := o.open("state", req)
	if err != nil || !o.sameBrowser(r, s) {
		oauthHTML(w, http.StatusBadRequest, oauthPageData{Message: expiredSignIn})
		return
	}
	if r.PostFormValue("action") != "allow" {
		o.back(w, r, s.RedirectURI, "error", "access_denied", "error_description", "the user cancelled the sign-in", "state", s.State)
		return
	}
	q := url.Values{"client_id": {o.clientID}, "redirect_uri": {o.public + "/oauth/callback"}, "response_type": {"code"},
		"state": {req}, "code_challenge": {pkceChallenge(s.Verifier)}, "code_challenge_method": {"S256"}}
	http.Redirect(w, r, o.browsers+"/login/oauth/authorize?"+q.Encode(), http.StatusSeeOther)
}

// callback serves Gitea's answer: it redeems Gitea's code, learns the login,
// and sends the browser back to the MCP client with a sealed code of its own.
func (o *oauthServer) callback(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s, err := o.open("state", q.Get("state"))
	if err != nil || !o.sameBrowser(r, s) {
		oauthHTML(w, http.StatusBadRequest, oauthPageData{Message: expiredSignIn})
		return
	}
	if q.Get("error") != "" || q.Get("code") == "" {
		said := oauthSaid(q.Get("error"), q.Get("error_description"), nil)
		o.back(w, r, s.RedirectURI, "error", "access_denied", "error_description", "Gitea did not grant access: "+cmp.Or(said, "no code"), "state", s.State)
		return
	}
	tok, me, err := o.exchange(r.Context(), url.Values{"grant_type": {"authorization_code"}, "code": {q.Get("code")},
		"redirect_uri": {o.public + "/oauth/callback"}, "code_verifier": {s.Verifier}})
	if err != nil {
		fix := o.fix(err)
		fmt.Fprintf(os.Stderr, "giteamcp: oauth sign-in: %v; likely fix: %s\n", err, fix)
		msg := "Gitea did not complete the sign-in" + giteaSaid(err)
		back, _ := o.backURL(s.RedirectURI, "error", "server_error", "error_description", msg, "state", s.State)
		oauthHTML(w, http.StatusBadGateway, oauthPageData{Message: msg + ".", Fix: fix, Back: template.URL(back)})
		return
	}
	code := o.seal("code", &sealed{ID: rand.Text(), RedirectURI: s.RedirectURI, Challenge: s.Challenge, Aud: s.Aud, Client: s.Client,
		Login: me.Login, UID: me.ID, Token: tok.AccessToken, Refresh: tok.RefreshToken, TokenExp: tok.expiry(o.now())}, oauthCodeTTL)
	o.back(w, r, s.RedirectURI, "code", code, "state", s.State)
}

// back sends the browser to an MCP client's registered redirect URI with
// the name-value pairs kv (empty values left out) and iss (RFC 9207).
func (o *oauthServer) back(w http.ResponseWriter, r *http.Request, uri string, kv ...string) {
	u, err := o.backURL(uri, kv...)
	if err != nil { // registered URIs parse
		oauthHTML(w, http.StatusBadRequest, oauthPageData{Message: expiredSignIn})
		return
	}
	http.Redirect(w, r, u, http.StatusSeeOther)
}

// backURL is the redirect URI uri with the name-value pairs kv (empty values
// left out) and iss.
func (o *oauthServer) backURL(uri string, kv ...string) (string, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return "", err
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	q.Set("iss", o.public)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// token serves the token endpoint: authorization_code (single use within this
// instance, PKCE S256, same client and redirect URI) and refresh_token (which
// refreshes the Gitea grant too). Grants are bound to the client and the
// resource.
func (o *oauthServer) token(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, oauthMaxBody)
	if err := r.ParseForm(); err != nil {
		oauthError(w, http.StatusBadRequest, "invalid_request", "want an application/x-www-form-urlencoded body")
		return
	}
	f := r.PostForm
	if _, err := o.open("client", f.Get("client_id")); err != nil {
		oauthError(w, http.StatusUnauthorized, "invalid_client", "client_id: unknown; register again")
		return
	}
	cid := oauthHash(f.Get("client_id"))
	if !o.forResource(f.Get("resource")) {
		oauthError(w, http.StatusBadRequest, "invalid_target", "resource: this server's resource is "+o.resource())
		return
	}
	bad := func(desc string) { oauthError(w, http.StatusBadRequest, "invalid_grant", desc) }
	switch f.Get("grant_type") {
	case "authorization_code":
		c, err := o.open("code", f.Get("code"))
		switch {
		case err != nil:
			bad("code: " + err.Error())
		case c.Client != cid:
			bad("code: issued to another client")
		case c.Aud != o.resource():
			bad("code: " + errAudience.Error())
		case f.Get("redirect_uri") != c.RedirectURI:
			bad("redirect_uri: differs from the authorization request's")
		case !pkceValid(c.Challenge, f.Get("code_verifier")):
			bad("code_verifier: does not match the code_challenge")
		case !o.redeem(c.ID, c.Exp):
			bad("code: already used")
		default:
			o.issue(w, c, c.Token, c.Refresh, c.TokenExp)
		}
	case "refresh_token":
		c, err := o.open("refresh", f.Get("refresh_token"))
		switch {
		case err != nil:
			bad("refresh_token: " + err.Error())
		case c.Client != cid:
			bad("refresh_token: issued to another client")
		case c.Aud != o.resource():
			bad("refresh_token: " + errAudience.Error())
		default:
			tok, me, err := o.exchange(r.Context(), url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.Refresh}})
			if err != nil {
				fmt.Fprintf(os.Stderr, "giteamcp: oauth refresh: %v; likely fix: %s\n", err, o.fix(err))
				bad("Gitea refused to refresh the grant" + giteaSaid(err) + "; sign in again")
				return
			}
			c.Login, c.UID = me.Login, me.ID
			o.issue(w, c, tok.AccessToken, tok.RefreshToken, tok.expiry(o.now()))
		}
	default:
		oauthError(w, http.StatusBadRequest, "unsupported_grant_type", "grant_type: want authorization_code or refresh_token")
	}
}

// redeem records a code's first use and reports whether this was it.
func (o *oauthServer) redeem(id string, exp int64) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	now := o.now().Unix()
	for k, e := range o.used {
		if e <= now {
			delete(o.used, k)
		}
	}
	if _, ok := o.used[id]; ok {
		return false
	}
	o.used[id] = exp
	return true
}

// issue answers a token request with a fresh access token for grant g
// carrying the Gitea access token, ending no later than it, and a refresh
// token carrying the Gitea refresh token.
func (o *oauthServer) issue(w http.ResponseWriter, g *sealed, token, refresh string, tokenExp int64) {
	ttl := oauthAccessTTL
	if d := time.Duration(tokenExp-o.now().Unix()) * time.Second; tokenExp != 0 && d < ttl {
		ttl = d
	}
	if ttl < time.Second {
		oauthError(w, http.StatusBadRequest, "invalid_grant", "the Gitea grant has expired; sign in again")
		return
	}
	out := map[string]any{"token_type": "Bearer", "expires_in": int(ttl.Seconds()),
		"access_token": o.seal("access", &sealed{Aud: g.Aud, Client: g.Client, Login: g.Login, UID: g.UID, Token: token}, ttl)}
	if refresh != "" {
		out["refresh_token"] = o.seal("refresh", &sealed{Aud: g.Aud, Client: g.Client, Login: g.Login, UID: g.UID, Refresh: refresh}, oauthRefreshTTL)
	}
	oauthJSON(w, http.StatusOK, out)
}

// pkceChallenge is the S256 challenge of a verifier (RFC 7636, section 4.2).
func pkceChallenge(verifier string) string {
	h := sha256.Sum256([]byte(verifier))
	return base64.RawURLEncoding.EncodeToString(h[:])
}

// pkceValid reports whether verifier is well formed (43 to 128 unreserved
// characters) and its S256 challenge is challenge.
func pkceValid(challenge, verifier string) bool {
	return len(verifier) >= 43 && len(verifier) <= 128 && strings.Trim(verifier, base64URLAlphabet+".~") == "" &&
		subtle.ConstantTimeCompare([]byte(pkceChallenge(verifier)), []byte(challenge)) == 1
}

// oauthJSON writes a JSON answer.
func oauthJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encode(v))
}

// oauthError writes an OAuth error answer (RFC 6749, section 5.2).
func oauthError(w http.ResponseWriter, status int, code, desc string) {
	oauthJSON(w, status, map[string]string{"error": code, "error_description": desc})
}

// oauthHTML writes a page that no other site may frame and that sends no
// referrer (its URL carries the sign-in request).
func oauthHTML(w http.ResponseWriter, status int, data oauthPageData) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	oauthPage.Execute(w, data)
}
