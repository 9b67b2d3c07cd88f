package main

// JSON-RPC over stdio (README, "Protocol"): framing, size limits, protocol
// versions, sessions and dispatch to tools. It decides no access and never
// talks to Gitea; tools/call reaches Gitea only through the executor.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// Protocol versions. The initialize era negotiates one of initVersions; the
// stateless era names modernVersion in every request's _meta.
const modernVersion = "2026-07-28"

var (
	initVersions      = []string{"2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"}
	supportedVersions = append([]string{modernVersion}, initVersions...)
)

// Keys of the per-request _meta of the stateless era.
const (
	metaVersion      = "io.modelcontextprotocol/protocolVersion"
	metaCapabilities = "io.modelcontextprotocol/clientCapabilities"
	metaLogLevel     = "io.modelcontextprotocol/logLevel"
	metaServerInfo   = "io.modelcontextprotocol/serverInfo"
)

// JSON-RPC and MCP error codes.
const (
	codeParse              = -32700
	codeInvalidRequest     = -32600
	codeMethodNotFound     = -32601
	codeInvalidParams      = -32602
	codeInternal           = -32603
	codeUnsupportedVersion = -32022
)

// maxMessageBytes bounds one JSON-RPC message (one stdio line or HTTP body).
const maxMessageBytes = 4 << 20

// maxInFlight bounds the stdio messages served at once, and the messages of
// one batch. A request beyond it is refused at once (a client that keeps
// sending without reading then blocks on its own writes).
const maxInFlight = 64

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

// errorf returns an *rpcError with a formatted message.
func errorf(code int, format string, args ...any) *rpcError {
	return &rpcError{Code: code, Message: fmt.Sprintf(format, args...)}
}

// message is one incoming JSON-RPC message: a request, a notification, or a
// response to a request of ours (which we never send, so it is ignored).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   json.RawMessage `json:"error"`

	// meta is params' _meta when whoever decoded the message decoded params
	// too (metaRead: the HTTP transport's routing), so that it is not
	// decoded again.
	meta     map[string]json.RawMessage
	metaRead bool
}

// response is one outgoing JSON-RPC response.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  any             `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// session is one client connection: the whole stdio stream, or one HTTP
// session. It holds what the initialize handshake negotiated.
type session struct {
	srv  *server
	send func(msg []byte) // writes one whole message

	mu       sync.Mutex
	version  string // negotiated by initialize; "" before
	logLevel int    // minimum level for notifications/message; levelOff until set
	inflight map[string]*call
}

// call is an in-flight request that notifications/cancelled can stop.
type call struct {
	cancel    context.CancelFunc
	cancelled bool
}

func newSession(srv *server, send func([]byte)) *session {
	return &session{srv: srv, send: send, logLevel: levelOff, inflight: map[string]*call{}}
}

