package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam13AuditLogRotatedAway: found by the red team. The audit log
// was checked only by its writes: deleted, replaced or truncated under the
// running server (a rotation, a cleanup), its lines went to a file no one
// reads, or broke the chain in place, and every mutation after it was still
// sent. Now such a log stops mutations (infra_stop) and nothing is sent.
func TestE2ERedteam13AuditLogRotatedAway(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt13audit", false)
	owner, name, _ := strings.Cut(repo, "/")
	for _, tamper := range []struct {
		name string
		do   func(path string) error
	}{
		{"removed", os.Remove},
		{"replaced", func(path string) error { return os.WriteFile(path+".new", nil, 0o600) }},
		{"truncated", func(path string) error { return os.Truncate(path, 0) }},
	} {
		audit := filepath.Join(t.TempDir(), "audit.log")
		c := e2eClient(t, g, "alice", "GITEA_AUDIT_LOG="+audit, "GITEA_AUDIT_KEY="+auditTestKey)
		create := func(title string) (map[string]any, bool) {
			return c.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"title": title}})
		}
		if res, isErr := create("rt13 before " + tamper.name); isErr {
			t.Fatalf("%s: the first issue was refused: %v", tamper.name, res)
		}
		if err := tamper.do(audit); err != nil {
			t.Fatal(err)
		}
		if tamper.name == "replaced" {
			if err := os.Rename(audit+".new", audit); err != nil {
				t.Fatal(err)
			}
		}
		title := "rt13 after " + tamper.name
		res, isErr := create(title)
		if kind := get(res, "error.kind"); !isErr || kind != "infra_stop" {
			t.Errorf("%s: a mutation after the log was %s: error kind %v, want infra_stop: %v", tamper.name, tamper.name, kind, res)
		}
		_, _, data, err := g.api("alice", "GET", "/repos/"+repo+"/issues?state=all&type=issues&limit=50", nil)
		var issues []struct{ Title string }
		if err != nil || json.Unmarshal(data, &issues) != nil {
			t.Fatalf("list issues: %v: %s", err, data)
		}
		for _, is := range issues {
			if is.Title == title {
				t.Errorf("%s: the issue was created with the audit log %s", tamper.name, tamper.name)
			}
		}
		c.close()
	}
}

// TestE2ERedteam13CheckoutGoMod: found by the red team. The server took its
// working directory for its checkout (whose unfinished merge stops
// mutations) only when go.mod began with the exact bytes "module
// giteamcp\n": a go.mod with CRLF line ends (a Windows checkout), a comment
// first, or a conflict in its first line turned the runtime isolation check
// off, and an issue was created on Gitea during an unfinished merge.
func TestE2ERedteam13CheckoutGoMod(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt13mod", false)
	owner, name, _ := strings.Cut(repo, "/")
	for _, mod := range []string{
		"module giteamcp\r\n\r\ngo 1.26\r\n",
		"// The gitea MCP server.\nmodule giteamcp\n",
		"<<<<<<< HEAD\nmodule giteamcp\n=======\nmodule giteamcp // renamed\n>>>>>>> other\n",
	} {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(dir, ".git"), 0o700); err != nil {
			t.Fatal(err)
		}
		c := startClientIn(t, dir, "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_MCP_PROFILE=gitea-owner", "GITEA_MCP_TOOLS=issueCreateIssue")
		c.initialize("2025-11-25")
		c.call("tools/list", nil) // waits for the start-up checks
		if err := os.WriteFile(filepath.Join(dir, ".git", "MERGE_HEAD"), []byte("x\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		res, isErr := c.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"title": "rt13 during a merge"}})
		if kind := get(res, "error.kind"); !isErr || kind != "infra_stop" {
			t.Errorf("go.mod %q: a mutation during an unfinished merge: error kind %v, want infra_stop: %v", mod, kind, res)
		}
		c.close()
	}
}

// TestE2ERedteam13UnfinishedSquashAndPicks: found by the red team. A squash
// merge that stopped on a conflict leaves no MERGE_HEAD (SQUASH_MSG), and a
// series of cherry-picks whose conflict was committed by hand leaves only
// sequencer/ (git status: "Cherry-pick currently in progress"); with the
// conflict outside the server's Go sources, an issue was created on Gitea
// from either checkout.
func TestE2ERedteam13UnfinishedSquashAndPicks(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt13seq", false)
	owner, name, _ := strings.Cut(repo, "/")
	for _, steps := range map[string][]string{
		"squash": {"merge --squash other"},
		"picks":  {"cherry-pick other other~1", "add README", "commit -q -m resolved"},
	} {
		dir := t.TempDir()
		git := func(args string) error {
			cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t"}, strings.Fields(args)...)...)
			cmd.Dir = dir
			out, err := cmd.CombinedOutput()
			if err != nil {
				return fmt.Errorf("git %s: %v: %s", args, err, out)
			}
			return nil
		}
		write := func(file, text string) {
			if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		write("go.mod", "module giteamcp\n")
		write("README", "base\n")
		for _, args := range []string{"init -q -b main", "add .", "commit -q -m base", "checkout -q -b other"} {
			if err := git(args); err != nil {
				t.Fatal(err)
			}
		}
		for _, text := range []string{"other\n", "other 2\n"} {
			write("README", text)
			if err := git("commit -q -a -m other"); err != nil {
				t.Fatal(err)
			}
		}
		if err := git("checkout -q main"); err != nil {
			t.Fatal(err)
		}
		write("README", "mine\n") // README changed on both branches: the conflict
		if err := git("commit -q -a -m mine"); err != nil {
			t.Fatal(err)
		}
		c := startClientIn(t, dir, "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_MCP_PROFILE=gitea-owner", "GITEA_MCP_TOOLS=issueCreateIssue")
		c.initialize("2025-11-25")
		c.call("tools/list", nil) // waits for the start-up checks
		if err := git(steps[0]); err == nil {
			t.Fatalf("%s: no conflict", steps[0])
		}
		for _, args := range steps[1:] {
			if err := git(args); err != nil {
				t.Fatal(err)
			}
		}
		res, isErr := c.callTool("issueCreateIssue", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"title": "rt13 during " + steps[0]}})
		if kind := get(res, "error.kind"); !isErr || kind != "infra_stop" {
			t.Errorf("git %s: a mutation from the unfinished checkout: error kind %v, want infra_stop: %v", steps[0], kind, res)
		}
		c.close()
	}
}
