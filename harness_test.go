package main

// The harness of the tests: the server in this process (testServer,
// fakeCall), MCP over pipes to the server's own program (startClient, the
// client), and MCP over HTTP (newHTTPTest, mcpSend, httpDo,
// httpSessionID); the fake Gitea they talk to is built in
// fakegitea_test.go, the real one in giteaserver_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testServer builds a server from the given settings and waits for its catalog.
func testServer(tb testing.TB, env map[string]string) *server {
	tb.Helper()
	s, err := newServer(func(k string) string { return env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	if err := s.wait(); err != nil {
		tb.Fatal(err)
	}
	return s
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

var (
	serverOnce sync.Once
	serverPath string
	serverErr  error
)

// serverName is the name under which this test binary runs as the server
// itself (TestMain calls main): serverBinary links it under that name.
const serverName = "giteamcp"

// serverBinary returns the path of the server's program: a link named
// serverName to this test binary, which then runs main instead of the tests,
// so that no second build is needed. It is made once per test run.
func serverBinary(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		exe, err := os.Executable()
		if err != nil {
			serverErr = err
			return
		}
		dir, err := os.MkdirTemp("", "giteamcp-bin-")
		if err != nil {
			serverErr = err
			return
		}
		serverPath = filepath.Join(dir, serverName)
		serverErr = os.Symlink(exe, serverPath)
	})
	if serverErr != nil {
		tb.Fatal(serverErr)
	}
	return serverPath
}

// removeServerBinary deletes the link made by serverBinary.
func removeServerBinary() {
	if serverPath != "" {
		os.RemoveAll(filepath.Dir(serverPath))
	}
}

// routes are the tool calls that reach one operation by each door: its
// generated tool, gitea_call_operation, and gitea_api_request with method
// and path (and the body).
func routes(op, method, path string, args map[string]any) []struct {
	name string
	tool string
	args map[string]any
} {
	raw := map[string]any{"method": method, "path": path}
	if body, ok := args["body"]; ok {
		raw["body"] = body
	}
	return []struct {
		name string
		tool string
		args map[string]any
	}{
		{"generated", op, args},
		{"call", "gitea_call_operation", map[string]any{"operation": op, "arguments": args}},
		{"raw", "gitea_api_request", raw},
	}
}

// client is an MCP client talking to the server's program (serverBinary)
// over real pipes.
type client struct {
	tb     testing.TB
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan []byte
	stderr *lockedBuffer
	nextID int
	// transcript is everything the server printed on stdout and stderr.
	transcript *lockedBuffer
}

// lockedBuffer is a bytes.Buffer safe for concurrent use.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// startClient starts the server with exactly the given environment (plus
// PATH and HOME) and returns a client connected to its stdio.
func startClient(tb testing.TB, env ...string) *client {
	tb.Helper()
	return startClientIn(tb, "", env...)
}

// startClientIn is startClient with the server's working directory set.
func startClientIn(tb testing.TB, dir string, env ...string) *client {
	tb.Helper()
	return startProgram(tb, serverBinary(tb), dir, env...)
}

// startProgram is startClientIn with the server's program given.
func startProgram(tb testing.TB, program, dir string, env ...string) *client {
	tb.Helper()
	cmd := exec.Command(program)
	cmd.Dir = dir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	in, err := cmd.StdinPipe()
	if err != nil {
		tb.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		tb.Fatal(err)
	}
	c := &client{tb: tb, cmd: cmd, in: in, lines: make(chan []byte, 1024), stderr: &lockedBuffer{}, transcript: &lockedBuffer{}}
	cmd.Stderr = io.MultiWriter(c.stderr, c.transcript)
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() {
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				c.transcript.Write(line)
				c.lines <- bytes.TrimSuffix(line, []byte("\n"))
			}
			if err != nil {
				close(c.lines)
				return
			}
		}
	}()
	tb.Cleanup(c.close)
	return c
}

// send writes one raw line to the server.
func (c *client) send(line string) {
	c.tb.Helper()
	if _, err := io.WriteString(c.in, line+"\n"); err != nil {
		c.tb.Fatalf("write to server: %v", err)
	}
}