// encode marshals v as one compact JSON line without HTML escaping; a
// tools/list result goes to encodeToolsList.
func encode(v any) []byte {
	if b, ok := encodeToolsList(v); ok {
		return b
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		// Only our own values are encoded here; a failure is a bug.
		panic(fmt.Sprintf("encode: %v", err))
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// encodeToolsList encodes a tools/list result, alone or in its response,
// with the page copied in as it is; ok is false for any other value.
// encoding/json would scan every byte of the page again, most of the cost of
// tools/list (BenchmarkToolsList, BenchmarkHTTPToolsList). The other members
// are encoded by encoding/json in two parts, sorting before "tools" and
// after it, so the bytes are those it would write.
func encodeToolsList(v any) (out []byte, ok bool) {
	r, isResponse := v.(*response)
	m, _ := v.(map[string]any)
	if isResponse && r.Error == nil {
		m, _ = r.Result.(map[string]any)
	}
	page, ok := m["tools"].(toolsPage)
	if !ok {
		return nil, false
	}
	size := 256 // the response's head and the other members, as a rule
	for _, l := range page {
		size += len(l) + 1
	}
	out = make([]byte, 0, size)
	if isResponse {
		h := encode(&response{JSONRPC: r.JSONRPC, ID: r.ID})
		out = append(append(out, h[:len(h)-1]...), `,"result":`...)
	}
	before, after := map[string]any{}, map[string]any{}
	for k, v := range m {
		if k < "tools" {
			before[k] = v
		} else if k > "tools" {
			after[k] = v
		}
	}
	b := encode(before)
	out = append(out, b[:len(b)-1]...) // without its '}'
	if len(before) > 0 {
		out = append(out, ',')
	}
	out = append(out, `"tools":[`...)
	for i, l := range page {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, l...)
	}
	out = append(out, ']')
	if b := encode(after); len(after) > 0 {
		out = append(append(out, ','), b[1:]...) // without its '{'
	} else {
		out = append(out, '}')
	}
	if isResponse {
		out = append(out, '}')
	}
	return out, true
}

// serveStdio reads one JSON-RPC message per line from in and writes each
// response whole, on its own line, to out. Requests run concurrently, at most
// maxInFlight at once. At the end of input it waits for the calls in flight.
// Cancelling ctx (SIGTERM, SIGINT) cancels them and returns within a second.
func (s *server) serveStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	var wmu sync.Mutex
	var werr error
	sess := newSession(s, func(msg []byte) {
		wmu.Lock()
		defer wmu.Unlock()
		if werr == nil {
			_, werr = out.Write(append(msg, '\n'))
		}
	})
	var wg sync.WaitGroup
	slots := make(chan struct{}, maxInFlight)
	done := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := readLine(r, maxMessageBytes)
			if errors.Is(err, errTooLong) {
				sess.send(encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
					Error: errorf(codeInvalidRequest, "message larger than %d bytes", maxMessageBytes)}))
				continue
			}
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case slots <- struct{}{}:
					wg.Go(func() {
						defer func() { <-slots }()
						sess.handle(ctx, line)
					})
				default:
					sess.busy(ctx, line)
				}
			}
			if err != nil {
				wg.Wait()
				if err == io.EOF {
					err = nil
				}
				done <- err
				return
			}
		}
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		sess.cancelAll()
		stopped := make(chan struct{})
		go func() { wg.Wait(); close(stopped) }()
		select {
		case <-stopped:
		case <-time.After(time.Second):
		}
		return nil
	}
}

var errTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line longer than max
// is consumed and discarded, and errTooLong returned.
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > max+1 {
			line = nil
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			if err == nil || err == io.EOF {
				return nil, errTooLong
			}
			return nil, err
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if line = bytes.TrimSuffix(line, []byte("\n")); len(line) > max { // the last line, without a newline
			return nil, errTooLong
		}
		return line, err
	}
}

// busy answers a line that arrives while maxInFlight others are served,
// without waiting: a notification is still handled (a cancellation must get
// through), and so is a line that is not a request; a request is refused.
func (sess *session) busy(ctx context.Context, line []byte) {
	var m message
	line = bytes.TrimSpace(line)
	if line[0] != '[' && (!utf8.Valid(line) || json.Unmarshal(line, &m) != nil || m.ID == nil || !validID(m.ID)) {
		sess.handle(ctx, line)
		return
	}
	id := m.ID
	if id == nil {
		id = json.RawMessage("null") // a batch
	}
	sess.send(encode(response{JSONRPC: "2.0", ID: id, Error: busyError(maxInFlight)}))
}

// busyError refuses a request that arrives while n others are served.
func busyError(n int) *rpcError {
	return errorf(codeInternal, "server busy: %d messages in flight; send it again once one is answered", n)
}

// handle serves one raw message (a single message or, in 2025-03-26, a batch)
// and sends its response, if any.
func (sess *session) handle(ctx context.Context, raw []byte) {
	if out := sess.handleRaw(ctx, raw); out != nil {
		sess.send(out)
	}
}

// handleRaw serves one raw message and returns the encoded response, or nil
// when there is none (notifications, cancelled requests).
func (sess *session) handleRaw(ctx context.Context, raw []byte) []byte {
	raw = bytes.TrimSpace(raw)
	if !utf8.Valid(raw) {
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeParse, "parse error: the message is not valid UTF-8")})
	}
	if len(raw) > 0 && raw[0] == '[' {
		return sess.handleBatch(ctx, raw)
	}
	var m message
	if err := json.Unmarshal(raw, &m); err != nil {
		var syn *json.SyntaxError
		if errors.As(err, &syn) || !json.Valid(raw) {
			return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeParse, "parse error: %v", err)})
		}
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeInvalidRequest, "invalid request: %v", err)})
	}
	if k := foldedDuplicate(raw, 2); k != "" {
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeInvalidRequest, "invalid request: member %q repeated", k)})
	}
	return sess.handleMessage(ctx, &m)
}

