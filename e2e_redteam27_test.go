package main

import (
	"encoding/base64"
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// rt27Pass is the password the configuration files of round 27 hold; each
// file writes it in a shape generic_secret did not read as an assignment.
const rt27Pass = "Tr0ub4dor-and-3-staging"

// rt27Files are configuration files as a repository holds them, each with
// rt27Pass in it: a Maven settings.xml's <password>, an XML <apiKey>, a
// NuGet.config's ClearTextPassword and a web.config's appSettings (key=
// then value=), a Kubernetes env pair (name: on one line, value: on the
// next), an ECS task definition's {"name": ..., "value": ...}, and a
// script's curl -u user:password.
var rt27Files = map[string]string{
	"settings.xml": "<settings>\n  <servers>\n    <server>\n      <id>nexus</id>\n      <username>deploy</username>\n      <password>" + rt27Pass + "</password>\n    </server>\n  </servers>\n</settings>\n",
	"client.xml":   "<client>\n  <endpoint>https://api.example.com</endpoint>\n  <apiKey>" + rt27Pass + "</apiKey>\n</client>\n",
	"NuGet.config": "<configuration>\n  <packageSourceCredentials>\n    <feed>\n      <add key=\"Username\" value=\"deploy\" />\n      <add key=\"ClearTextPassword\" value=\"" + rt27Pass + "\" />\n    </feed>\n  </packageSourceCredentials>\n</configuration>\n",
	"web.config":   "<configuration>\n  <appSettings>\n    <add key=\"StripeSecret\" value=\"" + rt27Pass + "\" />\n  </appSettings>\n</configuration>\n",
	"deploy.yaml":  "spec:\n  containers:\n    - name: app\n      env:\n        - name: DB_PASSWORD\n          value: " + rt27Pass + "\n        - name: DB_HOST\n          value: db\n",
	"task.json":    "{\"containerDefinitions\": [{\"name\": \"app\", \"environment\": [\n  {\"name\": \"API_TOKEN\", \"value\": \"" + rt27Pass + "\"}\n]}]}\n",
	"upload.sh":    "#!/bin/sh\ncurl -u deploy:" + rt27Pass + " -T dist/app.tgz https://nexus.example.com/repository/raw/\n",
}

// TestE2ERedteam27ConfigShapes: found by the red team. Before the fix carol,
// under gitea-reviewer, read rt27Pass whole in each of rt27Files through
// repoGetRawFile: generic_secret masked a name's value only after ':' or
// '=' right after the name.
func TestE2ERedteam27ConfigShapes(t *testing.T) {
	rawFilesMasked(t, "rt27conf", rt27Files)
}

// rawFilesMasked commits files (path: text) to a new repository with prefix
// and reads each through the raw route as carol under gitea-reviewer: each
// must come back with rt27Pass masked, the text before it kept.
func rawFilesMasked(t *testing.T, prefix string, files map[string]string) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, prefix, false)
	s := &giteaSetup{g: g}
	var changes []map[string]string
	for path, text := range files {
		changes = append(changes, map[string]string{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString([]byte(text))})
	}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "add the configuration", "files": changes}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for path, want := range files {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/raw/" + path})
		text := str(get(res, "data"))
		if first, _, _ := strings.Cut(want, rt27Pass); !strings.Contains(text, first) {
			t.Fatalf("%s: %v", path, res)
		}
		if strings.Contains(text, rt27Pass) || !strings.Contains(text, "[MASKED]") {
			t.Errorf("%s holds the password: %s", path, text)
		}
	}
}

