package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// TestStdioBadInput sends lines a broken or hostile client could send, each
// answered by one line, and a ping after each to show the server still
// serves.
func TestStdioBadInput(t *testing.T) {
	t.Parallel()
	c := startClient(t)
	c.initialize("2025-11-25")
	deep := strings.Repeat("[", 9000) + strings.Repeat("]", 9000)
	for _, tc := range []struct{ name, line, want string }{
		{"10 MB line", strings.Repeat("x", 10<<20),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message larger than 4194304 bytes"}}`},
		{"invalid UTF-8 in a string", "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":{\"x\":\"\xff\"}}",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid UTF-8"}}`},
		{"invalid UTF-8 in the id", "{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\x28\",\"method\":\"ping\"}",
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: the message is not valid UTF-8"}}`},
		{"100,000 nested arrays", strings.Repeat("[", 100000),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character '[' exceeded max depth"}}`},
		{"100,000 nested objects", strings.Repeat(`{"a":`, 100000),
			`{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: invalid character '{' exceeded max depth"}}`},
		{"9,000 nested arrays in arguments", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"gitea_find_operations","arguments":{"query":"x","deep":` + deep + `}}}`,
			`{"jsonrpc":"2.0","id":2,"result":{"content":[{"text":"{\"identity\":{\"login\":null,\"mode\":\"token\",\"sudo\":null},\"request\":{\"tool\":\"gitea_find_operations\"},\"error\":{\"kind\":\"invalid_arguments\",\"message\":\"deep: unknown property\"}}","type":"text"}],"isError":true}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.line)
			if diff := cmp.Diff(tc.want, string(c.recv())); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if r := c.call("ping", nil); r.Error != nil {
				t.Fatal(r.Error.Message)
			}
		})
	}
}

// TestStdioBatchBound shows that a batch holds at most maxInFlight messages.
func TestStdioBatchBound(t *testing.T) {
	t.Parallel()
	c := startClient(t)
	c.initialize("2025-03-26")
	c.send("[" + strings.Repeat(`{"jsonrpc":"2.0","method":"x"},`, maxInFlight) + `{"jsonrpc":"2.0","method":"x"}]`)
	want := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"a batch holds at most 64 messages"}}`
	if diff := cmp.Diff(want, string(c.recv())); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

// TestStdioEndMidLine ends the input in the middle of a line: a whole
// message without its newline is served, a cut one is a parse error, and
// the server exits cleanly.
func TestStdioEndMidLine(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ last, want string }{
		{`{"jsonrpc":"2.0","id":7,"method":"ping"}`, `{"jsonrpc":"2.0","id":7,"result":{}}`},
		{`{"jsonrpc":"2.0","id":7,"meth`, `{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error: unexpected end of JSON input"}}`},
	} {
		cmd := exec.Command(serverBinary(t))
		cmd.Stdin = strings.NewReader(tc.last)
		out, err := cmd.Output()
		if diff := cmp.Diff(tc.want+"\n", string(out)); diff != "" || err != nil {
			t.Errorf("%s: exit %v; mismatch (-want +got):\n%s", tc.last, err, diff)
		}
	}
}

// TestStdioBusyAndCancelAll fills every slot with a call that hangs: one
// more request is refused at once while a cancellation still gets through;
// cancelling every call stops every Gitea request and answers none of them.
func TestStdioBusyAndCancelAll(t *testing.T) {
	t.Parallel()
	arrived, cancelled := make(chan struct{}, 2*maxInFlight), make(chan struct{}, 2*maxInFlight)
	h := newScriptedGitea(t).user("alice")
	h.otherwise(h.fakeHold(arrived, cancelled))
	c := startClient(t, "GITEA_URL="+h.URL, "GITEA_TOKEN="+fakeToken)
	c.initialize("2025-11-25")
	call := func(id string) {
		c.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":{"name":"repoGet","arguments":{"owner":"alice","repo":"` + id + `"}}}`)
	}
	for i := range maxInFlight {
		call(fmt.Sprint("call-", i))
	}
	for n, deadline := 0, time.After(patience); n < maxInFlight; {
		select {
		case line := <-c.lines: // refused: the slot of an earlier message was not free yet
			var r rpcReply
			json.Unmarshal(line, &r)
			id, _ := strconv.Unquote(string(r.ID))
			if r.Error == nil || !strings.HasPrefix(id, "call-") {
				t.Fatalf("unexpected answer %s", line)
			}
			call(id)
		case <-arrived:
			n++
		case <-deadline:
			t.Fatalf("%d of %d requests reached Gitea", n, maxInFlight)
		}
	}
	c.send(`{"jsonrpc":"2.0","id":"one-more","method":"ping"}`)
	want := `{"jsonrpc":"2.0","id":"one-more","error":{"code":-32603,"message":"server busy: 64 messages in flight; send it again once one is answered"}}`
	if diff := cmp.Diff(want, string(c.recv())); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
	for i := range maxInFlight {
		c.send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"call-%d"}}`, i))
	}
	awaitSignals(t, cancelled, maxInFlight, "Gitea requests cancelled")
	// Gitea sees a call cancelled before the call returns and frees its slot:
	// under load the first pings may still find every slot taken.
	for deadline := time.Now().Add(patience); ; time.Sleep(10 * time.Millisecond) {
		r := c.call("ping", nil)
		if r.Error == nil {
			break
		}
		if !strings.HasPrefix(r.Error.Message, "server busy") || time.Now().After(deadline) {
			t.Fatal(r.Error.Message)
		}
	}
	for line := range strings.Lines(c.transcript.String()) {
		if strings.Contains(line, `"id":"call-`) && !strings.Contains(line, "server busy") {
			t.Errorf("a cancelled call was answered: %s", line)
		}
	}
}

