package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestE2ERedteam21PushMirrorTarget: found by the red team. Under
// repositories a migration whose source is a repository of this Gitea
// outside the list is refused, but a push mirror, which writes the other
// way, went unjudged: repoAddPushMirror on a repository of the list, its
// remote_address naming a repository this Gitea has outside it, was
// accepted and stored by Gitea (routers/api/v1/repo/mirror.go
// CreatePushMirror), which then pushes every ref there, mirrored (force,
// branches it lacks deleted), at each interval, on each commit with
// sync_on_commit, and on repoPushMirrorSync (services/mirror/mirror_push.go
// runPushSync). 192.0.2.10 is a documentation address, never reached (Gitea
// itself refuses a loopback address while ALLOW_LOCALNETWORKS is off, as
// here). Org- and user-level Actions secrets and variables, packages and
// organization webhooks, which touch every repository of their owner, stay
// refused: their paths name no single repository.
func TestE2ERedteam21PushMirrorTarget(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt21mirror", false)
	owner, name, _ := strings.Cut(repo, "/")
	secret, _ := scratchRepo(t, g, "rt21secret", true)
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"mirror-only","repositories":["`+repo+`"],
		"allowed_operations":["gitea.read","gitea.repo.admin","gitea.actions.write","gitea.package.write","gitea.webhook.write"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=mirror-only", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoAddPushMirror,repoPushMirrorSync,updateOrgSecret,updateUserSecret,createUserVariable,deletePackage,unlinkPackage,orgCreateHook")
	for addr, named := range map[string]string{"https://192.0.2.10/" + secret + ".git": secret, "http://192.0.2.10/git/" + strings.ToUpper(secret): strings.ToUpper(secret),
		g.URL + "/" + secret + ".wiki.git": secret} {
		wantDenied(t, c, "repoAddPushMirror", "POST", "/repos/"+repo+"/push_mirrors", map[string]any{"owner": owner, "repo": name,
			"body": map[string]any{"remote_address": addr, "remote_username": "alice", "remote_password": "x", "interval": "0"}},
			"gitea.repo.admin", `repoAddPushMirror writes to "`+named+`", which is on this Gitea or may be`)
	}
	var mirrors []struct {
		RemoteAddress string `json:"remote_address"`
	}
	s := &giteaSetup{g: g}
	if s.call("alice", "GET", "/repos/"+repo+"/push_mirrors", nil, http.StatusOK, &mirrors); s.err != nil {
		t.Fatal(s.err)
	}
	if len(mirrors) != 0 {
		t.Errorf("Gitea holds push mirrors of %s: %v", repo, mirrors)
	}
	// A push mirror to a repository this Gitea does not have is another host's
	// business (the server does not track where data flows): allowed, and
	// Gitea stores it; a sync then pushes there only.
	other := map[string]any{"remote_address": "https://192.0.2.10/nobody/" + name + "-elsewhere.git", "interval": "0"}
	if res, isErr := c.callTool("repoAddPushMirror", map[string]any{"owner": owner, "repo": name, "body": other}); isErr {
		t.Errorf("a push mirror to another host: %v", res)
	}
	// Gitea now pushes to every mirror of the repository: each is judged.
	s.call("alice", "POST", "/repos/"+repo+"/push_mirrors", map[string]any{"remote_address": "https://192.0.2.10/" + secret + ".git", "interval": "0"}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	wantDenied(t, c, "repoPushMirrorSync", "POST", "/repos/"+repo+"/push_mirrors-sync", map[string]any{"owner": owner, "repo": name},
		"gitea.repo.admin", `repoPushMirrorSync writes to "`+secret+`", which is on this Gitea or may be`)

	for _, tc := range []struct {
		op, method, path string
		args             map[string]any
		perm             string
	}{
		{"updateOrgSecret", "PUT", "/orgs/org1/actions/secrets/DEPLOY", map[string]any{"org": "org1", "secretname": "DEPLOY", "body": map[string]any{"data": "x"}}, "gitea.actions.write"},
		{"updateUserSecret", "PUT", "/user/actions/secrets/DEPLOY", map[string]any{"secretname": "DEPLOY", "body": map[string]any{"data": "x"}}, "gitea.actions.write"},
		{"createUserVariable", "POST", "/user/actions/variables/STAGE", map[string]any{"variablename": "STAGE", "body": map[string]any{"value": "x"}}, "gitea.actions.write"},
		{"deletePackage", "DELETE", "/packages/alice/generic/tool", map[string]any{"owner": "alice", "type": "generic", "name": "tool"}, "gitea.package.write"},
		{"unlinkPackage", "POST", "/packages/alice/generic/tool/-/unlink", map[string]any{"owner": "alice", "type": "generic", "name": "tool"}, "gitea.package.write"},
		{"orgCreateHook", "POST", "/orgs/org1/hooks", map[string]any{"org": "org1", "body": map[string]any{"type": "gitea", "config": map[string]any{"url": "https://192.0.2.10/h", "content_type": "json"}}}, "gitea.webhook.write"},
	} {
		wantDenied(t, c, tc.op, tc.method, tc.path, tc.args, tc.perm, "names no single repository")
	}
}

// TestE2ERedteam21MaintainerEdit: found by the red team. A pull request's
// allow_maintainer_edit lets every writer of its base repository push to its
// head branch (models/issues/pull_list.go CanMaintainerWriteToBranch, asked by
// the contents API of the head repository): bob, limited to the base
// repository, set it on his pull request from his fork, outside the list,
// and carol, a writer of the base who had no access to the fork, could then
// commit to the fork's branch. (Gitea sets it on a new pull request unless the
// base repository's default_allow_maintainer_edit is false, as here.)
func TestE2ERedteam21MaintainerEdit(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt21maint", false)
	owner, name, _ := strings.Cut(repo, "/")
	fork := "bob/" + name + "-fork"
	s := &giteaSetup{g: g}
	s.call("alice", "PATCH", "/repos/"+repo, map[string]any{"default_allow_maintainer_edit": false}, http.StatusOK, nil)
	s.call("bob", "POST", "/repos/"+repo+"/forks", map[string]string{"name": name + "-fork"}, http.StatusAccepted, nil)
	t.Cleanup(func() { g.api("bob", "DELETE", "/repos/"+fork, nil) })
	s.call("bob", "POST", "/repos/"+fork+"/contents", map[string]any{"branch": "main", "new_branch": "fork-topic", "message": "from the fork",
		"files": []map[string]string{{"operation": "create", "path": "fork.txt", "content": base64.StdEncoding.EncodeToString([]byte("fork\n"))}}}, http.StatusCreated, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "bob:fork-topic", "base": "main", "title": "from a fork"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	carolWrites := func() int {
		status, _, _, err := g.api("carol", "POST", "/repos/"+fork+"/contents/carol.txt", map[string]any{"branch": "fork-topic", "message": "by carol",
			"content": base64.StdEncoding.EncodeToString([]byte("carol\n"))})
		if err != nil {
			t.Fatal(err)
		}
		return status
	}
	if status := carolWrites(); status != http.StatusForbidden {
		t.Fatalf("carol's commit to %s before: status %d, want 403", fork, status)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"base-only","repositories":["`+repo+`"],"allowed_operations":["gitea.read","gitea.pr.create"]}]}`), 0o600)
	c := e2eClient(t, g, "bob", "GITEA_MCP_PROFILE=base-only", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoEditPullRequest")
	wantDenied(t, c, "repoEditPullRequest", "PATCH", fmt.Sprintf("/repos/%s/pulls/%d", repo, pr.Number),
		map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"allow_maintainer_edit": true}},
		"gitea.pr.create", `allow_maintainer_edit lets the writers of "`+repo+`" push to the head branch "fork-topic" of "`+fork+`", outside the repositories of base-only`)
	if status := carolWrites(); status != http.StatusForbidden {
		t.Errorf("carol's commit to %s after: status %d, want 403", fork, status)
	}
	// A pull request whose head is in the list may open its head to the base's writers.
	if res, isErr := c.callTool("repoEditPullRequest", map[string]any{"owner": owner, "repo": name, "index": pr.Number, "body": map[string]any{"title": "still from a fork"}}); isErr {
		t.Errorf("a title edit: %v", res)
	}
}

// TestE2ERedteam21RemotePathForms: found by the red team. A repository
// address was judged by its last two path segments as written, but Gitea
// collapses repeated slashes (modules/web/router.go normalizeRequestPath) and
// git, through curl, resolves "." and ".." segments before it asks: git reads
// the repository outside the list at .../owner//name.git,
// .../owner/name.git/. and .../x/../owner/name.git, which were taken as naming
// no repository of this Gitea (an empty owner, or owner "name.git" with
// repository ".", or owner ".."), so a push mirror there was accepted and
// stored by Gitea; a migration's source was read the same way.
func TestE2ERedteam21RemotePathForms(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt21forms", false)
	owner, name, _ := strings.Cut(repo, "/")
	secret, _ := scratchRepo(t, g, "rt21hidden", true)
	so, sn, _ := strings.Cut(secret, "/")
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"mirror-only","repositories":["`+repo+`"],"allowed_operations":["gitea.read","gitea.repo.admin"]}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_PROFILE=mirror-only", "GITEA_MCP_CONFIG="+config, "GITEA_MCP_TOOLS=repoAddPushMirror")
	for _, form := range []string{"/" + so + "//" + sn + ".git", "/" + so + "/" + sn + ".git/.", "/nobody/../" + so + "/" + sn + ".git"} {
		u, err := url.Parse(g.URL + form)
		if err != nil {
			t.Fatal(err)
		}
		u.User = url.UserPassword("alice", g.Tokens["alice"])
		if out, err := exec.Command("git", "ls-remote", u.String()).CombinedOutput(); err != nil || !strings.Contains(string(out), "refs/heads/main") {
			t.Errorf("git ls-remote %s: %v\n%s", form, err, strings.ReplaceAll(string(out), g.Tokens["alice"], "TOKEN"))
		}
		wantDenied(t, c, "repoAddPushMirror", "POST", "/repos/"+repo+"/push_mirrors", map[string]any{"owner": owner, "repo": name,
			"body": map[string]any{"remote_address": "https://192.0.2.10" + form, "remote_username": "alice", "remote_password": "x", "interval": "0"}},
			"gitea.repo.admin", `repoAddPushMirror writes to "`+secret+`", which is on this Gitea or may be`)
	}
	var mirrors []struct {
		RemoteAddress string `json:"remote_address"`
	}
	s := &giteaSetup{g: g}
	if s.call("alice", "GET", "/repos/"+repo+"/push_mirrors", nil, http.StatusOK, &mirrors); s.err != nil || len(mirrors) != 0 {
		t.Errorf("Gitea holds push mirrors of %s: %v %v", repo, mirrors, s.err)
	}
}
