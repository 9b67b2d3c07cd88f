package main

// Streamable HTTP transport (-http; README, "Protocol" and "Running it for a
// team behind TLS"): the bearer check, allowed origins, sessions and the
// bound on requests in flight. It runs only with -http: a stdio deployment
// never reaches this file. It never logs or echoes a bearer token, and
// refuses before any tool runs.

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Header names of MCP's Streamable HTTP transport.
const (
	hdrSession = "Mcp-Session-Id"
	hdrVersion = "Mcp-Protocol-Version"
	hdrMethod  = "Mcp-Method"
	hdrName    = "Mcp-Name"
)

// maxSessions bounds the HTTP sessions kept at once, and maxStreams the GET
// streams of one user: a stream keeps its session busy, and with fewer
// streams than sessions one user cannot keep every session busy.
const (
	maxSessions = 1000
	maxStreams  = maxSessions / 4
)

// maxNotificationBytes bounds a POST body read without an in-flight slot:
// only a notification is served without one, so buffered bodies stay bounded.
const maxNotificationBytes = 16 << 10

// CORS answers to the origins of MCP_ALLOWED_ORIGINS: what a browser client may send and read.
const (
	corsMethods = "GET, POST, DELETE"
	corsHeaders = "Authorization, Content-Type, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name"
	corsExposed = "Mcp-Session-Id, WWW-Authenticate"
)

// codeHeaderMismatch is the 2026-07-28 error for headers that disagree with the body.
const codeHeaderMismatch = -32020

// httpConfig is the HTTP transport's configuration, read from MCP_BEARER_TOKEN,
// MCP_ALLOWED_ORIGINS and MCP_HTTP_MAX_IN_FLIGHT. It keeps only the token's
// hash, never the token.
type httpConfig struct {
	bearer   bool     // a bearer token is required
	hash     [32]byte // SHA-256 of the token
	origins  []string // allowed origins besides loopback, lower-cased; served with CORS
	inFlight int      // most requests served at once, all sessions together
}

// loadHTTPConfig checks the HTTP transport's settings of cfg.
func loadHTTPConfig(cfg *config) (*httpConfig, error) {
	c := &httpConfig{inFlight: maxInFlight}
	if v := cfg.maxInFlight; v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 10000 {
			return nil, fmt.Errorf("MCP_HTTP_MAX_IN_FLIGHT %q: want a whole number from 1 to 10000", v)
		}
		c.inFlight = n
	}
	if tok := cfg.bearerToken; tok != "" {
		if len(tok) < 16 || strings.Trim(tok, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~+/=") != "" {
			return nil, errors.New("MCP_BEARER_TOKEN: want at least 16 characters of A-Za-z0-9-._~+/=")
		}
		c.bearer, c.hash = true, sha256.Sum256([]byte(tok))
	}
	for o := range strings.SplitSeq(cfg.allowedOrigins, ",") {
		if o = strings.ToLower(strings.TrimSpace(o)); o == "" {
			continue
		}
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.String() != u.Scheme+"://"+u.Host {
			return nil, fmt.Errorf("MCP_ALLOWED_ORIGINS: %q is not an origin; want scheme://host[:port]", o)
		}
		c.origins = append(c.origins, o)
	}
	return c, nil
}

// authorized reports whether the request carries the configured bearer token,
// compared in constant time; without a configured token every request is.
func (c *httpConfig) authorized(r *http.Request) bool {
	if !c.bearer {
		return true
	}
	tok, ok := bearerToken(r)
	sum := sha256.Sum256([]byte(tok))
	return ok && subtle.ConstantTimeCompare(sum[:], c.hash[:]) == 1
}

// bearerToken returns the token of a request's one Authorization header of
// scheme Bearer (any case), white space around it removed; false without one,
// with several, or with another scheme. Words after the token stay in it.
func bearerToken(r *http.Request) (string, bool) {
	auth := r.Header.Values("Authorization")
	if len(auth) != 1 {
		return "", false
	}
	scheme, tok, _ := strings.Cut(auth[0], " ")
	tok = strings.TrimSpace(tok)
	return tok, strings.EqualFold(scheme, "Bearer") && tok != ""
}