// TestStdioSignals sends SIGTERM or SIGINT while writes hang in Gitea: every
// call is cancelled and answered as such, the audit log has every attempt
// with an intact chain, and the server exits at once.
func TestStdioSignals(t *testing.T) {
	t.Parallel()
	const calls = 8
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			arrived := make(chan struct{}, calls)
			h := newScriptedGitea(t).user("alice")
			h.otherwise(h.fakeHold(arrived, nil))
			audit := filepath.Join(t.TempDir(), "audit.log")
			c := startClient(t, "GITEA_URL="+h.URL, "GITEA_TOKEN="+fakeToken, "GITEA_MCP_PROFILE=gitea-owner",
				"GITEA_MCP_TOOLS=issueCreateIssue", "GITEA_AUDIT_LOG="+audit, "GITEA_AUDIT_KEY="+auditTestKey)
			c.initialize("2025-11-25")
			for i := range calls {
				c.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"issueCreateIssue","arguments":{"owner":"alice","repo":"demo","body":{"title":"t%d"}}}}`, 100+i, i))
			}
			awaitSignals(t, arrived, calls, "requests reached Gitea")
			start := time.Now()
			c.cmd.Process.Signal(sig)
			kinds := map[string]int{}
			for line := range c.lines {
				var r rpcReply
				var res struct {
					Content []struct{ Text string }
				}
				json.Unmarshal(line, &r)
				json.Unmarshal(r.Result, &res)
				for _, ct := range res.Content {
					var env envelope
					if json.Unmarshal([]byte(ct.Text), &env) != nil || env.Error == nil {
						t.Errorf("not an error result: %s", ct.Text)
						continue
					}
					kinds[env.Error.Kind+": "+env.Error.Message]++
				}
			}
			err := c.cmd.Wait()
			took := time.Since(start)
			t.Logf("%v: exited (%v) %v after the signal", sig, err, took.Round(time.Millisecond))
			if took > 5*time.Second { // a hang guard, not a timing assertion
				t.Errorf("exit took %v", took)
			}
			want := map[string]int{"cancelled: the request was cancelled; the POST may have reached Gitea: check its effect before repeating it": calls}
			if diff := cmp.Diff(want, kinds); diff != "" {
				t.Errorf("answers: mismatch (-want +got):\n%s", diff)
			}
			f, err := os.Open(audit)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			head, err := verifyAudit(f, auditKeyBytes, nil)
			if head.Lines != 2*calls || err != nil { // each: allowed before it is sent, answered (cancelled) after
				t.Errorf("audit log: %v, %v; want %d lines and an intact chain", head, err, 2*calls)
			}
			if stderr := c.stderr.String(); !strings.Contains(stderr, "audit log head "+head.String()) || strings.Contains(stderr, auditTestKey) {
				t.Errorf("standard error does not report the head %v (or shows the key):\n%s", head, stderr)
			}
		})
	}
}

// TestStdioClientStopsReading sends many requests without reading any
// answer: the server stops reading too once its writes block, and its
// memory stays bounded; once the client reads, every request is answered.
func TestStdioClientStopsReading(t *testing.T) {
	t.Parallel()
	const n = 3000
	cmd := exec.Command(serverBinary(t))
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	var written atomic.Int32
	go func() {
		w := bufio.NewWriter(in)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		for i := 1; i <= n; i++ {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"gitea_find_operations","arguments":{"query":"pull request merge review","limit":20}}}`+"\n", i)
			w.Flush()
			written.Add(1)
		}
		in.Close()
	}()
	first := make([]byte, 1) // the server is up and answering
	if _, err := io.ReadFull(out, first); err != nil {
		t.Fatal(err)
	}
	for last, still := int32(-1), 0; still < 3; time.Sleep(100 * time.Millisecond) { // no write for 300 ms
		if n := written.Load(); n == last {
			still++
		} else {
			last, still = n, 0
		}
	}
	blocked := procStatus(t, cmd.Process.Pid, "VmHWM")
	t.Logf("not reading: %d of %d requests written before the server stopped reading; peak RSS %d kB", written.Load(), n, blocked)
	if written.Load() == n {
		t.Fatal("the server read every request while no answer was read")
	}
	if blocked > 40<<10 {
		t.Errorf("peak RSS %d kB while the client does not read, want under 40 MB", blocked)
	}
	answered, busy := map[int]bool{}, 0
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(first), out), 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		var reply struct {
			ID    int
			Error *rpcError
		}
		if json.Unmarshal(line, &reply) != nil || answered[reply.ID] || !utf8.Valid(line) {
			t.Fatalf("bad or repeated answer: %.200s", line)
		}
		answered[reply.ID] = true
		if reply.Error != nil {
			busy++
		}
	}
	cmd.Wait()
	t.Logf("answered %d of %d (%d busy)", len(answered)-1, n, busy)
	if len(answered) != n+1 {
		t.Errorf("answered %d of %d requests", len(answered)-1, n)
	}
}

// FuzzRPCLine serves random lines, in a fresh session that accepts batches
// (protocol version 2025-03-26) or not: never a panic, and the answer is nil
// or one line of valid JSON in valid UTF-8.
func FuzzRPCLine(f *testing.F) {
	s, err := newServer(func(name string) string { return map[string]string{"GITEA_MCP_TOOLS": "repoGet"}[name] })
	if err != nil {
		f.Fatal(err)
	}
	if err := s.wait(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte, batches bool) {
		sess := newSession(s, func([]byte) {})
		if batches {
			sess.version = "2025-03-26"
		}
		out := sess.handleRaw(context.Background(), line)
		if out != nil && (bytes.ContainsAny(out, "\r\n") || !json.Valid(out) || !utf8.Valid(out)) {
			t.Fatalf("handleRaw(%q) = %q", line, out)
		}
	})
}