// foldedDuplicate returns a member name of the JSON object b that an earlier
// member repeats under encoding/json's matching (case and Unicode simple
// folding: "ſ" is "s"), or "" if none does; depth levels below, it looks
// into the members params and _meta the same way. encoding/json keeps the
// last of such members and a gateway or log may read the first, so
// {"method":"ping","METHOD":"tools/call"} is refused, not served as either.
func foldedDuplicate(b []byte, depth int) string {
	seen, dup := map[string]bool{}, ""
	eachMember(b, func(k string, v []byte) bool {
		if f := foldKey(k); seen[f] {
			dup = k
		} else if seen[f] = true; depth > 0 && (strings.EqualFold(k, "params") || strings.EqualFold(k, "_meta")) {
			dup = foldedDuplicate(v, depth-1)
		}
		return dup == ""
	})
	return dup
}

// foldKey returns the one spelling of k shared by every key encoding/json
// matches with it (case and Unicode simple folding): each rune becomes the
// least of its folding orbit.
func foldKey(k string) string {
	return strings.Map(func(r rune) rune {
		m := r
		for g := unicode.SimpleFold(r); g != r; g = unicode.SimpleFold(g) {
			m = min(m, g)
		}
		return m
	}, k)
}

// handleMessage serves one message that decoded without error from valid
// UTF-8 and returns the encoded response, or nil when there is none.
func (sess *session) handleMessage(ctx context.Context, m *message) []byte {
	if res := sess.serve(ctx, m); res != nil {
		return encode(res)
	}
	return nil
}

// handleBatch serves a JSON array of at most maxInFlight messages, which only
// protocol version 2025-03-26 allows, one after the other, and returns the
// array of responses.
func (sess *session) handleBatch(ctx context.Context, raw []byte) []byte {
	var msgs []json.RawMessage
	if err := json.Unmarshal(raw, &msgs); err != nil {
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeParse, "parse error: %v", err)})
	}
	sess.mu.Lock()
	version := sess.version
	sess.mu.Unlock()
	if version != "2025-03-26" || len(msgs) == 0 {
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: errorf(codeInvalidRequest, "batches are only accepted, non-empty, in protocol version 2025-03-26")})
	}
	if len(msgs) > maxInFlight {
		return encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"),
			Error: errorf(codeInvalidRequest, "a batch holds at most %d messages", maxInFlight)})
	}
	var out [][]byte
	ctx = context.WithValue(ctx, batchKey{}, true)
	for _, m := range msgs { // each a JSON value without surrounding space
		r := encode(response{JSONRPC: "2.0", ID: json.RawMessage("null"), Error: errorf(codeInvalidRequest, "nested batch")})
		if m[0] != '[' {
			r = sess.handleRaw(ctx, m)
		}
		if r != nil {
			out = append(out, r)
		}
	}
	if len(out) == 0 {
		return nil
	}
	return append(append([]byte("["), bytes.Join(out, []byte(","))...), ']')
}

// validID reports whether a request id is a JSON string or an integer that
// fits in 64 bits. It runs twice for every request, so it decodes nothing.
func validID(id json.RawMessage) bool {
	id = bytes.TrimSpace(id)
	if len(id) > 0 && id[0] == '"' {
		return json.Valid(id)
	}
	_, err := strconv.ParseInt(string(id), 10, 64)
	return err == nil && json.Valid(id)
}

