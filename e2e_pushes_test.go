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

// pushesSetup makes a repository of alice's with bob and carol as writers, a
// private one of hers with an issue far that bob cannot read (his pushes
// record nothing there), and returns them with a setup client.
func pushesSetup(t *testing.T, prefix string) (g *giteaInstance, repo, secret string, far struct{ Number int }, s *giteaSetup) {
	g = needGitea(t)
	repo, _ = scratchRepo(t, g, prefix, false)
	secret, _ = scratchRepo(t, g, prefix+"secret", true)
	s = &giteaSetup{g: g}
	g.api("alice", "DELETE", "/repos/"+secret+"/collaborators/bob", nil)
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "far"}, http.StatusCreated, &far)
	return g, repo, secret, far, s
}

// TestE2EPushedCommitsOutside: found by review. Gitea reads the messages of
// every commit a push puts on a branch for issue references, as the pusher:
// it writes a reference into each issue named, and closes it after a closing
// keyword on the default branch. A profile limited to one repository moved a
// branch to a commit another user wrote naming an issue outside the list
// (repoUpdateBranch), and synced a fork whose parent had such a commit
// (repoMergeUpstream): Gitea closed the issue outside, as the profile's
// user. Now every write that pushes commits it did not write reads their
// messages first, under repositories, each commit named as Gitea resolves
// it: a branch moved, a branch created from a commit on no branch, a pull
// request's head updated from its base, a fork synced. The control,
// straight to Gitea, is the same branch move.
func TestE2EPushedCommitsOutside(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "pushes")
	owner, name, _ := strings.Cut(repo, "/")
	var side, bad struct{ Commit struct{ SHA string } }
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "side", "message": "side work", "files": fileOps("side.txt")}, http.StatusCreated, &side)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "side", "base": "main", "title": "side"}, http.StatusCreated, &pr)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": fmt.Sprintf("Fixes %s#%d", secret, far.Number),
		"files": fileOps("topic.txt")}, http.StatusCreated, &bad)
	var loose struct{ Commit struct{ SHA string } } // the same message on a commit that only a tag keeps
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "tmp", "message": fmt.Sprintf("Fixes %s#%d", secret, far.Number),
		"files": fileOps("tmp.txt")}, http.StatusCreated, &loose)
	s.call("bob", "POST", "/repos/"+repo+"/tags", map[string]any{"tag_name": "v-bad", "target": loose.Commit.SHA}, http.StatusCreated, nil)
	s.call("bob", "DELETE", "/repos/"+repo+"/branches/tmp", nil, http.StatusNoContent, nil)
	fork := "carol/" + name + "-fork"
	s.call("carol", "POST", "/repos/"+repo+"/forks", map[string]string{"name": name + "-fork"}, http.StatusAccepted, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() { g.api("carol", "DELETE", "/repos/"+fork, nil) })
	// The bad commit lands on the parent's main after the fork, as bob's push.
	s.call("alice", "PUT", "/repos/"+repo+"/branches/main", map[string]any{"new_commit_id": bad.Commit.SHA}, http.StatusNoContent, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	if state := issueState(t, g, secret, far.Number); state != "open" {
		t.Fatalf("setup: %s#%d is %s", secret, far.Number, state)
	}
	// Undo: the parent's main moved with alice's own push above closed far:
	// that is the control (straight to Gitea), and it is reopened here.
	for deadline := time.Now().Add(20 * time.Second); issueState(t, g, secret, far.Number) != "closed"; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("control: moving main to %s straight to Gitea left %s#%d open", bad.Commit.SHA, secret, far.Number)
		}
	}
	s.call("alice", "PATCH", fmt.Sprintf("/repos/%s/issues/%d", secret, far.Number), map[string]any{"state": "open"}, http.StatusCreated, nil)

	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"pusher","repositories":["`+repo+`","`+fork+`"],
		"allowed_operations":["gitea.read","gitea.branch.create","gitea.branch.push","gitea.repo.commit","gitea.pr.merge","gitea.pr.create"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=pusher", "GITEA_MCP_CONFIG="+config,
		"GITEA_MCP_TOOLS=repoUpdateBranch,repoCreateBranch,repoCreateFile,repoUpdatePullRequest,repoMergeUpstream")
	outside := fmt.Sprintf("puts on a branch reference %q, outside the repositories of pusher", secret)
	wantDenied(t, c, "repoUpdateBranch", "PUT", "/repos/"+repo+"/branches/side", map[string]any{"owner": owner, "repo": name, "branch": "side",
		"body": map[string]any{"new_commit_id": bad.Commit.SHA, "force": false}}, "gitea.branch.push", outside)
	// A new branch from a tag on no branch: Gitea reads its commits back to
	// the first on another branch.
	wantDenied(t, c, "repoCreateBranch", "POST", "/repos/"+repo+"/branches", map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"new_branch_name": "copy", "old_ref_name": "v-bad"}}, "gitea.branch.create", outside)
	wantDenied(t, c, "repoUpdatePullRequest", "POST", fmt.Sprintf("/repos/%s/pulls/%d/update", repo, pr.Number), map[string]any{"owner": owner, "repo": name, "index": pr.Number},
		"gitea.branch.push", outside)
	wantDenied(t, c, "repoMergeUpstream", "POST", "/repos/"+fork+"/merge-upstream", map[string]any{"owner": "carol", "repo": name + "-fork",
		"body": map[string]any{"branch": "main"}}, "gitea.branch.push", outside)
	time.Sleep(time.Second) // a push, had one been made, is handled from Gitea's queue
	if state := issueState(t, g, secret, far.Number); state != "open" {
		t.Errorf("after the refusals %s#%d is %s", secret, far.Number, state)
	}
	for branch, want := range map[string]string{"side": side.Commit.SHA, "copy": ""} {
		var b struct{ Commit struct{ ID string } }
		status, _, _, _ := g.api("alice", "GET", "/repos/"+repo+"/branches/"+branch, nil)
		if s.call("alice", "GET", "/repos/"+repo+"/branches/"+branch, nil, status, &b); want != "" && b.Commit.ID != want || want == "" && status != http.StatusNotFound {
			t.Errorf("after the refusals branch %s is at %q (status %d), want %q", branch, b.Commit.ID, status, want)
		}
	}
	// Found by review of the check: each commit is named as Gitea resolves it.
	// "heads/topic", a branch of that name made from side, is refs/heads/topic
	// (the bad commit) to the update, which resolves it as git does; and the
	// parent has no branch "feature", only a tag of that name, so Gitea syncs
	// the fork's feature from the parent's default branch.
	call := func(op string, args map[string]any) (map[string]any, bool) {
		return c.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
	}
	if res, isErr := call("repoCreateBranch", map[string]any{"owner": owner, "repo": name, "body": map[string]any{"new_branch_name": "heads/topic", "old_ref_name": "side"}}); isErr {
		t.Fatalf("a branch heads/topic from side: %v", res)
	}
	wantDenied(t, c, "repoUpdateBranch", "PUT", "/repos/"+repo+"/branches/side", map[string]any{"owner": owner, "repo": name, "branch": "side",
		"body": map[string]any{"new_commit_id": "heads/topic"}}, "gitea.branch.push", outside)
	s.call("alice", "POST", "/repos/"+repo+"/tags", map[string]any{"tag_name": "feature", "target": side.Commit.SHA}, http.StatusCreated, nil)
	s.call("carol", "POST", "/repos/"+fork+"/branches", map[string]any{"new_branch_name": "feature", "old_branch_name": "main"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	wantDenied(t, c, "repoMergeUpstream", "POST", "/repos/"+fork+"/merge-upstream", map[string]any{"owner": "carol", "repo": name + "-fork",
		"body": map[string]any{"branch": "feature"}}, "gitea.branch.push", outside)
	time.Sleep(time.Second)
	if state := issueState(t, g, secret, far.Number); state != "open" {
		t.Errorf("after the refusals of named commits %s#%d is %s", secret, far.Number, state)
	}

	// Writes whose pushed commits name nothing outside go through: a new
	// branch from a ref whose commits off the default branch are clean, and
	// a new branch or a commit on one starting on main, whose history names
	// the issue outside: Gitea reads a new branch back to the first commit on
	// another branch, so none of main's.
	for _, body := range []map[string]any{{"new_branch_name": "from-side", "old_ref_name": "side"},
		{"new_branch_name": "from-main", "old_ref_name": "main"}, {"new_branch_name": "from-main2", "old_branch_name": "main"}} {
		if res, isErr := call("repoCreateBranch", map[string]any{"owner": owner, "repo": name, "body": body}); isErr {
			t.Errorf("a new branch %v: %v", body, res)
		}
	}
	if res, isErr := call("repoCreateFile", map[string]any{"owner": owner, "repo": name, "filepath": "doc.txt",
		"body": map[string]any{"content": "ZG9jCg==", "branch": "main", "new_branch": "doc", "message": "doc"}}); isErr {
		t.Errorf("a commit on a new branch from main: %v", res)
	}
}

// TestE2EGiteaWrittenMessages: found by review. Gitea writes commit messages
// of its own, and reads them for references as the pusher: a contents write
// naming no message writes "Add <path>", the path a path parameter; a merge
// naming no title writes the default message, from the head branch's name,
// or the repository's template for the style on the default branch; a
// squash adds the pull request's commit authors' names as trailers; and a
// contents write forced onto an existing branch moves it, with all the
// commits it gains. Each closed, or wrote a reference into, an issue outside
// the profile's one repository; now each is judged. Writes that push no
// commit of another's still go through: a branch from a branch's tip named
// as a ref, a pull request updated by merge whose own commits name the issue.
func TestE2EGiteaWrittenMessages(t *testing.T) {
	g, repo, secret, far, s := pushesSetup(t, "written")
	owner, name, _ := strings.Cut(repo, "/")
	ref := fmt.Sprintf("%s#%d", secret, far.Number)
	var bob struct{ Email string }
	s.call("bob", "GET", "/user", nil, http.StatusOK, &bob)
	type pr struct {
		Number int
		Head   struct{ SHA string }
	}
	open := func(branch, message string, author map[string]string) pr {
		t.Helper()
		var p pr
		s.call("bob", "POST", "/repos/"+repo+"/contents", with(map[string]any{"branch": "main", "new_branch": branch, "message": message,
			"files": fileOps(strings.NewReplacer("/", "-", "#", "-").Replace(branch) + ".txt")}, "author", author), http.StatusCreated, nil)
		s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": branch, "base": "main", "title": "clean " + branch}, http.StatusCreated, &p)
		if s.err != nil {
			t.Fatal(s.err)
		}
		return p
	}
	named := open(ref, "clean", nil)                                                                     // the head branch names the issue
	squashed := open("squashed", "clean", map[string]string{"name": "Fixes " + ref, "email": bob.Email}) // its author does
	plain := open("plain", "clean", nil)
	mentions := open("mentions", "see "+ref, nil) // its own commit does
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "Fixes " + ref, "files": fileOps("topic.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "dev", "message": "dev", "files": fileOps("dev.txt")}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "main moves on", "files": fileOps("main.txt")}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"pusher","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.branch.create","gitea.branch.push","gitea.branch.delete","gitea.repo.commit","gitea.pr.merge","gitea.pr.create"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=pusher", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoCreateFile,repoMergePullRequest")
	outside := fmt.Sprintf("%q, outside the repositories of pusher", secret)
	for _, tool := range []string{"repoCreateFile", "gitea_call_operation"} { // gitea_api_request refuses a path holding "#"
		args := map[string]any{"owner": owner, "repo": name, "filepath": "fixes " + ref, "body": map[string]any{"content": "eAo=", "branch": "main"}}
		if tool != "repoCreateFile" {
			args = map[string]any{"operation": "repoCreateFile", "arguments": args}
		}
		if res, _ := c.callTool(tool, args); str(get(res, "error.kind")) != "permission_denied" || !strings.Contains(str(get(res, "error.message")), outside) {
			t.Errorf("%s: a file named for the issue, with Gitea's default message: %v", tool, res)
		}
	}
	wantDenied(t, c, "repoCreateFile", "POST", "/repos/"+repo+"/contents/c.txt", map[string]any{"owner": owner, "repo": name, "filepath": "c.txt",
		"body": map[string]any{"content": "Ywo=", "branch": "topic", "new_branch": "dev", "force_push": true, "message": "clean"}}, "gitea.repo.commit", outside)
	merge := func(p pr, do string) map[string]any {
		return map[string]any{"owner": owner, "repo": name, "index": p.Number, "body": map[string]any{"do": do, "head_commit_id": p.Head.SHA, "delete_branch_after_merge": false}}
	}
	path := func(p pr) string { return fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, p.Number) }
	wantDenied(t, c, "repoMergePullRequest", "POST", path(named), merge(named, "merge"), "gitea.pr.merge", outside)
	wantDenied(t, c, "repoMergePullRequest", "POST", path(squashed), merge(squashed, "squash"), "gitea.pr.merge", outside)
	s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "merge template", "files": []map[string]string{{"operation": "create",
		"path": ".gitea/default_merge_message/MERGE_TEMPLATE.md", "content": base64.StdEncoding.EncodeToString([]byte("Fixes " + ref + "\n\n${PullRequestTitle}\n"))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	wantDenied(t, c, "repoMergePullRequest", "POST", path(plain), merge(plain, "merge"), "gitea.pr.merge", outside)
	time.Sleep(time.Second) // a push, had one been made, is handled from Gitea's queue
	var refs int
	for _, e := range timeline(t, g, secret, far.Number) {
		if e["type"] == "commit_ref" {
			refs++
		}
	}
	if state := issueState(t, g, secret, far.Number); state != "open" || refs != 0 {
		t.Errorf("after the refusals %s is %s with %d commit references", ref, state, refs)
	}

	// Pushing no commit of another's: allowed.
	if res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "repoCreateBranch", "arguments": map[string]any{"owner": owner, "repo": name,
		"body": map[string]any{"new_branch_name": "copy", "old_ref_name": "topic"}}}); isErr {
		t.Errorf("a branch from topic's tip, named as a ref: %v", res)
	}
	if res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": "repoUpdatePullRequest", "arguments": map[string]any{"owner": owner, "repo": name,
		"index": mentions.Number, "style": "merge"}}); isErr {
		t.Errorf("a pull request whose own commit names the issue, updated by merge: %v", res)
	}
}
