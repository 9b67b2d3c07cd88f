package main

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestE2EWriteFileHiddenPath: found by attacking gitea_write_file with file
// names. A path with a hidden character ("README<U+200B>.md") was written as
// a new file beside README.md, and the answer, its hidden characters removed
// like every answer's, said "path": "README.md": the tool reported writing a
// file it did not write. A path or branch with a character the result
// pipeline removes is refused now, and nothing is written.
func TestE2EWriteFileHiddenPath(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "zwwrite", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("bob", "POST", "/repos/"+repo+"/branches", map[string]string{"new_branch_name": "topic", "old_branch_name": "main"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	before := branchSHA(t, g, repo, "topic")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author")
	for _, path := range []string{"README\u200b.md", "docs/\u202eevil.md", "notes\U000E0041.md"} {
		res, isErr := c.callTool("gitea_write_file", map[string]any{"owner": owner, "repo": name, "path": path, "branch": "topic",
			"text": "changed\n", "message": "edit"})
		if !isErr || str(get(res, "error.kind")) != "invalid_arguments" || !strings.Contains(str(get(res, "error.message")), "hidden characters") {
			t.Errorf("write of %q: not refused: %v", path, res)
		}
		if status, _, _, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/contents/%s?ref=topic", repo, url.PathEscape(path)), nil); err != nil || status != http.StatusNotFound {
			t.Errorf("%q on topic: status %d, %v; want 404 (nothing written)", path, status, err)
		}
	}
	if after := branchSHA(t, g, repo, "topic"); after != before {
		t.Errorf("topic moved from %s to %s: a refused write committed", before, after)
	}
}

// TestE2EScheduledMergeUnpinned: found by attacking the merge's head pin.
// Gitea ignores head_commit_id when merge_when_checks_succeed is true: the
// merge is scheduled, and when the checks pass it merges whatever head the
// pull request has then. A merger that pinned the head it reviewed had the
// author's later commit merged under its name. Now such a request is
// refused: the pin it asks for cannot hold.
func TestE2EScheduledMergeUnpinned(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "automerge", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branch_protections", map[string]any{"rule_name": "main", "enable_status_check": true,
		"status_check_contexts": []string{"ci"}}, http.StatusCreated, nil)
	var c1 struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "reviewed",
		"files": []map[string]string{{"operation": "create", "path": "a.txt", "content": "cmV2aWV3ZWQK"}}}, http.StatusCreated, &c1)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "reviewed change"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", "GITEA_MCP_TOOLS=repoMergePullRequest")
	res, isErr := c.callTool("repoMergePullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number,
		"body": map[string]any{"do": "merge", "head_commit_id": c1.Commit.SHA, "merge_when_checks_succeed": true, "delete_branch_after_merge": false}})
	if !isErr || str(get(res, "error.kind")) != "permission_denied" || !strings.Contains(str(get(res, "error.message")), "ignores head_commit_id") {
		t.Errorf("scheduled merge pinned to %s: not refused: %v", c1.Commit.SHA, res)
	}
	cancel := fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, pr.Number) // DELETE: 404 when no merge is scheduled
	if status, _, data, err := g.api("alice", "DELETE", cancel, nil); err != nil || status != http.StatusNotFound {
		t.Errorf("cancelling a scheduled merge after the refusal: status %d, %v %.200s; want 404 (nothing scheduled)", status, err, data)
	}
	// What the refusal prevents: the author pushes after the review, the checks pass, the head merged is the new one.
	var c2 struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "after the review",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": "bGF0ZXIK"}}}, http.StatusCreated, &c2)
	// Control: a merge scheduled straight on Gitea is seen, and cancelled, by the same DELETE.
	s.call("alice", "POST", cancel, map[string]any{"do": "merge", "merge_when_checks_succeed": true}, http.StatusCreated, nil)
	s.call("alice", "DELETE", cancel, nil, http.StatusNoContent, nil)
	s.call("alice", "POST", "/repos/"+repo+"/statuses/"+c2.Commit.SHA, map[string]string{"state": "success", "context": "ci"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	var got struct {
		Merged bool
		State  string
		Head   struct{ SHA string }
	}
	s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil, http.StatusOK, &got)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if got.State != "open" || got.Head.SHA != c2.Commit.SHA {
		t.Errorf("the pull request is %q at %s, want open at %s", got.State, got.Head.SHA, c2.Commit.SHA)
	}
	if got.Merged {
		t.Errorf("the pull request was merged at %s, a head pushed after the one pinned (%s)", got.Head.SHA, c1.Commit.SHA)
	}
}

