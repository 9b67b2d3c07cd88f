package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestE2EAllowlistReach: found by attacking the allowlist. With repositories
// set, an issue's timeline in the list quotes an issue of a private
// repository outside it that references it (cross-references), so it is
// refused; and merging a fork's upstream into a fork in the list, from a
// parent outside it, is refused with the fork unchanged.
func TestE2EAllowlistReach(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	secret, _ := scratchRepo(t, g, "secret", true)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "secret title", "body": fmt.Sprintf("see %s#%d", g.Repo, g.Issues[0])}, http.StatusCreated, nil)
	fork := secret + "-fork"
	fork = "bob/" + strings.TrimPrefix(fork, "alice/")
	forkOwner, forkName, _ := strings.Cut(fork, "/")
	s.call("bob", "POST", "/repos/"+secret+"/forks", map[string]string{"name": forkName}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("alice", "POST", "/repos/"+secret+"/contents", map[string]any{"branch": "main", "message": "upstream only",
		"files": []map[string]string{{"operation": "create", "path": "upstream.txt", "content": base64.StdEncoding.EncodeToString([]byte("upstream\n"))}}}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[
		{"profile_name":"demo-only","repositories":["`+g.Repo+`"],"allowed_operations":["gitea.read"]},
		{"profile_name":"fork-only","repositories":["`+fork+`"],"allow_default_branch_writes":true,"allowed_operations":["gitea.read","gitea.branch.push"]}]}`), 0o600)
	tools := "GITEA_MCP_TOOLS=issueGetCommentsAndTimeline,repoMergeUpstream"

	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=demo-only", "GITEA_MCP_CONFIG="+config, tools)
	wantDenied(t, c, "issueGetCommentsAndTimeline", "GET", fmt.Sprintf("/repos/%s/issues/%d/timeline", g.Repo, g.Issues[0]),
		map[string]any{"owner": owner, "repo": name, "index": g.Issues[0]}, "gitea.read", "quote issues and pull requests of other repositories")

	before := branchSHA(t, g, fork, "main")
	c = e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=fork-only", "GITEA_MCP_CONFIG="+config, tools)
	wantDenied(t, c, "repoMergeUpstream", "POST", "/repos/"+fork+"/merge-upstream",
		map[string]any{"owner": forkOwner, "repo": forkName, "body": map[string]any{"branch": "main"}},
		"gitea.branch.push", fmt.Sprintf("from %q, the repository it forks, outside the repositories of fork-only", secret))
	if after := branchSHA(t, g, fork, "main"); after != before {
		t.Errorf("the fork's main moved from %s to %s", before, after)
	}
}

// TestE2EMergeMessageCloses: found by attacking the effects table. A merger's
// own merge message with closing keywords closed an issue of the repository
// and one of a private repository outside the profile's list (Gitea reads
// the merged commits' messages), under gitea-merger, which has no
// gitea.issue.close. Now it needs gitea.issue.close; nothing is merged or closed.
func TestE2EMergeMessageCloses(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "closes", false)
	secret, _ := scratchRepo(t, g, "secret", true)
	s := &giteaSetup{g: g}
	var local, far, pr struct{ Number int }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "local"}, http.StatusCreated, &local)
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "far"}, http.StatusCreated, &far)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic",
		"files": []map[string]string{{"operation": "create", "path": "topic.txt", "content": base64.StdEncoding.EncodeToString([]byte("topic\n"))}}}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "plain"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	owner, name, _ := strings.Cut(repo, "/")
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger", "GITEA_MCP_TOOLS=repoMergePullRequest")
	args := func(field string) map[string]any {
		return map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"do": "merge", "delete_branch_after_merge": false,
			field: fmt.Sprintf("Closes #%d\nCloses %s#%d", local.Number, secret, far.Number)}}
	}
	path := fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, pr.Number)
	wantDenied(t, c, "repoMergePullRequest", "POST", path, args("merge_message_field"), "gitea.issue.close", "closes the issues it names after a closing keyword")
	wantDenied(t, c, "repoMergePullRequest", "POST", path, args("merge_title_field"), "gitea.issue.close", "closes the issues it names after a closing keyword")
	// A pull request whose description closes an issue outside the list, merged under a profile limited to the repository.
	var pr2 struct {
		Number int
		Head   struct{ SHA string }
	}
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic2", "message": "topic2",
		"files": []map[string]string{{"operation": "create", "path": "topic2.txt", "content": base64.StdEncoding.EncodeToString([]byte("topic2\n"))}}}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic2", "base": "main", "title": "second",
		"body": fmt.Sprintf("Closes %s#%d", secret, far.Number)}, http.StatusCreated, &pr2)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"merge-one","repositories":["`+repo+`"],"allowed_operations":["gitea.read","gitea.pr.merge"]}]}`), 0o600)
	one := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=merge-one", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoMergePullRequest")
	wantDenied(t, one, "repoMergePullRequest", "POST", fmt.Sprintf("/repos/%s/pulls/%d/merge", repo, pr2.Number),
		map[string]any{"owner": owner, "repo": name, "index": pr2.Number, "body": map[string]any{"do": "merge", "head_commit_id": pr2.Head.SHA, "delete_branch_after_merge": false}},
		"gitea.pr.merge", fmt.Sprintf("description references %q, outside the repositories of merge-one", secret))
	for _, p := range []string{fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), fmt.Sprintf("/repos/%s/pulls/%d", repo, pr2.Number),
		fmt.Sprintf("/repos/%s/issues/%d", repo, local.Number), fmt.Sprintf("/repos/%s/issues/%d", secret, far.Number)} {
		if _, _, data, err := g.api("alice", "GET", p, nil); err != nil || !strings.Contains(string(data), `"state":"open"`) {
			t.Errorf("%s changed: %v %.200s", p, err, data)
		}
	}
}

