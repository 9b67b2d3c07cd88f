package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

var (
	serverOnce sync.Once
	serverPath string
	serverErr  error
)

// serverBinary builds the server once per test run and returns its path.
func serverBinary(tb testing.TB) string {
	tb.Helper()
	serverOnce.Do(func() {
		dir, err := os.MkdirTemp("", "giteamcp-bin-")
		if err != nil {
			serverErr = err
			return
		}
		serverPath = filepath.Join(dir, "giteamcp")
		out, err := exec.Command("go", "build", "-o", serverPath, ".").CombinedOutput()
		if err != nil {
			serverErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if serverErr != nil {
		tb.Fatal(serverErr)
	}
	return serverPath
}

// removeServerBinary deletes the binary built by serverBinary.
func removeServerBinary() {
	if serverPath != "" {
		os.RemoveAll(filepath.Dir(serverPath))
	}
}

// client is an MCP client talking to the built server over real pipes.
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
	cmd := exec.Command(serverBinary(tb))
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
	case <-time.After(30 * time.Second):
		c.tb.Fatalf("no answer from server in 30s; stderr:\n%s", c.stderr.String())
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

// BenchmarkStartup measures process start to the answers of initialize and
// tools/list over real pipes.
func BenchmarkStartup(b *testing.B) {
	serverBinary(b)
	for b.Loop() {
		c := startClient(b)
		c.initialize("2025-11-25")
		if r := c.call("tools/list", nil); r.Error != nil {
			b.Fatal(r.Error.Message)
		}
		c.close()
	}
}

// TestStartupErrors runs the binary with malformed settings: one line on
// stderr, a non-zero exit, and nothing on stdout.
func TestStartupErrors(t *testing.T) {
	conflicted := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(conflicted, []byte("{\n<<<<<<< HEAD\n\"profiles\": []\n=======\n>>>>>>> other\n}\n"), 0o600)
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GITEA_MCP_CONFIG=" + conflicted}, "giteamcp: infra_stop: conflict marker in " + conflicted + " at line 2; " + infraRecovery},
		{[]string{"GITEA_URL=gitea.example.com"}, `giteamcp: GITEA_URL: want http(s)://host[:port][/path]`},
		{[]string{"GITEA_OPENAPI=/no/such/file"}, "giteamcp: GITEA_OPENAPI: open /no/such/file: no such file or directory"},
		{[]string{"GITEA_MCP_TOOLS=nothingMatches"}, `giteamcp: GITEA_MCP_TOOLS: "nothingMatches" matches no operation`},
	} {
		cmd := exec.Command(serverBinary(t))
		cmd.Env = tc.env
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		cmd.Stdin = strings.NewReader("")
		err := cmd.Run()
		if err == nil || stdout.Len() > 0 || stderr.String() != tc.want+"\n" {
			t.Errorf("%v: exit %v, stdout %q, stderr %q; want a failure with %q", tc.env, err, stdout.String(), stderr.String(), tc.want)
		}
	}
}

// TestInfraStopOnMutation runs the server from a checkout of itself (go run
// . does) that then enters an unfinished merge: mutations fail with kind
// infra_stop before anything is sent; reads still work up to Gitea.
func TestInfraStopOnMutation(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module giteamcp\n"), 0o600)
	os.Mkdir(filepath.Join(dir, ".git"), 0o700)
	c := startClientIn(t, dir, "GITEA_URL=http://127.0.0.1:9", "GITEA_TOKEN=t", "GITEA_MCP_PROFILE=gitea-owner")
	c.initialize("2025-11-25")
	c.call("tools/list", nil) // waits for the start-up checks
	os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte("x\n"), 0o600)
	res, isErr := c.callTool("gitea_create_issue_comment", map[string]any{"owner": "a", "repo": "b", "index": 1, "body": "hi"})
	if !isErr || fmt.Sprint(get(res, "error.kind")) != "infra_stop" || !strings.Contains(fmt.Sprint(get(res, "error.message")), "git merge --abort") {
		t.Errorf("mutation during a merge: %v", res)
	}
	// At start the same state stops the server.
	cmd := exec.Command(serverBinary(t))
	cmd.Dir, cmd.Env, cmd.Stdin = dir, []string{"GITEA_URL=http://127.0.0.1:9"}, strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.HasPrefix(string(out), "giteamcp: infra_stop: unfinished merge or rebase") {
		t.Errorf("start during a merge: %v: %s", err, out)
	}
}