// originAllowed reports whether an Origin header value may reach the server:
// an http(s) origin on a loopback host, or one listed in MCP_ALLOWED_ORIGINS.
func (c *httpConfig) originAllowed(origin string) bool {
	if slices.Contains(c.origins, strings.ToLower(origin)) {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.String() == u.Scheme+"://"+u.Host && isLoopback(u.Hostname())
}

// isLoopback reports whether host is localhost or a loopback IP address.
func isLoopback(host string) bool {
	ip, err := netip.ParseAddr(host)
	return strings.EqualFold(host, "localhost") || err == nil && ip.IsLoopback()
}

// httpListenAddr resolves a listen address: an empty host means 127.0.0.1,
// and a host that is not loopback is refused without authentication.
func httpListenAddr(addr string, authenticated bool) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("-http %q: %w", addr, err)
	}
	if host == "" {
		host = "127.0.0.1"
	}
	if !authenticated && !isLoopback(host) {
		return "", fmt.Errorf("-http %q: listening beyond loopback needs authentication; set MCP_BEARER_TOKEN", addr)
	}
	return net.JoinHostPort(host, port), nil
}

// httpSession is one initialize-era session of the HTTP transport.
type httpSession struct {
	*session
	id     string
	owner  string        // who created it (sessionOwner); only they may use it
	events chan []byte   // server-initiated messages awaiting a GET stream
	ended  chan struct{} // closed when the session ends
	last   time.Time     // last use; guarded by httpTransport.mu
	active int           // requests and streams in progress; guarded by httpTransport.mu
}

// httpTransport serves MCP's Streamable HTTP transport on /mcp. A request of
// the initialize era belongs to a session that initialize created; one whose
// _meta names 2026-07-28 runs on a throwaway session. A request carrying
// MCP-Protocol-Version must name a supported version and, in a session, the
// negotiated one; without it the negotiated version applies. A session's
// server-initiated messages go to its GET streams, each message to one
// stream, with up to 64 queued while none is open.
type httpTransport struct {
	srv   *server
	cfg   *httpConfig
	oauth *oauthServer  // OAuth mode; nil otherwise
	limit int           // most sessions kept; an idle one of whoever holds the most makes room
	most  int           // most GET streams of one user at once
	idle  time.Duration // an idle session ends after this long
	read  time.Duration // a request's headers and body must arrive within this
	slots chan struct{} // one per request in flight, all sessions together
	stop  chan struct{} // closed at shutdown: ends the GET streams
	once  sync.Once

	mu       sync.Mutex
	sessions map[string]*httpSession
	streams  map[string]int // GET streams open per user (sessionUser)
}

// newHTTPTransport returns a transport for s with configuration c. The
// executor's pool of idle connections to Gitea grows to the bound on
// requests in flight, so that a full load reuses its connections instead of
// dialing anew (before any request: transports are not changed in use). In
// OAuth mode it builds the OAuth server from the configuration's settings.
func (s *server) newHTTPTransport(c *httpConfig) *httpTransport {
	if gt, ok := s.exec.client.Transport.(*http.Transport); ok && gt.MaxIdleConnsPerHost < c.inFlight {
		gt.MaxIdleConns, gt.MaxIdleConnsPerHost = c.inFlight, c.inFlight
	}
	t := &httpTransport{srv: s, cfg: c, limit: maxSessions, most: maxStreams, idle: time.Hour, read: 30 * time.Second,
		slots: make(chan struct{}, c.inFlight), stop: make(chan struct{}), sessions: map[string]*httpSession{}, streams: map[string]int{}}
	if s.cfg.oauth != nil {
		t.oauth = newOAuthServer(s.cfg.oauth, giteaClient(s.cfg))
		t.oauth.identify = func(ctx context.Context, token string) account {
			if s.wait() != nil {
				return account{}
			}
			return s.exec.whoami(context.WithValue(ctx, callerKey{}, &caller{token: token, mode: "oauth"}))
		}
	}
	return t
}