// serve checks one message and dispatches it. It returns the response, or nil
// for notifications, responses and cancelled requests.
func (sess *session) serve(ctx context.Context, m *message) *response {
	isRequest := m.ID != nil
	if m.Method == "" && (m.Result != nil || m.Error != nil) {
		return nil // a response from the client; we send no requests
	}
	id := m.ID
	if !isRequest || !validID(id) {
		id = json.RawMessage("null")
	}
	fail := func(e *rpcError) *response { return &response{JSONRPC: "2.0", ID: id, Error: e} }
	switch {
	case m.JSONRPC != "2.0":
		return fail(errorf(codeInvalidRequest, "invalid request: jsonrpc must be \"2.0\""))
	case isRequest && !validID(m.ID):
		return fail(errorf(codeInvalidRequest, "invalid request: id must be a string or an integer"))
	case m.Method == "":
		return fail(errorf(codeInvalidRequest, "invalid request: missing method"))
	}
	if !isRequest {
		sess.notify(m)
		return nil
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	key := string(m.ID)
	c := &call{cancel: cancel}
	sess.mu.Lock()
	if _, dup := sess.inflight[key]; dup {
		sess.mu.Unlock()
		return fail(errorf(codeInvalidRequest, "invalid request: id %s is already in flight", key))
	}
	sess.inflight[key] = c
	sess.mu.Unlock()
	result, rerr := sess.dispatch(ctx, m)
	sess.mu.Lock()
	delete(sess.inflight, key)
	cancelled := c.cancelled
	sess.mu.Unlock()
	if cancelled {
		return nil
	}
	if rerr != nil {
		return fail(rerr)
	}
	return &response{JSONRPC: "2.0", ID: id, Result: result}
}

// notify handles a notification from the client.
func (sess *session) notify(m *message) {
	switch m.Method {
	case "notifications/cancelled":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil && p.RequestID != nil {
			sess.mu.Lock()
			if c := sess.inflight[string(p.RequestID)]; c != nil {
				c.cancelled = true
				c.cancel()
			}
			sess.mu.Unlock()
		}
	}
	// notifications/initialized and unknown notifications need nothing.
}

// cancelAll cancels every call in flight (shutdown).
func (sess *session) cancelAll() {
	sess.mu.Lock()
	defer sess.mu.Unlock()
	for _, c := range sess.inflight {
		c.cancel()
	}
}

// reqMeta is what a request's params say about the protocol.
type reqMeta struct {
	modern   bool // stateless era: the version came in _meta
	version  string
	logLevel int
}

// requestMeta reads the per-request _meta of the stateless era, or falls back
// to what the session negotiated.
func (sess *session) requestMeta(m *message) (reqMeta, *rpcError) {
	meta := m.meta
	if !m.metaRead && len(m.Params) > 0 {
		var p struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return reqMeta{}, errorf(codeInvalidParams, "invalid params: %v", err)
		}
		meta = p.Meta
	}
	var v string
	if raw, ok := meta[metaVersion]; ok {
		if json.Unmarshal(raw, &v) != nil {
			return reqMeta{}, errorf(codeInvalidParams, "invalid params: _meta %q must be a string", metaVersion)
		}
	}
	if v >= modernVersion {
		if v != modernVersion {
			return reqMeta{}, unsupportedVersion(v)
		}
		// A decoded value is valid JSON without space around it: an object
		// starts with '{'.
		if caps := meta[metaCapabilities]; len(caps) == 0 || caps[0] != '{' {
			return reqMeta{}, errorf(codeInvalidParams, "invalid params: missing or invalid _meta %q", metaCapabilities)
		}
		lvl := levelOff
		var name string
		if raw, ok := meta[metaLogLevel]; ok && json.Unmarshal(raw, &name) == nil {
			if l, ok := levelByName(name); ok {
				lvl = l
			}
		}
		return reqMeta{modern: true, version: v, logLevel: lvl}, nil
	}
	sess.mu.Lock()
	defer sess.mu.Unlock()
	return reqMeta{version: sess.version, logLevel: sess.logLevel}, nil
}

// Context keys: the request's protocol facts, its session, and whether it
// came in a batch.
type (
	metaKey    struct{}
	sessionKey struct{}
	batchKey   struct{}
)