// TestE2ESwitchingKeepsSeparation: tried while attacking runtime switching,
// nothing found; kept as a guard. An author who switches to a merger
// profile with the same token is still the author: gitea_merge_pr refuses
// and nothing is merged; a merger profile naming another
// authenticated_username than its token's login mutates nothing.
func TestE2ESwitchingKeepsSeparation(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "switch", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	pr := s.topicPR("bob", repo, "topic", "mine", "a.txt")
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true, "profiles": [
		{"profile_name": "bob-merges", "allowed_operations": ["gitea.read", "gitea.pr.merge"]},
		{"profile_name": "carol-merges", "authenticated_username": "carol", "allowed_operations": ["gitea.read", "gitea.pr.merge"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author", "GITEA_MCP_CONFIG="+config)
	merge := map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA, "confirm": fmt.Sprintf("MERGE PR %d", pr.Number)}
	for _, to := range []string{"bob-merges", "carol-merges"} {
		if res, isErr := c.callTool("gitea_activate_profile", map[string]any{"profile": to}); isErr || str(get(res, "data.login")) != "bob" {
			t.Fatalf("activate %s: %v", to, res)
		}
		res, isErr := c.callTool("gitea_merge_pr", merge)
		if !isErr || get(res, "data.merged") == true {
			t.Errorf("%s: bob merged his own pull request: %v", to, res)
		}
		if !strings.Contains(fmt.Sprint(get(res, "data.gates")), `"bob" authored this pull request`) {
			t.Errorf("%s: not refused as the author: %v", to, res)
		}
	}
	// carol-merges with bob's token, on a pull request bob did not author: the identity is not carol.
	var other struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "alices", "message": "hers",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": "aGVycwo="}}}, http.StatusCreated, nil)
	s.call("alice", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "alices", "base": "main", "title": "hers"}, http.StatusCreated, &other)
	if s.err != nil {
		t.Fatal(s.err)
	}
	res, isErr := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": other.Number, "head_sha": other.Head.SHA,
		"confirm": fmt.Sprintf("MERGE PR %d", other.Number)})
	if !isErr || get(res, "data.merged") == true || !strings.Contains(fmt.Sprint(res), `identity "bob" is not "carol"`) {
		t.Errorf("carol-merges with bob's token: not refused for the identity: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, other.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Errorf("alice's pull request was merged by bob as carol-merges: %v %.200s", err, data)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Errorf("the pull request was merged: %v %.200s", err, data)
	}
}

// TestE2EApprovalPinned: found by attacking the review workflow's timing.
// gitea_review_pr APPROVED without commit_id approved whatever head the pull
// request had when Gitea got it: the author pushed after the reviewer read
// the head, and the approval, recorded on the new head and not stale,
// counted for code the reviewer never saw. An approval now names the commit
// reviewed (commit_id, the head_sha of gitea_check_pr_eligibility), and it
// must be the live head: Gitea records one at another commit as a stale
// approval (the control, straight to Gitea), which still counts unless branch
// protection dismisses stale approvals.
func TestE2EApprovalPinned(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "approve", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var c1, c2 struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "reviewed",
		"files": []map[string]string{{"operation": "create", "path": "a.txt", "content": "cmV2aWV3ZWQK"}}}, http.StatusCreated, &c1)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "reviewed change"}, http.StatusCreated, &pr)
	// The reviewer has read c1; the author pushes c2.
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "topic", "message": "after the review",
		"files": []map[string]string{{"operation": "create", "path": "b.txt", "content": "bGF0ZXIK"}}}, http.StatusCreated, &c2)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	args := map[string]any{"owner": owner, "repo": name, "index": pr.Number, "event": "APPROVED", "body": "lgtm"}
	res, isErr := c.callTool("gitea_review_pr", args)
	if !isErr || str(get(res, "error.kind")) != "permission_denied" || !strings.Contains(str(get(res, "error.message")), "pass it as commit_id") {
		t.Errorf("approval without commit_id: not refused: %v", res)
	}
	res, isErr = c.callTool("gitea_review_pr", with(args, "commit_id", c1.Commit.SHA))
	if !isErr || !strings.Contains(str(get(res, "error.message")), fmt.Sprintf("commit_id %q is not the pull request's head %s", c1.Commit.SHA, c2.Commit.SHA)) {
		t.Errorf("approval of %s, the head read before the push: not refused: %v", c1.Commit.SHA, res)
	}
	reviews := func() (states []string) {
		var list []struct {
			State    string
			CommitID string `json:"commit_id"`
			Stale    bool
			User     struct{ Login string }
		}
		s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), nil, http.StatusOK, &list)
		if s.err != nil {
			t.Fatal(s.err)
		}
		for _, r := range list {
			states = append(states, fmt.Sprintf("%s %s %s stale %v", r.User.Login, r.State, r.CommitID, r.Stale))
		}
		return states
	}
	if got := reviews(); len(got) != 0 {
		t.Errorf("reviews after the refusals: %v", got)
	}
	res, isErr = c.callTool("gitea_review_pr", with(args, "commit_id", c2.Commit.SHA))
	if isErr || get(res, "data.stale") == true || str(get(res, "data.commit_id")) != c2.Commit.SHA {
		t.Errorf("approval of %s, the head: want accepted and not stale, got %v", c2.Commit.SHA, res)
	}
	// Control: straight to Gitea, an approval at c1 is recorded, stale.
	s.call("alice", "POST", fmt.Sprintf("/repos/%s/pulls/%d/reviews", repo, pr.Number), map[string]any{"event": "APPROVED", "commit_id": c1.Commit.SHA}, http.StatusOK, nil)
	want := []string{"carol APPROVED " + c2.Commit.SHA + " stale false", "alice APPROVED " + c1.Commit.SHA + " stale true"}
	if got := reviews(); !slices.Equal(got, want) {
		t.Errorf("reviews: %v, want %v", got, want)
	}
}