// TestE2ERefusalsAuditedLookups: found by attacking the audit. A refused
// profile switch and gitea_call_operation naming an operation that is
// unknown or disabled (DISABLED_TOOLS) wrote no audit line; a disabled read
// still writes none.
func TestE2ERefusalsAuditedLookups(t *testing.T) {
	g := needGitea(t)
	dir := t.TempDir()
	audit, config := filepath.Join(dir, "audit.log"), filepath.Join(dir, "profiles.json")
	os.WriteFile(config, []byte(`{"allow_runtime_switching": true}`), 0o600)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer", "GITEA_MCP_CONFIG="+config, "GITEA_AUDIT_LOG="+audit, "DISABLED_TOOLS=repoDelete,repoGet")
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"gitea_activate_profile", map[string]any{"profile": "gitea-ownr"}},
		{"gitea_call_operation", map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}},
		{"gitea_call_operation", map[string]any{"operation": "repoDeleteEverything", "arguments": map[string]any{}}},
		{"gitea_call_operation", map[string]any{"operation": "repoGet", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}},
	} {
		if res, isErr := c.callTool(call.tool, call.args); !isErr {
			t.Errorf("%s %v: not refused: %v", call.tool, call.args, res)
		}
	}
	data, err := os.ReadFile(audit)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e auditEntry
		decodeJSON(t, []byte(l), &e)
		got = append(got, e.Decision+" "+e.Tool+" "+e.Operation+" "+e.Rule)
	}
	want := []string{"denied gitea_activate_profile  profile selection", "denied gitea_call_operation repoDelete operation lookup",
		"denied gitea_call_operation  operation lookup"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("audit lines mismatch (-want +got):\n%s", diff)
	}
}

