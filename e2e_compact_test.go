package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"
)

// economyDump asks TestE2EContextEconomy to log every answer whole.
var economyDump = flag.Bool("economy-dump", false, "TestE2EContextEconomy: log every answer")

// economyMeter counts what a model pays for one task: tool calls, find calls,
// the bytes of every answer's text and of tools/list once per session.
type economyMeter struct {
	calls, finds, answer, list int
}

// economySession is one server session of a task, metered.
type economySession struct {
	t *testing.T
	c *client
	m *economyMeter
}

// session starts a server as login with the given profile and its default
// tools, and counts its tools/list.
func (m *economyMeter) session(t *testing.T, g *giteaInstance, login, profile string) *economySession {
	t.Helper()
	c := e2eClient(t, g, login, "GITEA_MCP_PROFILE="+profile, "GITEA_MCP_TOOLS=")
	r := c.call("tools/list", nil)
	if r.Error != nil {
		t.Fatalf("tools/list: %s", r.Error.Message)
	}
	m.list += len(r.Result)
	return &economySession{t, c, m}
}

// call calls a tool, counts it and its answer, fails the test on an error
// result, and returns the decoded answer.
func (s *economySession) call(name string, args map[string]any) map[string]any {
	s.t.Helper()
	r := s.c.call("tools/call", map[string]any{"name": name, "arguments": args})
	var res struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if r.Error != nil || json.Unmarshal(r.Result, &res) != nil || len(res.Content) != 1 {
		s.t.Fatalf("%s: %s %v", name, r.Result, r.Error)
	}
	text := res.Content[0].Text
	if res.IsError {
		s.t.Fatalf("%s %v: %s", name, args, text)
	}
	s.m.calls++
	s.m.answer += len(text)
	s.t.Logf("%s: %d bytes", name, len(text))
	if *economyDump {
		s.t.Logf("%s", text)
	}
	if name == "gitea_find_operations" {
		s.m.finds++
	}
	var v map[string]any
	d := json.NewDecoder(strings.NewReader(text))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	return v
}

// find calls gitea_find_operations and checks that every operation the task
// needs is among its matches.
func (s *economySession) find(query string, want ...string) {
	s.t.Helper()
	res := s.call("gitea_find_operations", map[string]any{"query": query})
	for _, op := range want {
		if !strings.Contains(str(get(res, "data.matches")), "operation:"+op+" ") {
			s.t.Fatalf("find %q does not offer %s: %v", query, op, res)
		}
	}
}

// op calls an operation that is not listed, as an agent does after a find.
func (s *economySession) op(id string, args map[string]any) map[string]any {
	return s.call("gitea_call_operation", map[string]any{"operation": id, "arguments": args})
}

// officialEconomy are the official Gitea MCP server's figures for the seven
// tasks (issue 13): calls and answer bytes.
var officialEconomy = [7][2]int{{2, 1189}, {3, 3079}, {2, 1851}, {4, 1432}, {4, 1679}, {2, 770}, {2, 1408}}

