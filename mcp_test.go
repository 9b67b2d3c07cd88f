package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkStartup measures process start to the answers of initialize and
// tools/list over real pipes, of the program go build makes (not this test
// binary, whose tests' own start-up would be measured too).
func BenchmarkStartup(b *testing.B) {
	program := filepath.Join(b.TempDir(), serverName)
	if out, err := exec.Command("go", "build", "-o", program, ".").CombinedOutput(); err != nil {
		b.Fatalf("go build: %v\n%s", err, out)
	}
	for b.Loop() {
		c := startProgram(b, program, "")
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
	t.Parallel()
	conflicted := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(conflicted, []byte("{\n<<<<<<< HEAD\n\"profiles\": []\n=======\n>>>>>>> other\n}\n"), 0o600)
	for _, tc := range []struct {
		env  []string
		want string
	}{
		{[]string{"GITEA_MCP_CONFIG=" + conflicted}, "giteamcp: infra_stop: conflict marker in " + conflicted + " at line 2; " + infraRecovery},
		{[]string{"GITEA_URL=gitea.example.com"}, `giteamcp: GITEA_URL: want http(s)://host[:port][/path]`},
		{[]string{"GITEA_OPENAPI=/no/such/file"}, "giteamcp: GITEA_OPENAPI: open /no/such/file: no such file or directory"},
		{[]string{"GITEA_OPENAPI=/dev/zero"}, `giteamcp: GITEA_OPENAPI: "/dev/zero": document larger than 32 MiB`}, // read to the bound, no further
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
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module giteamcp\n"), 0o600)
	os.Mkdir(filepath.Join(dir, ".git"), 0o700)
	c := startClientIn(t, dir, "GITEA_URL=http://127.0.0.1:9", "GITEA_TOKEN=infra-test-token", "GITEA_MCP_PROFILE=gitea-owner")
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