// TestE2ECrossReferenceOutside: found by attacking the allowlist. A comment
// in a repository of the list that references an issue of a private
// repository outside it ("see owner/name#N") made Gitea record a
// cross-reference in that issue's timeline (a write outside the list; with a
// closing keyword in a commit or merge message, it closes it). It is refused
// on every door; the issue's timeline stays empty.
func TestE2ECrossReferenceOutside(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	secret, _ := scratchRepo(t, g, "secret", true)
	s := &giteaSetup{g: g}
	var far struct{ Number int }
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "far"}, http.StatusCreated, &far)
	if s.err != nil {
		t.Fatal(s.err)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"demo-only","repositories":["`+g.Repo+`"],"allowed_operations":["gitea.read","gitea.issue.comment"]}]}`), 0o600)
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=demo-only", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=issueCreateComment")
	ref := fmt.Sprintf("%s#%d", secret, far.Number)
	wantDenied(t, c, "issueCreateComment", "POST", fmt.Sprintf("/repos/%s/issues/%d/comments", g.Repo, g.Issues[0]),
		map[string]any{"owner": owner, "repo": name, "index": g.Issues[0], "body": map[string]any{"body": "see " + ref}},
		"gitea.issue.comment", fmt.Sprintf("names %q, outside the repositories of demo-only", secret))
	status, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d/timeline", secret, far.Number), nil)
	var events []map[string]any
	if err != nil || status != 200 || json.Unmarshal(data, &events) != nil || len(events) != 0 {
		t.Errorf("the issue outside the list: timeline %d %v %.300s, want 200 and no events", status, err, data)
	}
	// The control: the same reference, posted straight to Gitea (in an issue
	// of its own repository, leaving the shared fixtures alone), does give the
	// issue outside a timeline event, so an empty timeline above means refused.
	if status, _, data, err := g.api("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "control", "body": "see " + ref}); err != nil || status != 201 {
		t.Fatalf("control issue: %d %v %s", status, err, data)
	}
	status, _, data, err = g.api("alice", "GET", fmt.Sprintf("/repos/%s/issues/%d/timeline", secret, far.Number), nil)
	if err != nil || status != 200 || json.Unmarshal(data, &events) != nil || len(events) == 0 {
		t.Errorf("control: the comment sent straight to Gitea left no timeline event on %s: %d %v %.300s", ref, status, err, data)
	}
}

// TestE2EErrorMessageCut: found by attacking redaction near truncation
// bounds. Gitea's error messages echo what they were given (a ref: "object
// does not exist [id: REF, ...]"); the message was cut to its 500 bytes
// before it was redacted and masked, so a secret straddling the cut reached
// the model as a prefix that neither the exact redaction nor a pattern
// matches any longer: 18 characters of the caller's own token, or of a
// GitHub token. Now the whole message is scrubbed, then cut.
func TestE2EErrorMessageCut(t *testing.T) {
	g := needGitea(t)
	owner, name := ownerRepo(g)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=gitea-owner")
	const echoed = "not found: object does not exist [id: " // what Gitea says before the ref
	for _, secret := range []struct{ text, part string }{
		{g.Tokens["alice"], g.Tokens["alice"][:12]},
		{"ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd", "R2d2C3po"},
	} {
		// The ref puts the secret's first 20 bytes before byte 500 of the message and the rest after.
		ref := strings.Repeat("r", maxErrorMessage-20-len(echoed)-len(secret.text)+len(strings.TrimPrefix(secret.text, "ghp_"))) + secret.text
		res, isErr := c.callTool("repoGetContents", map[string]any{"owner": owner, "repo": name, "filepath": "x", "ref": ref})
		msg := str(get(res, "error.message"))
		if !isErr || !strings.Contains(msg, "object does not exist") {
			t.Fatalf("want Gitea's 404 echoing the ref, got %v", res)
		}
		if len(msg) < maxErrorMessage-30 {
			t.Fatalf("the message (%d bytes) was not cut, so the secret did not straddle the cut: %q", len(msg), msg)
		}
		if strings.Contains(msg, secret.part) {
			t.Errorf("the error message carries part of a secret: ...%q", msg[max(0, len(msg)-60):])
		}
	}
}

// TestE2ERawPathTricks: tried while attacking the allowlist through
// gitea_api_request, and refused before anything is sent (nothing was found):
// other spellings of a private repository outside the list (case, ".git",
// look-alike letters, by id), dot segments, empty and percent-encoded
// segments, a trailing slash or ";", the route in another case, a lower-case
// method, query parameters Gitea reads but the operation does not document,
// and a comparison with a head outside the list. None reaches its issue.
func TestE2ERawPathTricks(t *testing.T) {
	g := needGitea(t)
	secret, id := scratchRepo(t, g, "secret", true)
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+secret+"/issues", map[string]any{"title": "TOPSECRET"}, http.StatusCreated, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	sOwner, sName, _ := strings.Cut(secret, "/")
	issue := fmt.Sprintf("/repos/%s/issues/%d", g.Repo, g.Issues[0])
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"demo-only","repositories":["`+g.Repo+`"],"allowed_operations":["gitea.read"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=demo-only", "GITEA_MCP_CONFIG="+config)
	for _, tt := range []struct {
		method, path string
		query        map[string]any
		kind         string
	}{
		{"GET", "/repos/" + strings.ToUpper(secret) + "/issues", nil, "permission_denied"},
		{"GET", "/repos/" + secret + ".git/issues", nil, "permission_denied"},
		{"GET", "/repos/" + sOwner + "/" + strings.Replace(sName, "s", "ſ", 1) + "/issues", nil, "permission_denied"},
		{"GET", "/repos/" + sOwner + "/" + strings.Replace(sName, "e", "е", 1) + "/issues", nil, "permission_denied"}, // Cyrillic е
		{"GET", fmt.Sprintf("/repositories/%d", id), nil, "permission_denied"},
		{"GET", "/repos/" + g.Repo + "/../" + sName + "/issues", nil, "invalid_request"},
		{"GET", "/repos/" + sOwner + "//" + sName + "/issues", nil, "invalid_request"},
		{"GET", "/repos/" + g.Repo + "/raw/..%2f..%2f" + sName, nil, "invalid_request"},
		{"GET", issue + "/", nil, "invalid_request"},
		{"GET", issue + ";x", nil, "invalid_arguments"},
		{"GET", "/Repos/" + secret + "/issues", nil, "invalid_request"},
		{"get", "/repos/" + secret + "/issues", nil, "invalid_arguments"},
		{"GET", "/repos/" + g.Repo + "/issues", map[string]any{"sudo": "bob"}, "invalid_request"},
		{"GET", "/repos/" + g.Repo + "/issues", map[string]any{"access_token": "x"}, "invalid_request"},
		{"GET", "/repos/issues/search", map[string]any{"q": "TOPSECRET"}, "permission_denied"},
		{"GET", "/repos/" + g.Repo + "/compare/main..." + secret + ":main", nil, "permission_denied"},
	} {
		args := map[string]any{"method": tt.method, "path": tt.path}
		if tt.query != nil {
			args["query"] = tt.query
		}
		res, isErr := c.callTool("gitea_api_request", args)
		if kind := str(get(res, "error.kind")); !isErr || kind != tt.kind || strings.Contains(fmt.Sprint(res), "TOPSECRET") {
			t.Errorf("%s %s %v: got %s, want %s: %.300v", tt.method, tt.path, tt.query, kind, tt.kind, res)
		}
	}
}

// TestE2EMergeFilesHidden: found by attacking the workflow gates with
// content. The merge gate "changed files are exactly expected_changed_files"
// compared the file names as the result pipeline delivers them, hidden
// characters removed: a pull request adding "a<U+200B>.go" passed for an
// expected "a.go", the gate saying "changed: a.go", and was merged. Now a
// name the pipeline altered cannot be compared, and the gate refuses.
func TestE2EMergeFilesHidden(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "zwfile", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	pr := s.topicPR("bob", repo, "zw", "add a.go", "a\u200b.go")
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-merger")
	waitMergeable(t, c, owner, name, pr.Number)
	res, isErr := c.callTool("gitea_merge_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "head_sha": pr.Head.SHA,
		"confirm": fmt.Sprintf("MERGE PR %d", pr.Number), "expected_changed_files": []string{"a.go"}})
	if !isErr || get(res, "data.merged") != false || !strings.Contains(str(get(res, "data.gates")), "gate:changed files are exactly expected_changed_files passed:false") {
		t.Errorf("merge of a<U+200B>.go expected as a.go: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"merged":false`) {
		t.Errorf("the pull request was merged: %v %.200s", err, data)
	}
}