// serveHTTP serves MCP over Streamable HTTP on addr until ctx is cancelled,
// then stops accepting, lets requests in flight finish for up to 5 seconds,
// ends the GET streams and returns.
func (s *server) serveHTTP(ctx context.Context, addr string) error {
	c, err := loadHTTPConfig(s.cfg)
	if err != nil {
		return err
	}
	if addr, err = httpListenAddr(addr, c.bearer || s.cfg.oauth != nil); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	t := s.newHTTPTransport(c)
	if t.oauth != nil {
		if err := t.oauth.setPublic(ln.Addr().String()); err != nil {
			ln.Close()
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "giteamcp: serving MCP on http://%s/mcp\n", ln.Addr())
	if t.oauth != nil {
		fmt.Fprintf(os.Stderr, "giteamcp: OAuth mode: clients connect to %s/mcp; users sign in through Gitea at %s\n", t.oauth.public, t.oauth.browsers)
	}
	return t.serve(ctx, ln)
}

// serve serves on ln until ctx is cancelled; see serveHTTP.
func (t *httpTransport) serve(ctx context.Context, ln net.Listener) error {
	// ReadTimeout bounds every request, the OAuth endpoints and a body left
	// unread (a 401) included; a GET stream reads no body, and net/http lifts
	// the deadline once the body is read.
	hs := &http.Server{Handler: t, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: t.read, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10}
	hs.RegisterOnShutdown(func() { t.once.Do(func() { close(t.stop) }) })
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if hs.Shutdown(sctx) != nil {
		hs.Close() // cancels the contexts of the requests still running
	}
	return nil
}

// ServeHTTP checks the path, Origin, token and protocol version header, then
// serves POST (messages), GET (the session's event stream) or DELETE. POST
// checks the version header itself, so that an error carries the request id.
// An origin of MCP_ALLOWED_ORIGINS gets CORS headers on every answer, and its
// preflight is answered before authentication; no other origin gets any.
// In OAuth mode the other paths are the OAuth endpoints.
func (t *httpTransport) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if t.oauth != nil && r.URL.Path != "/mcp" {
		t.oauth.ServeHTTP(w, r)
		return
	}
	origin := r.Header.Values("Origin")
	cors := len(origin) == 1 && slices.Contains(t.cfg.origins, strings.ToLower(origin[0]))
	if len(t.cfg.origins) > 0 {
		w.Header().Add("Vary", "Origin")
	}
	if cors {
		w.Header().Set("Access-Control-Allow-Origin", origin[0])
		w.Header().Set("Access-Control-Expose-Headers", corsExposed)
	}
	switch {
	case r.URL.Path != "/mcp":
		httpFail(w, http.StatusNotFound, nil, errorf(codeInvalidRequest, "not found: the MCP endpoint is /mcp"))
		return
	case len(origin) > 1 || len(origin) == 1 && !t.cfg.originAllowed(origin[0]):
		httpFail(w, http.StatusForbidden, nil, errorf(codeInvalidRequest, "origin not allowed"))
		return
	case cors && r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "":
		w.Header().Set("Access-Control-Allow-Methods", corsMethods)
		w.Header().Set("Access-Control-Allow-Headers", corsHeaders)
		w.Header().Set("Access-Control-Max-Age", "600")
		w.WriteHeader(http.StatusNoContent)
		return
	}
	r, authErr := t.authenticate(r)
	v := r.Header.Get(hdrVersion)
	switch {
	case authErr != nil:
		w.Header().Set("WWW-Authenticate", t.challenge(authErr))
		httpFail(w, http.StatusUnauthorized, nil, errorf(codeInvalidRequest, "missing or invalid bearer token"))
	case r.Method == http.MethodPost:
		t.post(w, r)
	case v != "" && !slices.Contains(supportedVersions, v):
		httpFail(w, http.StatusBadRequest, nil, unsupportedVersion(v))
	case r.Method == http.MethodGet:
		t.get(w, r)
	case r.Method == http.MethodDelete:
		if hs := t.session(w, r); hs != nil {
			t.end(hs)
			t.release(hs)
			w.WriteHeader(http.StatusNoContent)
		}
	default:
		w.Header().Set("Allow", "GET, POST, DELETE")
		httpFail(w, http.StatusMethodNotAllowed, nil, errorf(codeInvalidRequest, "method %s not allowed", r.Method))
	}
}