// recv returns the next line the server printed.
func (c *client) recv() []byte {
	c.tb.Helper()
	select {
	case line, ok := <-c.lines:
		if !ok {
			c.tb.Fatalf("server closed stdout; stderr:\n%s", c.stderr.String())
		}
		return line
	case <-time.After(patience):
		c.tb.Fatalf("no answer from server in %v; stderr:\n%s", patience, c.stderr.String())
	}
	return nil
}

// rpcReply is a decoded JSON-RPC response.
type rpcReply struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// call sends a request and waits for its response, skipping notifications.
func (c *client) call(method string, params any) rpcReply {
	c.tb.Helper()
	c.nextID++
	id := c.nextID
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	c.send(string(encode(msg)))
	for {
		var r rpcReply
		line := c.recv()
		if err := json.Unmarshal(line, &r); err != nil {
			c.tb.Fatalf("bad line from server: %v: %s", err, line)
		}
		if string(r.ID) == fmt.Sprint(id) {
			return r
		}
	}
}

// initialize performs the initialize handshake.
func (c *client) initialize(version string) {
	c.tb.Helper()
	r := c.call("initialize", map[string]any{"protocolVersion": version, "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "test", "version": "1"}})
	if r.Error != nil {
		c.tb.Fatalf("initialize: %v", r.Error.Message)
	}
	c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// callTool calls a tool and returns the decoded JSON of its text content and
// whether it is an error result.
func (c *client) callTool(name string, args any) (map[string]any, bool) {
	c.tb.Helper()
	r := c.call("tools/call", map[string]any{"name": name, "arguments": args})
	if r.Error != nil {
		c.tb.Fatalf("tools/call %s: JSON-RPC error %d %s", name, r.Error.Code, r.Error.Message)
	}
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if err := json.Unmarshal(r.Result, &res); err != nil || len(res.Content) != 1 {
		c.tb.Fatalf("tools/call %s: bad result %s", name, r.Result)
	}
	var v map[string]any
	d := json.NewDecoder(strings.NewReader(res.Content[0].Text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		c.tb.Fatalf("tools/call %s: content is not JSON: %v: %s", name, err, res.Content[0].Text)
	}
	return v, res.IsError
}

// close ends the server by closing its stdin and waits for it to exit.
func (c *client) close() {
	c.in.Close()
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		c.cmd.Process.Kill()
		<-done
	}
}

// httpProgram is the server's program serving MCP over HTTP in a process of
// its own.
type httpProgram struct {
	cmd      *exec.Cmd
	base     string        // http://host:port, without /mcp
	log      *lockedBuffer // what it printed on stdout and stderr
	done     chan struct{} // closed once it exited and its output is copied whole
	stopOnce sync.Once
}

// startHTTPProgram starts the server's program with -http addr and exactly
// the environment env (plus PATH and HOME), and waits for the line saying it
// serves (up to 30 s). It stops with the test, or earlier by stop.
func startHTTPProgram(tb testing.TB, addr string, env ...string) *httpProgram {
	tb.Helper()
	p := &httpProgram{cmd: exec.Command(serverBinary(tb), "-http", addr), log: &lockedBuffer{}, done: make(chan struct{})}
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	r, w, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = w, w
	err = p.cmd.Start()
	w.Close()
	if err != nil {
		r.Close()
		tb.Fatal(err)
	}
	serving := make(chan string, 1)
	go func() {
		defer close(p.done)
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			p.log.Write(append(sc.Bytes(), '\n'))
			if u, ok := strings.CutPrefix(sc.Text(), "giteamcp: serving MCP on "); ok && len(serving) == 0 {
				serving <- strings.TrimSuffix(u, "/mcp")
			}
		}
		p.cmd.Wait()
	}()
	tb.Cleanup(p.stop)
	select {
	case p.base = <-serving:
		return p
	case <-p.done:
		tb.Fatalf("the server exited: %s", p.log.String())
	case <-time.After(patience):
		tb.Fatalf("the server did not serve in %v: %s", patience, p.log.String())
	}
	return nil
}

// stop ends the server with SIGTERM (killed after 10 s) and waits until it
// has exited and its output is copied whole.
func (p *httpProgram) stop() {
	p.stopOnce.Do(func() {
		p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
			p.cmd.Process.Kill()
			<-p.done
		}
	})
}

// newHTTPTest starts the HTTP transport of a server without GITEA_URL (tool
// calls give isError results) behind an httptest server.
func newHTTPTest(tb testing.TB, env map[string]string) (*httptest.Server, *httpTransport) {
	tb.Helper()
	t := newTestTransport(tb, env)
	ts := httptest.NewServer(t)
	tb.Cleanup(ts.Close)
	return ts, t
}

// newTestTransport builds, in this process, the HTTP transport of a server
// configured by env.
func newTestTransport(tb testing.TB, env map[string]string) *httpTransport {
	tb.Helper()
	s, err := newServer(func(k string) string { return env[k] })
	if err != nil {
		tb.Fatal(err)
	}
	c, err := loadHTTPConfig(s.cfg)
	if err != nil {
		tb.Fatal(err)
	}
	return s.newHTTPTransport(c)
}

// mcpSend sends one request to base+"/mcp" with c (http.DefaultClient if
// nil): the one MCP-over-HTTP request of the tests, safe for concurrent use.
// POST defaults to Accept of JSON and SSE and a JSON Content-Type; kv are
// header name-value pairs that replace those defaults (a repeated name adds
// a value, "" sends none). The body of a GET answered 200 (a stream) is left
// unread.
func mcpSend(c *http.Client, base, method string, kv []string, body string) (*http.Response, []byte, error) {
	req, err := http.NewRequest(method, base+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Content-Type", "application/json")
	seen := map[string]bool{}
	for i := 0; i+1 < len(kv); i += 2 {
		k := http.CanonicalHeaderKey(kv[i])
		if !seen[k] {
			req.Header.Del(k)
			seen[k] = true
		}
		if kv[i+1] != "" {
			req.Header.Add(k, kv[i+1])
		}
	}
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	if method == http.MethodGet && resp.StatusCode == http.StatusOK {
		return resp, nil, nil
	}
	b, err := io.ReadAll(resp.Body)
	return resp, b, err
}

// httpDo is mcpSend with the default client that fails the test on an error.
func httpDo(tb testing.TB, base, method string, kv []string, body string) (*http.Response, []byte) {
	tb.Helper()
	resp, b, err := mcpSend(nil, base, method, kv, body)
	if err != nil {
		tb.Fatalf("%s: %v", method, err)
	}
	return resp, b
}

// bearer is the headers of a request with token in session sid ("": none).
func bearer(token, sid string) []string {
	return []string{"Authorization", "Bearer " + token, hdrSession, sid}
}

// initBody is an initialize request for protocol version v.
func initBody(v string) string {
	return `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + v +
		`","capabilities":{},"clientInfo":{"name":"test","version":"1"}}}`
}

// httpSessionID initializes a session with protocol version v, sending the
// headers kv (name-value pairs) with each request, and returns its id.
func httpSessionID(tb testing.TB, base, v string, kv ...string) string {
	tb.Helper()
	resp, body := httpDo(tb, base, http.MethodPost, kv, initBody(v))
	sid := resp.Header.Get(hdrSession)
	if resp.StatusCode != http.StatusOK || sid == "" {
		tb.Fatalf("initialize: %s %s", resp.Status, body)
	}
	httpDo(tb, base, http.MethodPost, append(kv, hdrSession, sid), `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return sid
}

// modernBody is a 2026-07-28 request with id 1: params carry the _meta
// triple with version v, plus members (e.g. `"name":"x",`).
func modernBody(v, method, members string) string {
	return `{"jsonrpc":"2.0","id":1,"method":"` + method + `","params":{` + members + `"_meta":{"` + metaVersion + `":"` + v +
		`","` + metaCapabilities + `":{},"io.modelcontextprotocol/clientInfo":{"name":"test","version":"1"}}}}`
}

// patience bounds how long a test waits for a signal or a state: it stops
// a hang, under any load (a mutation run, the end-to-end suite alongside),
// and is never a timed assertion.
const patience = time.Minute

// awaitSignals waits up to patience for n signals on c.
func awaitSignals(tb testing.TB, c <-chan struct{}, n int, what string) {
	tb.Helper()
	deadline := time.After(patience)
	for i := range n {
		select {
		case <-c:
		case <-deadline:
			tb.Fatalf("%d of %d %s", i, n, what)
		}
	}
}

// waitFor polls cond for up to patience, for a state no signal reports.
func waitFor(cond func() bool) bool {
	for deadline := time.Now().Add(patience); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return false
}
