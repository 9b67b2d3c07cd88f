package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// loadCall is one request of the load test and what its answer must say.
type loadCall struct {
	tool   string
	args   map[string]any
	path   string // envelope request.path
	status string
	field  string // dotted path into the envelope, checked when want is set
	want   string
}

// TestE2ELoad sends 1,000 calls over stdio, 32 in flight, to the real Gitea,
// mixing repositories, paths and 404s: every call gets exactly one answer,
// with its own id, request path, status and data. The server runs in this
// process over OS pipes, so that go test -race sees it.
func TestE2ELoad(t *testing.T) {
	const calls, inFlight = 1000, 32
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	env := map[string]string{"GITEA_URL": g.URL, "GITEA_TOKEN": g.Tokens["alice"],
		"GITEA_MCP_TOOLS": "repoGet,repoGetContents,issueGetIssue,userGet"}
	s, err := newServer(func(name string) string { return env[name] })
	if err != nil {
		t.Fatal(err)
	}
	inR, inW, _ := os.Pipe()
	outR, outW, _ := os.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- s.serveStdio(context.Background(), inR, outW)
		outW.Close()
	}()
	kinds := []func(i int) loadCall{
		func(int) loadCall {
			return loadCall{"repoGet", map[string]any{"owner": owner, "repo": repo}, "/repos/" + g.Repo, "200", "data.full_name", g.Repo}
		},
		func(i int) loadCall {
			name := fmt.Sprintf("missing-%d", i)
			return loadCall{"repoGet", map[string]any{"owner": owner, "repo": name}, "/repos/" + owner + "/" + name, "404", "error.kind", "not_found"}
		},
		func(int) loadCall {
			return loadCall{"repoGetContents", map[string]any{"owner": owner, "repo": repo, "filepath": fixtureGuidePath},
				"/repos/" + g.Repo + "/contents/" + fixtureGuidePath, "200", "data.path", fixtureGuidePath}
		},
		func(i int) loadCall {
			n := g.Issues[i%2]
			return loadCall{"issueGetIssue", map[string]any{"owner": owner, "repo": repo, "index": n},
				fmt.Sprintf("/repos/%s/issues/%d", g.Repo, n), "200", "data.number", fmt.Sprint(n)}
		},
		func(int) loadCall {
			return loadCall{"gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + g.Repo + "/branches/feature/x"},
				"/repos/" + g.Repo + "/branches/feature/x", "200", "data.commit.id", g.FeatureSHA}
		},
		func(i int) loadCall {
			login := giteaLogins[i%len(giteaLogins)]
			return loadCall{"userGet", map[string]any{"username": login}, "/users/" + login, "200", "data.login", login}
		},
		func(i int) loadCall {
			name := fmt.Sprintf("nobody-%d", i)
			return loadCall{"userGet", map[string]any{"username": name}, "/users/" + name, "404", "error.kind", "not_found"}
		},
	}
	want := make([]loadCall, calls)
	for i := range want {
		want[i] = kinds[i%len(kinds)](i)
	}
	slots := make(chan struct{}, inFlight)
	go func() {
		w := bufio.NewWriter(inW)
		fmt.Fprintln(w, `{"jsonrpc":"2.0","id":-1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"load","version":"1"}}}`)
		for i, c := range want {
			slots <- struct{}{}
			w.Write(encode(map[string]any{"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": map[string]any{"name": c.tool, "arguments": c.args}}))
			w.WriteString("\n")
			w.Flush()
		}
		inW.Close()
	}()
	start := time.Now()
	seen := make([]bool, calls)
	answers, maxLine := 0, 0
	r := bufio.NewReaderSize(outR, 1<<20)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break
		}
		maxLine = max(maxLine, len(line))
		if strings.Contains(string(line), g.Tokens["alice"]) {
			t.Fatal("the token appears in an answer")
		}
		var reply rpcReply
		if err := json.Unmarshal(line, &reply); err != nil {
			t.Fatalf("bad line: %v: %.200s", err, line)
		}
		var id int
		if json.Unmarshal(reply.ID, &id) != nil || id == -1 {
			continue // initialize
		}
		<-slots
		answers++
		if id < 0 || id >= calls || seen[id] {
			t.Fatalf("answer with unknown or repeated id %s", reply.ID)
		}
		seen[id] = true
		var res struct {
			Content []struct{ Text string }
		}
		if reply.Error != nil || json.Unmarshal(reply.Result, &res) != nil || len(res.Content) != 1 {
			t.Fatalf("call %d: bad answer %.300s", id, line)
		}
		var env map[string]any
		d := json.NewDecoder(strings.NewReader(res.Content[0].Text))
		d.UseNumber()
		d.Decode(&env)
		c := want[id]
		if got := [3]string{str(get(env, "request.path")), str(get(env, "status")), str(get(env, c.field))}; got != [3]string{c.path, c.status, c.want} {
			t.Errorf("call %d (%s %v): got path, status, %s %q, want %q", id, c.tool, c.args, c.field, got, [3]string{c.path, c.status, c.want})
		}
	}
	took := time.Since(start)
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	t.Logf("%d calls, %d in flight: %v, %.0f calls/s; longest answer %d bytes", answers, inFlight, took.Round(time.Millisecond), float64(answers)/took.Seconds(), maxLine)
	if answers != calls {
		t.Errorf("%d answers to %d calls", answers, calls)
	}
}