// TestE2EReconcileHiddenBase: found by attacking the workflow gates with
// content. The reconciler read the base branch by its name as the result
// pipeline delivers it, hidden characters removed: a pull request into
// "ma<U+200B>in", whose head had landed in main only, was proven "contained
// in main" and closed. Now the branch read must be at the pull request's own
// base commit; the pull request stays open.
func TestE2EReconcileHiddenBase(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "zwbase", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/repos/"+repo+"/branches", map[string]any{"new_branch_name": "ma\u200bin", "old_branch_name": "main"}, http.StatusCreated, nil)
	s.call("bob", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": "topic", "message": "topic",
		"files": []map[string]string{{"operation": "create", "path": "t.txt", "content": base64.StdEncoding.EncodeToString([]byte("t\n"))}}}, http.StatusCreated, nil)
	var pr, landed struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "ma\u200bin", "title": "topic"}, http.StatusCreated, &pr)
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "topic", "base": "main", "title": "topic into main"}, http.StatusCreated, &landed)
	if s.err != nil {
		t.Fatal(s.err)
	}
	mergeRetry(t, g, "alice", repo, landed.Number) // the head lands in main, not in the other base
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=prgs-reconciler")
	res, isErr := c.callTool("gitea_reconcile_already_landed_pr", map[string]any{"owner": owner, "repo": name, "index": pr.Number})
	if !isErr || get(res, "data.closed") != false || !strings.Contains(str(get(res, "data.gates")), "gate:head already in base passed:false") {
		t.Errorf("reconcile of a pull request into ma<U+200B>in: %v", res)
	}
	if _, _, data, err := g.api("alice", "GET", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number), nil); err != nil || !strings.Contains(string(data), `"state":"open"`) {
		t.Errorf("the pull request was closed: %v %.200s", err, data)
	}
}