// dispatch runs one request method and returns its result.
func (sess *session) dispatch(ctx context.Context, m *message) (any, *rpcError) {
	if len(m.Params) > 0 && !bytes.HasPrefix(bytes.TrimSpace(m.Params), []byte("{")) {
		return nil, errorf(codeInvalidParams, "invalid params: params must be an object")
	}
	meta, rerr := sess.requestMeta(m)
	if rerr != nil {
		return nil, rerr
	}
	ctx = context.WithValue(context.WithValue(ctx, metaKey{}, meta), sessionKey{}, sess)
	var result map[string]any
	switch m.Method {
	case "initialize", "ping", "logging/setLevel":
		if meta.modern {
			return nil, errorf(codeMethodNotFound, "method %q is not part of protocol version %s", m.Method, modernVersion)
		}
		result, rerr = sess.legacy(ctx, m)
	case "server/discover":
		if !meta.modern {
			return nil, errorf(codeMethodNotFound, "method %q needs protocol version %s in _meta", m.Method, modernVersion)
		}
		result = map[string]any{"supportedVersions": supportedVersions, "capabilities": sess.srv.capabilities(true),
			"instructions": sess.srv.instructions(ctx), "_meta": map[string]any{metaServerInfo: sess.srv.info()}}
	case "tools/list":
		result, rerr = sess.srv.listTools(m.Params)
	case "tools/call":
		result, rerr = sess.srv.callTool(ctx, sess, m.Params)
	default:
		return nil, errorf(codeMethodNotFound, "method not found: %q", m.Method)
	}
	if rerr != nil {
		return nil, rerr
	}
	if meta.modern {
		result["resultType"] = "complete"
		if m.Method == "tools/list" || m.Method == "server/discover" {
			result["ttlMs"] = 60000
			result["cacheScope"] = "private"
		}
	}
	return result, nil
}

// legacy serves the methods of the initialize era.
func (sess *session) legacy(ctx context.Context, m *message) (map[string]any, *rpcError) {
	switch m.Method {
	case "initialize":
		if ctx.Value(batchKey{}) != nil { // it would renegotiate the session the batch runs in
			return nil, errorf(codeInvalidRequest, "invalid request: initialize must not be part of a batch")
		}
		var p struct {
			ProtocolVersion string `json:"protocolVersion"`
		}
		if err := json.Unmarshal(m.Params, &p); err != nil || p.ProtocolVersion == "" {
			return nil, errorf(codeInvalidParams, "invalid params: initialize needs protocolVersion")
		}
		v := initVersions[0]
		if slices.Contains(initVersions, p.ProtocolVersion) {
			v = p.ProtocolVersion
		}
		sess.mu.Lock()
		sess.version = v
		sess.mu.Unlock()
		return map[string]any{"protocolVersion": v, "capabilities": sess.srv.capabilities(false),
			"serverInfo": sess.srv.info(), "instructions": sess.srv.instructions(ctx)}, nil
	case "logging/setLevel":
		var p struct {
			Level string `json:"level"`
		}
		_ = json.Unmarshal(m.Params, &p)
		lvl, ok := levelByName(p.Level)
		if !ok {
			return nil, errorf(codeInvalidParams, "invalid params: unknown log level %q", p.Level)
		}
		sess.mu.Lock()
		sess.logLevel = lvl
		sess.mu.Unlock()
	}
	return map[string]any{}, nil
}

// Log levels of notifications/message, in syslog order.
var levelNames = []string{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// levelOff is above every level: nothing is sent.
const levelOff = 99

// levelByName returns the rank of a syslog level name.
func levelByName(name string) (int, bool) {
	i := slices.Index(levelNames, name)
	return i, i >= 0
}

// log sends a notifications/message to the client when the request's level
// allows it. Diagnostics for the operator go to stderr instead.
func (sess *session) log(ctx context.Context, level, text string) {
	meta, ok := ctx.Value(metaKey{}).(reqMeta)
	lvl, _ := levelByName(level)
	if !ok || lvl < meta.logLevel {
		return
	}
	sess.send(encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/message",
		"params": map[string]any{"level": level, "logger": "giteamcp", "data": text}}))
}

// unsupportedVersion is the error for a protocol version the server lacks.
func unsupportedVersion(v string) *rpcError {
	return &rpcError{Code: codeUnsupportedVersion, Message: fmt.Sprintf("unsupported protocol version %q", v),
		Data: map[string]any{"supported": supportedVersions, "requested": v}}
}