// rt27Keys are provider keys of shapes no rule knew, each with its secret
// part: a PyPI upload token, an npm access token, an Azure storage account
// key and a Service Bus shared access key in connection strings, a
// DigitalOcean personal access token, a HashiCorp Vault service token, a
// Docker Hub access token, a Hugging Face token, a SendGrid key, a GitLab
// runner's registration token (GR1348941), authentication token (glrt-)
// and a deploy token (gldt-), an age secret key (as SOPS keeps one) and a
// Grafana service account token.
var rt27Keys = [][2]string{
	{"twine upload -u __token__ -p pypi-", "AgEIcHlwaS5vcmcCJGNkZjM1ZTg0LTJmNTgtNDY0Mi1hMmZiLWNmNWFlYjI4NzNhZQACKlszLCJhNjE3YjI1NC0xNDJiLTRiZWItYTk2Mi1lZGM0NjVjYzQ5NzYiXQAABiA8tR2d2C3poLukeLeiaHanSolo0123456789AbCd"},
	{"npm config set //registry.npmjs.org/:_authToken npm_", "R2d2C3poLukeLeiaHanSolo0123456789AbC"},
	{"DefaultEndpointsProtocol=https;AccountName=ci0123;AccountKey=", "R2d2C3poLukeLeiaHanSolo0123456789AbR2d2C3poLukeLeiaHanSolo0123456789AbR2d2C3poLukeLe+/=="},
	{"Endpoint=sb://ci0123.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=", "R2d2C3poLukeLeiaHanSolo0123456789Ab+2d2C3p="},
	{"doctl auth init -t dop_v1_", "0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9"},
	{"VAULT_TOKEN hvs.", "CAESIR2d2C3poLukeLeiaHanSolo0123456789AbCdEfGhIjGh4KHGh2cy5SMmQyQzNwb0x1a2VMZWlh"},
	{"docker login -u ci -p dckr_pat_", "R2d2C3poLukeLeiaHanSolo0-_"},
	{"HF_HUB hf_", "RdCpoLukeLeiaHanSoloAbCdEfGhIjKlMn"},
	{"gitlab-runner register --url https://gitlab.example.com --registration-token GR1348941", "R2d2C3poLukeLeiaHanS"},
	{"[[runners]] authenticated with glrt-", "R2d2C3poLukeLeiaHanSolo_01"},
	{"deploy token gldt-", "R2d2C3poLukeLeiaHanSolo-01"},
	{"# created: 2026-12-04\n# public key: age1ql3z7hjy54pw3hyww5ayyfg7zqgvc7w3j2elw8zmrj2kg5sfn9aqmcac8p\nAGE-SECRET-KEY-1", "YKLE55JPJRTDHHZ56VU4WQ0YJ9PGA7TM36CXAJ4D0WAQU5MWXQ0RCJDYQ4"},
	{"GF_TOKEN glsa_", "R2d2C3poLukeLeiaHanSolo0123456Ab_0a1b2c3d"},
	{"SENDGRID SG.", "R2d2C3poLukeLeiaHanSol.R2d2C3poLukeLeiaHanSolo0123456789AbCdEfGhIj"},
}

// TestE2ERedteam27ProviderKeys: found by the red team. Before the fix carol,
// under gitea-reviewer, read each of rt27Keys whole in an issue's body
// (issueGetIssue) and in a commit's message (repoGetSingleCommit).
func TestE2ERedteam27ProviderKeys(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt27keys", false)
	owner, name, _ := strings.Cut(repo, "/")
	s := &giteaSetup{g: g}
	var lines []string
	for _, k := range rt27Keys {
		lines = append(lines, k[0]+k[1])
	}
	body := "the release notes, pasted:\n" + strings.Join(lines, "\n") + "\n"
	var issue struct{ Number int }
	var commit struct{ Commit struct{ SHA string } }
	s.call("alice", "POST", "/repos/"+repo+"/issues", map[string]any{"title": "release access", "body": body}, http.StatusCreated, &issue)
	s.call("alice", "POST", "/repos/"+repo+"/contents/notes.txt", map[string]any{"branch": "main", "message": "release notes\n\n" + body,
		"content": base64.StdEncoding.EncodeToString([]byte("notes\n"))}, http.StatusCreated, &commit)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for _, read := range []struct {
		op    string
		args  map[string]any
		field string
	}{
		{"issueGetIssue", map[string]any{"owner": owner, "repo": name, "index": issue.Number}, "data.body"},
		{"repoGetSingleCommit", map[string]any{"owner": owner, "repo": name, "sha": commit.Commit.SHA}, "data.commit.message"},
	} {
		res, _ := c.callTool("gitea_call_operation", map[string]any{"operation": read.op, "arguments": read.args})
		text := fmt.Sprint(get(res, read.field))
		if !strings.Contains(text, "the release notes") {
			t.Fatalf("%s: %v", read.op, res)
		}
		for _, k := range rt27Keys {
			if strings.Contains(text, k[1]) || !strings.Contains(text, k[0]+"[MASKED]") {
				t.Errorf("%s: %q not masked: %s", read.op, k[0], text)
			}
		}
	}
}