// httpPeek is what routing needs from a POST body, and the message itself
// when it decoded whole, so that the session does not decode it again.
type httpPeek struct {
	msg     message
	decoded bool   // msg decoded without error
	name    string // params.name when a string
	meta    string // params._meta's protocol version when a string
	sse     bool   // answer as a server-sent event: the client does not accept JSON
}

// peek decodes what routing needs from a message and reports whether it is
// one JSON value; wrong types are the JSON-RPC layer's to report.
func peek(body []byte) (*httpPeek, bool) {
	p := &httpPeek{}
	err := json.Unmarshal(body, &p.msg)
	if _, syntax := errors.AsType[*json.SyntaxError](err); syntax {
		return nil, false
	}
	p.decoded = err == nil && foldedDuplicate(body, 2) == "" // else handleRaw refuses it
	var params struct {
		Name json.RawMessage            `json:"name"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	if len(p.msg.Params) > 0 && json.Unmarshal(p.msg.Params, &params) == nil {
		p.msg.meta, p.msg.metaRead = params.Meta, true // what requestMeta would decode
	}
	_ = json.Unmarshal(params.Name, &p.name)
	_ = json.Unmarshal(params.Meta[metaVersion], &p.meta)
	return p, true
}

// id returns the request's id for an error answer: null when absent or invalid.
func (p *httpPeek) id() json.RawMessage {
	if p.msg.ID != nil && validID(p.msg.ID) {
		return p.msg.ID
	}
	return json.RawMessage("null")
}

// handle serves body with sess and returns the encoded response: the message
// peek decoded when it decoded whole from UTF-8, else body itself (a batch,
// or a message whose errors the JSON-RPC layer reports).
func (p *httpPeek) handle(ctx context.Context, sess *session, body []byte) []byte {
	if p.decoded && utf8.Valid(body) {
		return sess.handleMessage(ctx, &p.msg)
	}
	return sess.handleRaw(ctx, body)
}

// post serves one message (or a 2025-03-26 batch) and answers with its
// response, or 202. A body is read whole only in an in-flight slot; a request
// without one is refused at once (503, "server busy"). An unsupported
// MCP-Protocol-Version outside the stateless form is a 400 with -32022.
func (t *httpTransport) post(w http.ResponseWriter, r *http.Request) {
	accept := r.Header.Values("Accept")
	sse := !accepts(accept, "application/json")
	ct, ctParams, ctErr := mime.ParseMediaType(r.Header.Get("Content-Type"))
	switch {
	case sse && !accepts(accept, "text/event-stream"):
		httpFail(w, http.StatusNotAcceptable, nil, errorf(codeInvalidRequest, "Accept must allow application/json or text/event-stream"))
		return
	case ctErr != nil || ct != "application/json" || ctParams["charset"] != "" && !strings.EqualFold(ctParams["charset"], "utf-8"):
		httpFail(w, http.StatusUnsupportedMediaType, nil, errorf(codeInvalidRequest, "Content-Type must be application/json"))
		return
	}
	busy := func(id json.RawMessage) {
		w.Header().Set("Retry-After", "1")
		httpFail(w, http.StatusServiceUnavailable, id, busyError(cap(t.slots)))
	}
	slot, limit := false, int64(maxMessageBytes)
	select {
	case t.slots <- struct{}{}:
		slot = true
		defer func() { <-t.slots }()
	default: // a notification (a cancellation) always gets through
		limit = maxNotificationBytes
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if _, big := errors.AsType[*http.MaxBytesError](err); big && !slot {
		busy(nil)
		return
	} else if big {
		httpFail(w, http.StatusRequestEntityTooLarge, nil, errorf(codeInvalidRequest, "message larger than %d bytes", maxMessageBytes))
		return
	}
	trimmed := bytes.TrimSpace(body)
	batch := len(trimmed) > 0 && trimmed[0] == '['
	p, valid := &httpPeek{}, err == nil
	if valid && batch {
		valid = json.Valid(body)
	} else if valid {
		p, valid = peek(body) // one pass checks and decodes
	}
	if !valid {
		httpFail(w, http.StatusBadRequest, nil, errorf(codeParse, "parse error: the body is not one JSON value"))
		return
	}
	p.sse = sse
	if !slot && (batch || p.msg.ID != nil) {
		busy(p.id())
		return
	}
	sid, v := r.Header.Get(hdrSession), r.Header.Get(hdrVersion)
	switch {
	case p.meta >= modernVersion || sid == "" && v == modernVersion:
		t.stateless(w, r, body, p)
	case sid == "" && v == "" && !batch && p.msg.Method == "ping": // the Go SDK's on 2026-07-28 (no ping there): as on stdio
		reply(w, p.sse, http.StatusOK, p.handle(r.Context(), newSession(t.srv, func([]byte) {}), body))
	case v != "" && !slices.Contains(supportedVersions, v):
		httpFail(w, http.StatusBadRequest, p.id(), unsupportedVersion(v))
	case !batch && p.msg.Method == "initialize":
		t.initialize(w, r, body, p, sid)
	default:
		if hs := t.session(w, r); hs != nil {
			defer t.release(hs)
			reply(w, p.sse, http.StatusOK, p.handle(r.Context(), hs.session, body))
		}
	}
}

// stateless serves a 2026-07-28 message. A request must name its version in _meta (else
// -32602), but for a ping: 2026-07-28 has none, yet clients send one without _meta, answered
// as stdio answers it; MCP-Protocol-Version, Mcp-Method and Mcp-Name, each sent at most once
// (a gateway may read another copy), must repeat the body's version, method and tool name
// (else -32020); a version other than 2026-07-28 is -32022 and a _meta that is otherwise
// invalid is -32602, all with 400; an unknown method is a 404.
func (t *httpTransport) stateless(w http.ResponseWriter, r *http.Request, body []byte, p *httpPeek) {
	v, meta := r.Header.Get(hdrVersion), p.meta
	bare := p.msg.ID == nil || p.msg.Method == "ping" // a notification need not carry _meta, nor a ping
	if meta == "" && bare {
		meta = modernVersion
	}
	hname, ok := decodeHeaderValue(r.Header.Get(hdrName))
	sess := newSession(t.srv, func([]byte) {})
	var e *rpcError
	switch {
	case len(r.Header.Values(hdrVersion)) > 1 || len(r.Header.Values(hdrMethod)) > 1 || len(r.Header.Values(hdrName)) > 1:
		e = errorf(codeHeaderMismatch, "header mismatch: %s, %s and %s must each be sent at most once", hdrVersion, hdrMethod, hdrName)
	case !bare && p.meta == "":
		e = errorf(codeInvalidParams, "invalid params: missing or invalid _meta %q", metaVersion)
	case v != meta:
		e = errorf(codeHeaderMismatch, "header mismatch: %s %q, _meta %q", hdrVersion, v, meta)
	case meta != modernVersion:
		e = unsupportedVersion(meta)
	case p.msg.Method != "" && r.Header.Get(hdrMethod) != p.msg.Method:
		e = errorf(codeHeaderMismatch, "header mismatch: %s %q, method %q", hdrMethod, r.Header.Get(hdrMethod), p.msg.Method)
	case p.msg.Method == "tools/call" && (!ok || hname == "" || hname != p.name):
		e = errorf(codeHeaderMismatch, "header mismatch: %s %q, params.name %q", hdrName, r.Header.Get(hdrName), p.name)
	case p.msg.ID != nil:
		_, e = sess.requestMeta(&p.msg)
	}
	if e != nil {
		httpFail(w, http.StatusBadRequest, p.id(), e)
		return
	}
	out := p.handle(r.Context(), sess, body)
	var res struct{ Error *rpcError }
	status := http.StatusOK
	// The substring test spares decoding large results; the decode decides.
	if bytes.Contains(out, fmt.Appendf(nil, `"code":%d`, codeMethodNotFound)) && json.Unmarshal(out, &res) == nil && res.Error != nil && res.Error.Code == codeMethodNotFound {
		status = http.StatusNotFound
	}
	reply(w, p.sse, status, out)
}

// initialize starts a session with the initialize request in body and
// returns its id in Mcp-Session-Id; a failed initialize keeps no session.
func (t *httpTransport) initialize(w http.ResponseWriter, r *http.Request, body []byte, p *httpPeek, sid string) {
	if sid != "" {
		httpFail(w, http.StatusBadRequest, nil, errorf(codeInvalidRequest, "initialize must not carry %s", hdrSession))
		return
	}
	hs := t.create(sessionOwner(r))
	if hs == nil {
		httpFail(w, http.StatusServiceUnavailable, nil, errorf(codeInternal, "too many sessions in use"))
		return
	}
	defer t.release(hs)
	out := p.handle(r.Context(), hs.session, body)
	hs.mu.Lock()
	ok := hs.version != ""
	hs.mu.Unlock()
	if ok {
		w.Header().Set(hdrSession, hs.id)
	} else {
		t.end(hs)
	}
	reply(w, p.sse, http.StatusOK, out)
}

// get streams the session's server-initiated messages as server-sent events
// until the client leaves, the session ends or the server shuts down. A user
// already holding t.most streams gets 429.
func (t *httpTransport) get(w http.ResponseWriter, r *http.Request) {
	if !accepts(r.Header.Values("Accept"), "text/event-stream") {
		httpFail(w, http.StatusNotAcceptable, nil, errorf(codeInvalidRequest, "Accept must allow text/event-stream"))
		return
	}
	hs := t.session(w, r)
	if hs == nil {
		return
	}
	defer t.release(hs)
	user := sessionUser(hs.owner)
	t.mu.Lock()
	n := t.streams[user]
	t.streams[user] = min(n+1, t.most)
	t.mu.Unlock()
	if n >= t.most {
		httpFail(w, http.StatusTooManyRequests, nil, errorf(codeInvalidRequest, "too many streams: at most %d GET streams per user", t.most))
		return
	}
	defer func() { t.mu.Lock(); t.streams[user]--; t.mu.Unlock() }() // a zero stays: one entry per user
	rc := http.NewResponseController(w)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	for err := rc.Flush(); err == nil; err = rc.Flush() {
		select {
		case msg := <-hs.events:
			if _, err := fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		case <-hs.ended:
			return
		case <-t.stop:
			return
		}
	}
}

// session returns the live session the request names, counted as active
// until release, or answers 400 (no id, or a version other than the
// session's) or 404 (unknown, ended, expired or another user's) and returns
// nil.
func (t *httpTransport) session(w http.ResponseWriter, r *http.Request) *httpSession {
	sid := r.Header.Get(hdrSession)
	if sid == "" {
		httpFail(w, http.StatusBadRequest, nil, errorf(codeInvalidRequest, "missing %s header; send initialize first", hdrSession))
		return nil
	}
	now := time.Now()
	t.mu.Lock()
	hs := t.sessions[sid]
	if hs != nil && hs.owner != sessionOwner(r) {
		hs = nil // another user's session: as if unknown
	}
	if hs != nil && hs.active == 0 && now.Sub(hs.last) > t.idle {
		t.endLocked(hs)
		hs = nil
	}
	if hs != nil {
		hs.active++
		hs.last = now
	}
	t.mu.Unlock()
	if hs == nil {
		httpFail(w, http.StatusNotFound, nil, errorf(codeInvalidRequest, "unknown or ended session; send initialize again"))
		return nil
	}
	hs.mu.Lock()
	version := hs.version
	hs.mu.Unlock()
	if v := r.Header.Get(hdrVersion); v != "" && v != version {
		t.release(hs)
		httpFail(w, http.StatusBadRequest, nil, errorf(codeInvalidRequest, "%s %q differs from the session's %q", hdrVersion, v, version))
		return nil
	}
	return hs
}

// create starts an active session of owner after ending the expired ones.
// When the limit is reached it ends an idle session of whoever holds the
// most (busy ones counted) among owner and those holding more than owner,
// or returns nil when they have none idle: a user whose sessions are all
// busy, by streams or requests, cannot end anyone else's.
func (t *httpTransport) create(owner string) *httpSession {
	now := time.Now()
	t.mu.Lock()
	defer t.mu.Unlock()
	held, user := map[string]int{}, sessionUser // sessions per user
	for _, hs := range t.sessions {
		if hs.active == 0 && now.Sub(hs.last) > t.idle {
			t.endLocked(hs)
		} else {
			held[user(hs.owner)]++
		}
	}
	var lru *httpSession // the least recently used idle session of the one who holds the most
	for _, hs := range t.sessions {
		if n := held[user(hs.owner)]; hs.active == 0 && (user(hs.owner) == user(owner) || n > held[user(owner)]) &&
			(lru == nil || n > held[user(lru.owner)] || n == held[user(lru.owner)] && hs.last.Before(lru.last)) {
			lru = hs
		}
	}
	if len(t.sessions) >= t.limit {
		if lru == nil {
			return nil
		}
		t.endLocked(lru)
	}
	hs := &httpSession{id: rand.Text(), owner: owner, events: make(chan []byte, 64), ended: make(chan struct{}), last: now, active: 1}
	hs.session = newSession(t.srv, func(msg []byte) {
		select {
		case hs.events <- msg:
		default: // no stream drains the queue: drop, keeping memory bounded
		}
	})
	t.sessions[hs.id] = hs
	return hs
}

// release marks the end of one request or stream of hs.
func (t *httpTransport) release(hs *httpSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	hs.active--
	hs.last = time.Now()
}

// end ends hs: later requests naming it get 404.
func (t *httpTransport) end(hs *httpSession) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.endLocked(hs)
}

// endLocked ends hs with t.mu held: it forgets the session, closes its
// streams and cancels its calls in flight.
func (t *httpTransport) endLocked(hs *httpSession) {
	if t.sessions[hs.id] != hs {
		return
	}
	delete(t.sessions, hs.id)
	close(hs.ended)
	hs.cancelAll()
}

// reply writes a JSON-RPC response whole: as JSON, or as one server-sent
// event (sse) to a client that accepts only text/event-stream; nil is a 202.
func reply(w http.ResponseWriter, sse bool, status int, out []byte) {
	if out == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	if sse {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(status)
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", out)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(out))) // one write, not chunks
	w.WriteHeader(status)
	w.Write(out)
}

// httpFail answers with an HTTP status and a JSON-RPC error body.
func httpFail(w http.ResponseWriter, status int, id json.RawMessage, e *rpcError) {
	if id == nil {
		id = json.RawMessage("null")
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(encode(response{JSONRPC: "2.0", ID: id, Error: e}))
}

// accepts reports whether Accept header values allow the media type want:
// the most specific matching range decides, q=0 refuses, and no header at
// all allows everything (RFC 9110, section 12.5.1).
func accepts(header []string, want string) bool {
	if len(header) == 0 {
		return true
	}
	typ, _, _ := strings.Cut(want, "/")
	best, q := 0, 0.0
	for rng := range strings.SplitSeq(strings.Join(header, ","), ",") {
		mt, params, err := mime.ParseMediaType(rng)
		level := 0 // how specifically the range names want
		switch {
		case err != nil:
		case mt == want:
			level = 3
		case mt == typ+"/*":
			level = 2
		case mt == "*/*":
			level = 1
		}
		if level <= best {
			continue
		}
		best, q = level, 1
		if s, ok := params["q"]; ok {
			if q, err = strconv.ParseFloat(s, 64); err != nil {
				q = 0
			}
		}
	}
	return q > 0
}

// decodeHeaderValue decodes a header value of the 2026-07-28 transport:
// "=?base64?...?=" carries standard Base64 of UTF-8, anything else is itself.
// It reports false for a sentinel that does not decode.
func decodeHeaderValue(v string) (string, bool) {
	inner, ok := strings.CutPrefix(v, "=?base64?")
	if inner, ok2 := strings.CutSuffix(inner, "?="); ok && ok2 {
		b, err := base64.StdEncoding.DecodeString(inner)
		return string(b), err == nil
	}
	return v, true
}

// oauthOwnerKey carries, in an OAuth request's context, who the request is:
// the client and user id of its token (its login if sealed without an id).
// An HTTP session serves only its creator.
type oauthOwnerKey struct{}

// sessionOwner is who a request is ("" outside OAuth mode): OAuth client and
// user; sessionUser is the user, whom the session and stream limits count.
func sessionOwner(r *http.Request) string {
	s, _ := r.Context().Value(oauthOwnerKey{}).(string)
	return s
}

func sessionUser(owner string) string { return owner[strings.IndexByte(owner, ' ')+1:] }

// authenticate checks a request's credentials: the static bearer token, or in
// OAuth mode an access token, whose user becomes the request's caller. The
// caller's login is the one Gitea gave for the token's Gitea token when the
// token was issued (sign-in or refresh): the seal cannot be altered, and ends
// with that Gitea token and within an hour, so the executor need not ask
// Gitea again on every request. Gitea still judges every request by the
// Gitea token itself, so a revoked one is refused.
func (t *httpTransport) authenticate(r *http.Request) (*http.Request, error) {
	if t.oauth == nil {
		if !t.cfg.authorized(r) {
			return r, errNoToken
		}
		return r, nil
	}
	tok, ok := bearerToken(r)
	if !ok {
		return r, errNoToken
	}
	s, err := t.oauth.open("access", tok)
	if err != nil {
		return r, err
	}
	if s.Aud != t.oauth.resource() {
		return r, errAudience
	}
	c := &caller{token: s.Token, mode: "oauth"}
	owner := s.Client + " id " + strconv.FormatInt(s.UID, 10) // a login is freed at a rename; an id stays
	if s.UID != 0 {
		c.me = account{Login: s.Login, ID: s.UID}
	} else { // sealed before ids were: its account is asked of Gitea
		owner = s.Client + " login " + s.Login
	}
	ctx := context.WithValue(r.Context(), callerKey{}, c)
	return r.WithContext(context.WithValue(ctx, oauthOwnerKey{}, owner)), nil
}

// challenge is the WWW-Authenticate value of a 401 (RFC 6750, RFC 9728).
func (t *httpTransport) challenge(err error) string {
	if t.oauth == nil {
		return "Bearer"
	}
	c := `Bearer resource_metadata="` + t.oauth.public + `/.well-known/oauth-protected-resource"`
	if errors.Is(err, errNoToken) {
		return c
	}
	return c + `, error="invalid_token", error_description="access token ` + err.Error() + `"`
}
