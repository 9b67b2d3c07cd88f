package main

import (
	"net/http"
	"os"
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