// rt27Commands are commands as a repository's documentation or an issue
// writes them, each with its secret after a flag and a blank: a Gitea
// runner's registration token (act_runner register), a Gitea token (tea
// login add) and a user's password (gitea admin user create).
var rt27Commands = [][2]string{
	{"./act_runner register --no-interactive --instance https://git.example.com --token ", "NFhKp2x7Qw9LmZr4Tb8Yc3Vd6Hs1Ja5Ge0Fu7Ki"},
	{"tea login add --name ci --url https://git.example.com --token ", "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},
	{"gitea admin user create --username ci --email ci@example.com --password ", "Tr0ub4dor-and-3-staging"},
}

// TestE2ERedteam27CommandFlags: found by the red team. Before the fix carol,
// under gitea-reviewer, read each secret of rt27Commands whole in a
// runbook through repoGetContents: generic_secret reads --token=s, not
// --token s.
func TestE2ERedteam27CommandFlags(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt27flag", false)
	s := &giteaSetup{g: g}
	text := "# Runbook\n\n```sh\n"
	for _, c := range rt27Commands {
		text += c[0] + c[1] + "\n"
	}
	text += "```\n"
	if s.call("alice", "POST", "/repos/"+repo+"/contents/docs/runbook.md", map[string]any{"branch": "main", "message": "the runbook",
		"content": base64.StdEncoding.EncodeToString([]byte(text))}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/contents/docs/runbook.md"})
	got := str(get(res, "data.content"))
	if !strings.Contains(got, "# Runbook") {
		t.Fatalf("the runbook: %v", res)
	}
	for _, c := range rt27Commands {
		if strings.Contains(got, c[1]) || !strings.Contains(got, c[0]+"[MASKED]") {
			t.Errorf("%q not masked: %s", c[0], got)
		}
	}
}

// rt27Auths are files that hold user:password in base64 as their tools
// write it, with that base64: a Docker client's config.json (auths, as a
// Kubernetes pull secret's .dockerconfigjson holds it too) and an .npmrc's
// _auth.
var rt27Auths = map[string][2]string{
	"docker/config.json": {`{"auths": {"registry.example.com": {"auth": "%s"}}}` + "\n", base64.StdEncoding.EncodeToString([]byte("deploy:" + rt27Pass))},
	".npmrc":             {"registry=https://npm.example.com/\n//npm.example.com/:_auth=%s\nalways-auth=true\n", base64.StdEncoding.EncodeToString([]byte("ci:" + rt27Pass))},
}

// TestE2ERedteam27BasicAuth: found by the red team. The base64 reading
// decodes each of rt27Auths to user:password, a password of no known
// shape, so before the fix carol, under gitea-reviewer, read both whole
// through repoGetRawFile.
func TestE2ERedteam27BasicAuth(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt27auth", false)
	s := &giteaSetup{g: g}
	var files []map[string]string
	for path, f := range rt27Auths {
		files = append(files, map[string]string{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString([]byte(fmt.Sprintf(f[0], f[1])))})
	}
	if s.call("alice", "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "message": "registry access", "files": files}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	for path, f := range rt27Auths {
		res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/raw/" + path})
		text := str(get(res, "data"))
		if first, _, _ := strings.Cut(f[0], "%s"); !strings.Contains(text, first) {
			t.Fatalf("%s: %v", path, res)
		}
		if strings.Contains(text, f[1][:12]) || strings.Contains(text, rt27Pass) {
			t.Errorf("%s holds the password: %s", path, text)
		}
	}
}

// TestE2ERedteam27EnvPairDiff: found by the red team. A diff writes each
// line of a Kubernetes env pair after '+' (or '-'), so the value's line
// does not follow the name's with blanks only: before the fix carol, under
// gitea-reviewer, read the password bob's pull request adds whole through
// its .diff, masked in the file itself.
func TestE2ERedteam27EnvPairDiff(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt27envdiff", false)
	s := &giteaSetup{g: g}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const base = "spec:\n  containers:\n    - name: app\n      env:\n        - name: DB_HOST\n          value: db\n"
	s.call("alice", "POST", "/repos/"+repo+"/contents/deploy.yaml", map[string]any{"branch": "main", "message": "deploy", "content": b64(base)}, http.StatusCreated, nil)
	var file struct{ SHA string }
	s.call("bob", "GET", "/repos/"+repo+"/contents/deploy.yaml", nil, http.StatusOK, &file)
	s.call("bob", "PUT", "/repos/"+repo+"/contents/deploy.yaml", map[string]any{"branch": "main", "new_branch": "db-auth", "message": "the database password",
		"sha": file.SHA, "content": b64(base + "        - name: DB_PASSWORD\n          value: " + rt27Pass + "\n")}, http.StatusOK, nil)
	var pr struct{ Number int }
	s.call("bob", "POST", "/repos/"+repo+"/pulls", map[string]string{"head": "db-auth", "base": "main", "title": "the database password"}, http.StatusCreated, &pr)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": fmt.Sprintf("/repos/%s/pulls/%d.diff", repo, pr.Number)})
	text := str(get(res, "data"))
	if !strings.Contains(text, "DB_PASSWORD") {
		t.Fatalf("the diff: %v", res)
	}
	if strings.Contains(text, rt27Pass) || !strings.Contains(text, "+          value: [MASKED]") {
		t.Errorf("the diff holds the password: %s", text)
	}
}

// TestE2ERedteam27EntityWithoutSemicolon: found by the red team. HTML
// decodes &quot, &amp, &lt, &gt and &nbsp without their ';' too (the
// legacy entities, as html.UnescapeString reads them), as a minifier or a
// hand-written page leaves them; the HTML reading decoded a text only where
// an entity had its ';', so before the fix carol, under gitea-reviewer,
// read the password and the Gitea token of site/setup.html whole through
// repoGetRawFile.
func TestE2ERedteam27EntityWithoutSemicolon(t *testing.T) {
	g := needGitea(t)
	repo, _ := scratchRepo(t, g, "rt27ent", false)
	s := &giteaSetup{g: g}
	const tok = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	page := "<h2>Setup</h2>\n<pre>export DB_PASSWORD=&quot" + rt27Pass + "&quot\ncurl -H &quotAuthorization: token&nbsp" + tok + "&quot https://git.example.com/api/v1/user</pre>\n"
	if s.call("alice", "POST", "/repos/"+repo+"/contents/site/setup.html", map[string]any{"branch": "main", "message": "build the docs",
		"content": base64.StdEncoding.EncodeToString([]byte(page))}, http.StatusCreated, nil); s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE=gitea-reviewer")
	res, _ := c.callTool("gitea_api_request", map[string]any{"method": "GET", "path": "/repos/" + repo + "/raw/site/setup.html"})
	text := str(get(res, "data"))
	if !strings.Contains(text, "<h2>Setup</h2>") {
		t.Fatalf("the page: %v", res)
	}
	if strings.Contains(text, rt27Pass) || strings.Contains(text, tok) {
		t.Errorf("the page holds a secret: %s", text)
	}
}