// TestE2EWriteFileSymlink: tried while attacking gitea_write_file, nothing
// found; kept as a guard. A symbolic link pushed to a branch is not written
// through or replaced: without sha gitea_write_file reads it as not a file
// and refuses; with its blob's sha Gitea refuses the update; a path through
// it is refused too. The link stays a link.
func TestE2EWriteFileSymlink(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "symlink", false)
	owner, name, _ := strings.Cut(repo, "/")
	dir, git := gitClone(t, g, "alice", repo+"")
	git("checkout", "-q", "-b", "topic")
	if err := os.Symlink("README.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	git("add", "link.md")
	git("commit", "-q", "-m", "a link")
	git("push", "-q", "origin", "topic")
	var ext struct {
		File struct{ SHA, Type string } `json:"file_contents"`
	}
	s := &giteaSetup{g: g}
	s.call("alice", "GET", "/repos/"+repo+"/contents-ext/link.md?ref=topic", nil, http.StatusOK, &ext)
	if s.err != nil || ext.File.Type != "symlink" {
		t.Fatalf("link.md on topic: %v %+v", s.err, ext)
	}
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author")
	write := map[string]any{"owner": owner, "repo": name, "path": "link.md", "branch": "topic", "text": "through the link\n", "message": "edit"}
	for _, args := range []map[string]any{write, with(write, "sha", ext.File.SHA), with(write, "path", "link.md/inner.md")} {
		if res, isErr := c.callTool("gitea_write_file", args); !isErr {
			t.Errorf("write %v: not refused: %v", args["path"], res)
		}
	}
	s.call("alice", "GET", "/repos/"+repo+"/contents-ext/link.md?ref=topic", nil, http.StatusOK, &ext)
	if s.err != nil || ext.File.Type != "symlink" {
		t.Errorf("link.md on topic after the writes: %v %+v", s.err, ext)
	}
}

// TestE2EReconcileForkSameName: tried while attacking the reconcile proof,
// nothing found; kept as a guard. A pull request from a fork's branch
// "feature", whose commit is not in main, while the base repository has a
// branch of the same name already in main: the proof follows the pull
// request's head commit, not a branch name, so it is not landed and stays
// open.
func TestE2EReconcileForkSameName(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "forkname", false)
	owner, name, _ := strings.Cut(repo, "/")
	fork := "bob/" + name + "-fork"
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branches", map[string]string{"new_branch_name": "feature", "old_branch_name": "main"}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/forks", map[string]string{"name": name + "-fork"}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "feature", "message": "not landed",
		"files": []map[string]string{{"operation": "create", "path": "x.txt", "content": "eAo="}}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "bob:feature", "base": "main", "title": "from the fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=prgs-reconciler")
	res, isErr := c.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number})
	if !isErr || get(res, "data.closed") == true {
		t.Errorf("reconcile of a fork's unlanded feature: %v", res)
	}
	if !strings.Contains(str(get(res, "data.gates")), "gate:head already in base passed:false") {
		t.Errorf("reconcile of a fork's unlanded feature: not refused for the head not in main: %v", res)
	}
	if st := func() string {
		var p struct{ State string }
		s.call("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil, http.StatusOK, &p)
		return p.State
	}(); st != "open" || s.err != nil {
		t.Errorf("the pull request is %q (%v), want open", st, s.err)
	}
}

// TestE2EWriteFileDefaultBranch: tried while attacking gitea_write_file,
// nothing found; kept as a guard. gitea-author (no gitea.pr.merge, no
// allow_default_branch_writes) cannot land a file on the default branch by
// any spelling of it Gitea might resolve: the name, another case, a full
// ref; main does not move.
func TestE2EWriteFileDefaultBranch(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "defbranch", false)
	owner, name, _ := strings.Cut(repo, "/")
	before := branchSHA(t, g, repo, "main")
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=gitea-author")
	for _, branch := range []string{"main", "Main", "refs/heads/main", "MAIN"} {
		for _, path := range []string{"README.md", "new.txt"} {
			res, isErr := c.callTool("gitea_write_file", map[string]any{"owner": owner, "repo": name, "path": path, "branch": branch, "text": "landed\n", "message": "direct"})
			if !isErr || get(res, "data.commit_sha") != nil {
				t.Errorf("write %s on %q: not refused: %v", path, branch, res)
			}
		}
	}
	if after := branchSHA(t, g, repo, "main"); after != before {
		t.Errorf("main moved from %s to %s", before, after)
	}
}
