package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestTranscripts replays each testdata/rpc/*.in against the built server
// over real pipes, one client line at a time, and compares the transcript
// (client lines "> ", server lines "< ") with the .golden file. A line
// "#! start ENV..." starts a fresh server with that environment, in which
// {{url}} is the test Gitea's URL and {{token:alice}} a user's token (the
// transcript then needs the real Gitea); comments are kept.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/rpc/*.in")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/rpc")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var g *giteaInstance
			if bytes.Contains(in, []byte("{{")) {
				g = needGitea(t)
			}
			var c *client
			var got bytes.Buffer
			for _, line := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
				if env, ok := strings.CutPrefix(line, "#! start"); ok {
					if c != nil {
						c.close()
					}
					c = startClient(t, strings.Fields(expandTranscript(env, g))...)
				}
				if strings.HasPrefix(line, "#") {
					got.WriteString(line + "\n")
					continue
				}
				if c == nil {
					c = startClient(t)
				}
				got.WriteString("> " + line + "\n")
				c.send(line)
				for range expectedReplies(line) {
					got.WriteString("< " + string(c.recv()) + "\n")
				}
			}
			golden := strings.TrimSuffix(file, ".in") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestTranscripts -update)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// expandTranscript fills the placeholders of a "#! start" line from the test
// Gitea g.
func expandTranscript(env string, g *giteaInstance) string {
	if g == nil {
		return env
	}
	env = strings.ReplaceAll(env, "{{url}}", g.URL)
	for login, tok := range g.Tokens {
		env = strings.ReplaceAll(env, "{{token:"+login+"}}", tok)
	}
	return env
}

// expectedReplies is how many lines the server answers to a client line: one
// for a request, a malformed line or a batch; none for a notification.
func expectedReplies(line string) int {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return 1
	}
	if _, ok := m["id"]; ok || m["jsonrpc"] != "2.0" || m["method"] == nil {
		return 1
	}
	return 0
}

// TestConcurrentAndCancelled shows that a slow Gitea call blocks neither ping
// nor other calls, and that notifications/cancelled stops the Gitea request
// in flight and suppresses its response. The hanging server is fault
// injection: a real Gitea cannot be made to hang on demand.
func TestConcurrentAndCancelled(t *testing.T) {
	t.Parallel()
	arrived, cancelled := make(chan struct{}, 1), make(chan struct{}, 1)
	ts := newScriptedGitea(t).user("tester")
	ts.answer("GET", "/repos/alice/slow", ts.fakeHold(arrived, cancelled))
	c := startClient(t, "GITEA_URL="+ts.URL, "GITEA_TOKEN="+fakeToken)
	c.initialize("2025-11-25")
	c.send(`{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"repoGet","arguments":{"owner":"alice","repo":"slow"}}}`)
	start := time.Now()
	if r := c.call("ping", nil); r.Error != nil || string(r.Result) != "{}" {
		t.Fatalf("ping while a call is in flight: %+v", r)
	}
	if _, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "userGetCurrent", "arguments": map[string]any{}}); isErr {
		t.Fatal("a second call failed while the first is in flight")
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("ping and a call took %v behind a slow call", d)
	}
	awaitSignals(t, arrived, 1, "the slow request at Gitea") // a cancel before it is sent would leave nothing to cancel there
	c.send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"test"}}`)
	select {
	case <-cancelled:
	case <-time.After(patience):
		t.Fatal("the Gitea request was not cancelled")
	}
	c.call("ping", nil)
	if strings.Contains(c.transcript.String(), `"id":"slow"`) {
		t.Errorf("the cancelled request got a response:\n%s", c.transcript.String())
	}
}
