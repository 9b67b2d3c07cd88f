package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestPushMirrorRemoteJudged: under repositories, a push mirror's remote is
// judged as a migration's source is (Gitea pushes every ref there, mirrored):
// an owner/name this Gitea has, whatever the host, under a path prefix and
// as a wiki too, outside the list is refused, and so is a path on the
// server's disk; a sync is judged by every push mirror Gitea lists. 192.0.2.10
// is a documentation address, neither this Gitea's nor private, never reached.
func TestPushMirrorRemoteJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo"], "allowed_operations": ["gitea.read", "gitea.repo.admin"]}]}`), 0o600)
	const mirrors, secret = "/repos/alice/demo/push_mirrors", "GET /repos/carol/secret"
	add := func(addr string) map[string]any {
		return map[string]any{"operation": "repoAddPushMirror", "arguments": map[string]any{"owner": "alice", "repo": "demo",
			"body": map[string]any{"remote_address": addr, "remote_username": "carol", "remote_password": "x", "interval": "8h"}}}
	}
	sync := map[string]any{"operation": "repoPushMirrorSync", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}
	script := func(status int, pages ...fakeAnswer) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").on("GET", "/repos/carol/secret", status, `{"id":1}`).on("POST", mirrors, 200, `{}`).on("POST", "/repos/alice/demo/push_mirrors-sync", 200, `{}`)
			if len(pages) > 0 {
				f.answer("GET", mirrors, pages...)
			}
		}
	}
	denied := func(op string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: sent,
			Reason: op + ` writes to "carol/secret", which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of demo-admin`}
	}
	const listed = `[{"remote_address":"https://192.0.2.10/nobody/elsewhere.git"},{"remote_address":"https://192.0.2.10/carol/secret.git"}]`
	runLiveCases(t, []liveCase{
		{"a name this Gitea has", "demo-admin", script(200), "gitea_call_operation", add("https://carol:x@192.0.2.10/carol/secret.git"), denied("repoAddPushMirror", secret)},
		{"under a prefix, its wiki", "demo-admin", script(200), "gitea_call_operation", add("http://192.0.2.10/git/carol/secret.wiki.GIT"), denied("repoAddPushMirror", secret)},
		{"a name it may have", "demo-admin", script(500), "gitea_call_operation", add("http://192.0.2.10/carol/secret"), denied("repoAddPushMirror", secret)},
		{"a path on the server's disk", "demo-admin", script(404), "gitea_call_operation", add("/var/lib/gitea/repos/carol/secret.git"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin",
				Reason: `repoAddPushMirror: remote_address "/var/lib/gitea/repos/carol/secret.git" is not a URL with a host, so demo-admin cannot tell which repository it writes to`}},
		{"a name it has not", "demo-admin", script(404), "gitea_call_operation", add("http://192.0.2.10/carol/secret.git"),
			liveGot{Sent: []string{secret, "POST " + mirrors}}},
		{"a sync pushing to one outside", "demo-admin", script(200, fakeWith(200, listed, "X-Total-Count", "2")), "gitea_call_operation", sync,
			denied("repoPushMirrorSync", "GET "+mirrors, "GET /repos/nobody/elsewhere", secret)},
		{"a sync whose mirrors Gitea does not list whole", "demo-admin", script(404, fakeWith(200, listed, "X-Total-Count", "3"), fakeWith(200, `[]`, "X-Total-Count", "3")), "gitea_call_operation", sync,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{"GET " + mirrors, "GET " + mirrors},
				Reason: `cannot read from Gitea every push mirror of "alice/demo", each of which a sync writes to; refusing`}},
		{"a sync pushing elsewhere only", "demo-admin", script(404, fakeWith(200, listed, "X-Total-Count", "2")), "gitea_call_operation", sync,
			liveGot{Sent: []string{"GET " + mirrors, "GET /repos/nobody/elsewhere", secret, "POST /repos/alice/demo/push_mirrors-sync"}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestMaintainerEditJudged: under repositories, a pull request's
// allow_maintainer_edit set true, which opens its head branch to every writer
// of the base repository, is judged by the head repository, read live;
// setting it false, or another field, reads nothing.
func TestMaintainerEditJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-author", "repositories": ["alice/demo"], "allowed_operations": ["gitea.read", "gitea.pr.create"]}]}`), 0o600)
	edit := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "repoEditPullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": body}}
	}
	script := func(head string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").on("PATCH", prPath, 201, `{}`)
			if head != "" {
				f.json(prPath, map[string]any{"head": map[string]any{"ref": "topic", "sha": "abc", "repo": map[string]any{"full_name": head}}})
			} else {
				f.on("GET", prPath, 404, `{}`)
			}
		}
	}
	open := map[string]any{"allow_maintainer_edit": true}
	runLiveCases(t, []liveCase{
		{"a head outside", "demo-author", script("bob/demo"), "gitea_call_operation", edit(open),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Sent: []string{"GET " + prPath},
				Reason: `allow_maintainer_edit lets the writers of "alice/demo" push to the head branch "topic" of "bob/demo", outside the repositories of demo-author`}},
		{"a head Gitea does not show", "demo-author", script(""), "gitea_call_operation", edit(open),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Sent: []string{"GET " + prPath},
				Reason: "cannot read from Gitea the pull request's head repository, which allow_maintainer_edit opens to the writers of its base; refusing"}},
		{"a head in the list", "demo-author", script("Alice/Demo"), "gitea_call_operation", edit(open),
			liveGot{Sent: []string{"GET " + prPath, "PATCH " + prPath}}},
		{"closing it again", "demo-author", script("bob/demo"), "gitea_call_operation", edit(map[string]any{"allow_maintainer_edit": false}),
			liveGot{Sent: []string{"PATCH " + prPath}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestRemotePathFormsJudged: a repository address is read with its path
// cleaned, as Gitea (repeated slashes) and git (dot segments) read it: a
// migration's source and a push mirror's remote at carol//secret,
// carol/secret.git/. or x/../carol/secret are carol/secret.
func TestRemotePathFormsJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo"], "allowed_operations": ["gitea.read", "gitea.repo.admin", "gitea.repo.create"]}]}`), 0o600)
	migrate := func(src string) map[string]any {
		return map[string]any{"operation": "repoMigrate", "arguments": map[string]any{"body": map[string]any{"clone_addr": src, "repo_owner": "alice", "repo_name": "demo"}}}
	}
	mirror := func(addr string) map[string]any {
		return map[string]any{"operation": "repoAddPushMirror", "arguments": map[string]any{"owner": "alice", "repo": "demo",
			"body": map[string]any{"remote_address": addr, "interval": "8h"}}}
	}
	script := func(f *scriptedGitea) {
		f.user("bob").on("GET", "/repos/carol/secret", 200, `{"id":1}`).on("POST", "/repos/migrate", 201, `{}`).on("POST", "/repos/alice/demo/push_mirrors", 200, `{}`)
	}
	denied := func(op, perm, verb string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: perm, Sent: []string{"GET /repos/carol/secret"},
			Reason: op + " " + verb + ` "carol/secret", which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of demo-admin`}
	}
	var cases []liveCase
	for _, form := range []string{"/carol//secret.git", "//carol/secret.git/", "/carol/secret.git/.", "/x/../carol/secret", "/carol/./secret.wiki.git/info/lfs/"} {
		cases = append(cases,
			liveCase{"migrate " + form, "demo-admin", script, "gitea_call_operation", migrate("https://192.0.2.10" + form), denied("repoMigrate", "gitea.repo.create", "reads")},
			liveCase{"push mirror " + form, "demo-admin", script, "gitea_call_operation", mirror("https://192.0.2.10" + form), denied("repoAddPushMirror", "gitea.repo.admin", "writes to")})
	}
	runLiveCases(t, cases, "GITEA_MCP_CONFIG", config)
}