// TestE2EContextEconomy runs the seven everyday tasks of issue 13 against the
// real Gitea as scripted tool-call sequences, the find calls included, in a
// repository of their own, and reports calls, find calls, answer bytes and
// tools/list bytes per task next to the official server's figures (README
// "Context economy"): go test -run TestE2EContextEconomy -v .
// bob works through gitea-owner, carol through gitea-reviewer, alice merges
// through gitea-merger. It fails only when a task cannot be done.
func TestE2EContextEconomy(t *testing.T) {
	g0 := needGitea(t)
	g := *g0
	g.Repo = "alice/econ-" + strings.ToLower(rand.Text()[:8])
	owner, repo := ownerRepo(&g)
	setup := &giteaSetup{g: &g}
	setup.call("alice", "POST", "/user/repos", map[string]any{"name": repo, "auto_init": true, "default_branch": "main"}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", "/repos/"+g.Repo, nil) })
	for _, login := range []string{"bob", "carol"} {
		setup.call("alice", "PUT", "/repos/"+g.Repo+"/collaborators/"+login, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	}
	readme := "# Econ\n\nA small service used to measure context economy.\n\n## Build\n\n    go build ./src\n\n## Layout\n\n- src/: the code\n- docs/: notes\n"
	var initial struct{ SHA string }
	setup.call("alice", "GET", "/repos/"+g.Repo+"/contents/README.md", nil, http.StatusOK, &initial)
	setup.call("alice", "PUT", "/repos/"+g.Repo+"/contents/README.md", map[string]string{"sha": initial.SHA, "message": "Write the README",
		"content": base64.StdEncoding.EncodeToString([]byte(readme))}, http.StatusOK, nil)
	setup.commit("alice", "main", "", "Add code", map[string][]byte{
		"src/main.go":   []byte("package main\n\nfunc main() { println(greet(\"world\")) }\n"),
		"src/greet.go":  []byte("package main\n\nfunc greet(name string) string { return \"hello, \" + name }\n"),
		"docs/notes.md": []byte("# Notes\n")})
	setup.commit("bob", "main", "bob/shout", "Shout the greeting", map[string][]byte{"src/shout.go": []byte("package main\n\nimport \"strings\"\n\nfunc shout(s string) string { return strings.ToUpper(s) }\n")})
	reviewPR := setup.pull("bob", "bob/shout", "Shout the greeting")
	var label struct{ ID int64 }
	setup.call("alice", "POST", "/repos/"+g.Repo+"/labels", map[string]string{"name": "bug", "color": "#ee0701"}, http.StatusCreated, &label)
	var bugs []int
	for i, title := range []string{"Greeting lacks a comma", "Crash on empty name", "Document the layout"} {
		body := map[string]any{"title": title, "body": "Seen on main: " + title + "."}
		if i < 2 {
			body["labels"] = []int64{label.ID}
		}
		var issue struct{ Number int }
		setup.call("bob", "POST", "/repos/"+g.Repo+"/issues", body, http.StatusCreated, &issue)
		bugs = append(bugs, issue.Number)
	}
	for _, c := range []string{"Reproduced.", "Fix coming in a branch."} {
		setup.call("carol", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", g.Repo, bugs[0]), map[string]string{"body": c}, http.StatusCreated, nil)
	}
	setup.call("alice", "POST", "/repos/"+g.Repo+"/releases", map[string]string{"tag_name": "v1.0", "target_commitish": "main", "name": "1.0", "body": "First release."}, http.StatusCreated, nil)
	if setup.err != nil {
		t.Fatal(setup.err)
	}
	at := map[string]any{"owner": owner, "repo": repo}
	args := func(kv ...any) map[string]any { return with(at, kv...) }

	var newPR int
	var newHead any // the head commit of newPR, which the approval names
	tasks := []struct {
		name string
		run  func(m *economyMeter)
	}{
		{"read README.md and list src/", func(m *economyMeter) {
			bob := m.session(t, &g, "bob", "gitea-owner")
			bob.call("repoGetRawFile", args("filepath", "README.md"))
			bob.call("repoGetContents", args("filepath", "src"))
		}},
		{"list open pull requests, read one and its diff", func(m *economyMeter) {
			carol := m.session(t, &g, "carol", "gitea-reviewer")
			carol.call("repoListPullRequests", args("state", "open"))
			carol.call("repoGetPullRequest", args("index", reviewPR))
			carol.call("repoDownloadPullDiffOrPatch", args("index", reviewPR, "diffType", "diff"))
		}},
		{"open issues labelled bug, comments of one", func(m *economyMeter) {
			bob := m.session(t, &g, "bob", "gitea-owner")
			bob.find("list issues with a label", "issueListIssues")
			bob.op("issueListIssues", args("state", "open", "type", "issues", "labels", "bug"))
			bob.call("gitea_list_issue_comments", args("index", bugs[0]))
		}},
		{"create a branch, change a file, open a pull request", func(m *economyMeter) {
			bob := m.session(t, &g, "bob", "gitea-owner")
			bob.find("create a branch and a pull request", "repoCreateBranch", "repoCreatePullRequest")
			bob.op("repoCreateBranch", args("body", map[string]any{"new_branch_name": "bob/comma", "old_ref_name": "main"}))
			newHead = get(bob.call("gitea_write_file", args("path", "src/greet.go", "branch", "bob/comma", "message", "Add the comma",
				"text", "package main\n\nfunc greet(name string) string { return \"hello, \" + name + \"!\" }\n")), "data.commit_sha")
			res := bob.op("repoCreatePullRequest", args("body", map[string]any{"head": "bob/comma", "base": "main", "title": "Add the comma", "body": "Fixes the greeting."}))
			n, _ := get(res, "data.number").(json.Number).Int64()
			newPR = int(n)
		}},
		{"review as one identity, merge as another", func(m *economyMeter) {
			carol := m.session(t, &g, "carol", "gitea-reviewer")
			carol.call("gitea_review_pr", args("index", newPR, "event", "APPROVED", "commit_id", newHead, "body", "Looks right."))
			alice := m.session(t, &g, "alice", "gitea-merger")
			waitGiteaMergeable(t, &g, newPR) // Gitea checks mergeability in the background; not counted
			elig := alice.call("gitea_check_pr_eligibility", args("index", newPR, "action", "merge"))
			alice.call("gitea_merge_pr", args("index", newPR, "head_sha", get(elig, "data.head_sha"), "confirm", fmt.Sprintf("MERGE PR %d", newPR)))
		}},
		{"close an issue with a comment", func(m *economyMeter) {
			bob := m.session(t, &g, "bob", "gitea-owner")
			bob.call("gitea_create_issue_comment", args("index", bugs[1], "body", "Fixed on main."))
			bob.call("issueEditIssue", args("index", bugs[1], "body", map[string]any{"state": "closed"}))
		}},
		{"search repositories, read the latest release", func(m *economyMeter) {
			bob := m.session(t, &g, "bob", "gitea-owner")
			bob.find("search repositories and the latest release", "repoSearch", "repoGetLatestRelease")
			bob.op("repoSearch", map[string]any{"q": repo, "limit": 5})
			bob.op("repoGetLatestRelease", at)
		}},
	}
	var total economyMeter
	var offCalls, offBytes int
	report := "| task | calls (finds) | answer bytes | tools/list bytes | official calls / answer bytes |\n|---|---|---|---|---|\n"
	for i, task := range tasks {
		var m economyMeter
		task.run(&m)
		report += fmt.Sprintf("| %s | %d (%d) | %d | %d | %d / %d |\n", task.name, m.calls, m.finds, m.answer, m.list, officialEconomy[i][0], officialEconomy[i][1])
		total.calls, total.finds, total.answer, total.list = total.calls+m.calls, total.finds+m.finds, total.answer+m.answer, total.list+m.list
		offCalls, offBytes = offCalls+officialEconomy[i][0], offBytes+officialEconomy[i][1]
	}
	report += fmt.Sprintf("| **total** | **%d (%d)** | **%d** | **%d** | **%d / %d** |\n", total.calls, total.finds, total.answer, total.list, offCalls, offBytes)
	t.Logf("context economy:\n%s", report)
	const officialWithList = 321_000 // official answers plus its 38.7 KB tools/list once per task (issue 13)
	ratio, share := float64(total.answer)/float64(offBytes), float64(total.answer+total.list)/officialWithList
	t.Logf("answers %.2fx the official's (goal at most 1.5x); answers + tools/list %.0f%% of the official's 321 KB (goal at most 40%%); %d find calls (goal at most 3)",
		ratio, 100*share, total.finds)
	if ratio > 1.5 || share > 0.40 || total.finds > 3 {
		t.Errorf("issue 13's goals missed: answers %.2fx (at most 1.5x), %.0f%% of 321 KB (at most 40%%), %d find calls (at most 3)", ratio, 100*share, total.finds)
	}
}

// waitGiteaMergeable waits until Gitea has decided whether a pull request of
// g.Repo can be merged.
func waitGiteaMergeable(t *testing.T, g *giteaInstance, pr int) {
	t.Helper()
	// Three reads in a row: a push to the base queued before may still set
	// it checking again, and Gitea's merge then answers 405.
	for deadline, inRow := time.Now().Add(30*time.Second), 0; time.Now().Before(deadline); time.Sleep(300 * time.Millisecond) {
		_, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", g.Repo, pr), nil)
		var v struct{ Mergeable *bool }
		if inRow++; err != nil || json.Unmarshal(data, &v) != nil || v.Mergeable == nil || !*v.Mergeable {
			inRow = 0
		}
		if inRow == 3 {
			return
		}
	}
	t.Fatalf("pull request %d never became mergeable", pr)
}

// TestE2EWriteFile writes a file from plain text through gitea_write_file:
// created when missing, updated with the SHA it reads itself, refused with a
// stale SHA; Gitea holds the text each time.
func TestE2EWriteFile(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	branch := "write-file-" + strings.ToLower(rand.Text()[:6])
	if status, _, data, err := g.api("alice", "POST", "/repos/"+g.Repo+"/branches", map[string]string{"new_branch_name": branch, "old_ref_name": "main"}); err != nil || status != http.StatusCreated {
		t.Fatalf("create branch: %d %v %s", status, err, data)
	}
	c := e2eClient(t, g, "bob")
	raw := func() string {
		_, _, data, _ := g.api("alice", "GET", "/repos/"+g.Repo+"/raw/notes/plain.txt?ref="+branch, nil)
		return string(data)
	}
	write := func(text, sha string) (map[string]any, bool) {
		return c.callTool("gitea_write_file", with(map[string]any{"owner": owner, "repo": repo, "path": "notes/plain.txt", "branch": branch,
			"message": "write " + text, "text": text}, "sha", sha))
	}
	var firstSHA string
	for i, text := range []string{"first ünïcode line\n", "second\n"} {
		res, isErr := write(text, "")
		if isErr || raw() != text || len(str(get(res, "data.commit_sha"))) != 40 || len(str(get(res, "data.file_sha"))) != 40 ||
			get(res, "data.created") != (i == 0) || get(res, "request.operation") == nil {
			t.Fatalf("write %q: %v; Gitea has %q", text, res, raw())
		}
		if i == 0 {
			firstSHA = str(get(res, "data.file_sha"))
		}
	}
	if res, isErr := write("third\n", firstSHA); !isErr || raw() != "second\n" {
		t.Errorf("a stale sha was not refused: %v; Gitea has %q", res, raw())
	}
	reviewer := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	res, isErr := reviewer.callTool("gitea_write_file", map[string]any{"owner": owner, "repo": repo, "path": "notes/plain.txt", "branch": branch, "message": "m", "text": "no"})
	if !isErr || raw() != "second\n" {
		t.Errorf("a reviewer wrote a file: %v", res)
	}
}

// TestE2ECompactView reads a pull request compact by default and whole on
// request: nested objects shrink, what an agent acts on stays.
func TestE2ECompactView(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	args := map[string]any{"owner": owner, "repo": repo, "index": g.PR}
	compact, _ := e2eClient(t, g, "carol").callTool("issueGetIssue", args)
	pr, _ := e2eClient(t, g, "carol", "GITEA_MCP_TOOLS=repoGetPullRequest").callTool("repoGetPullRequest", args)
	if pr["view"] != compactView || get(pr, "data.user.login") != "bob" || get(pr, "data.user.id") != nil ||
		get(pr, "data.head.sha") != g.PRHeadSHA || get(pr, "data.head.repo.full_name") != g.Repo || get(pr, "data.head.repo.owner") != nil ||
		get(pr, "data.base.ref") != "main" || get(pr, "data.mergeable") == nil || get(pr, "data.merged") != false || get(pr, "data.diff_url") != nil ||
		get(pr, "data.html_url") == nil || get(compact, "data.number") == nil {
		t.Errorf("compact pull request: %v", pr)
	}
	full, _ := e2eClient(t, g, "carol").callTool("gitea_call_operation", map[string]any{"operation": "repoGetPullRequest", "arguments": args, "full": true})
	whole, _ := e2eClient(t, g, "carol", "GITEA_MCP_RESULTS=full", "GITEA_MCP_TOOLS=repoGetPullRequest").callTool("repoGetPullRequest", args)
	for name, res := range map[string]map[string]any{"full: true": full, "GITEA_MCP_RESULTS=full": whole} {
		if res["view"] != nil || get(res, "data.user.id") == nil || get(res, "data.head.repo.owner.login") != "alice" || get(res, "data.diff_url") == nil {
			t.Errorf("%s: not whole: %v", name, res)
		}
	}
}
