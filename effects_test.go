package main

// Tests of the permissions that follow from a write's effects and of the
// repository allowlist on every repository a request touches or reveals.

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docBodies returns the body properties of every operation of the document, by
// operationId, and under operationId+"?" its arguments beside the body when it
// has query parameters.
var docBodies = sync.OnceValues(func() (map[string]map[string]*Schema, error) {
	ops, err := parseDocOnce()
	if err != nil {
		return nil, err
	}
	m := map[string]map[string]*Schema{}
	for _, op := range ops {
		s, err := op.inputSchema()
		if err != nil {
			return nil, err
		}
		if body := s.Properties["body"]; body != nil {
			m[op.ID] = body.Properties
		}
		for _, p := range op.params {
			if p.In == "query" {
				m[op.ID+"?"] = s.Properties // query parameters sit beside the body
			}
		}
	}
	return m, nil
})

// allBut returns a compiled profile granting every canonical operation but perm ("" = none).
func allBut(t testing.TB, perm string, repos ...string) *profile {
	p := &profile{Name: "all-but", Repositories: repos}
	if perm != "" {
		p.ForbiddenOperations = []string{perm}
	}
	for _, op := range canonicalOps {
		p.AllowedOperations = append(p.AllowedOperations, op.name)
	}
	return compiled(t, p)
}

func TestEffectRules(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	bodies, err := docBodies()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range effectRules {
		if !isCanonical[r.perm] || len(r.examples) == 0 || r.why == "" {
			t.Errorf("effect %s: permission %q, %d examples, why %q", r.field, r.perm, len(r.examples), r.why)
		}
		p := allBut(t, r.perm)
		for _, id := range r.ids {
			_, inBody := bodies[id][r.field]
			_, inQuery := bodies[id+"?"][r.field]
			if r.field != "" && !inBody && !inQuery {
				t.Errorf("effect %s: not a body property or query parameter of %s", r.field, id)
			}
			for _, ex := range r.examples {
				args := map[string]any{"body": ex.body}
				if !inBody {
					args = ex.body // a query parameter, beside the body, or (field "") the arguments whole
				}
				d := decide(p, "root", "t", ops[id], args, nil)
				if r.matches(id, args) != ex.match || d.Allowed == ex.match || ex.match && d.RequiredPermission != r.perm {
					t.Errorf("effect %s: %s with %v: matches %v, decision %+v; want match %v", r.field, id, ex.body, r.matches(id, args), d, ex.match)
				}
			}
		}
	}
	// A value beside the body, never sent, is judged too.
	if force := effectsOf()["repoMergePullRequest"][0]; force.field != "force_merge" || !force.matches("repoMergePullRequest", map[string]any{"force_merge": true, "body": map[string]any{"do": "merge"}}) {
		t.Error("force_merge beside the body is not judged")
	}
}

func TestLandingBranch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		id     string
		args   map[string]any
		params map[string]string
		branch string
		lands  bool
	}{
		{"repoCreateFile", map[string]any{"body": map[string]any{"content": "eA=="}}, nil, "", true},
		{"repoUpdateFile", map[string]any{"body": map[string]any{"branch": "main"}}, nil, "main", true},
		{"repoDeleteFile", map[string]any{"body": map[string]any{"branch": "main", "new_branch": "topic"}}, nil, "topic", true},
		{"repoChangeFiles", map[string]any{"body": map[string]any{"branch": "", "new_branch": ""}}, nil, "", true},
		{"repoApplyDiffPatch", map[string]any{"body": map[string]any{"new_branch": "refs/heads/main"}}, nil, "main", true},
		{"repoUpdateBranch", map[string]any{"body": map[string]any{"new_commit_id": "abc"}}, map[string]string{"branch": "main"}, "main", true},
		{"repoMergeUpstream", map[string]any{"body": map[string]any{}}, nil, "", true},
		{"repoMergeUpstream", map[string]any{"body": map[string]any{"branch": "dev"}}, nil, "dev", true},
		{"repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "main"}}, nil, "", false},
	}
	ops := docOps(t)
	for _, tt := range tests {
		if _, ok := ops[tt.id]; !ok {
			t.Errorf("unknown operation %s", tt.id)
		}
		branch, lands := landingBranch(tt.id, tt.args, tt.params)
		if branch != tt.branch || lands != tt.lands {
			t.Errorf("landingBranch(%s, %v) = %q, %v; want %q, %v", tt.id, tt.args, branch, lands, tt.branch, tt.lands)
		}
	}
	for id := range landsOn {
		if _, ok := ops[id]; !ok {
			t.Errorf("landsOn: unknown operation %s", id)
		}
	}
}

func TestRepoTargets(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	bodies, err := docBodies()
	if err != nil {
		t.Fatal(err)
	}
	params := map[string]string{"owner": "acme", "repo": "app", "org": "acme", "username": "acme", "template_owner": "acme", "template_repo": "tpl", "index": "1"}
	tests := []struct {
		id     string
		body   map[string]any
		target string // "" = allowed under acme/*
	}{
		{"repoTransfer", map[string]any{"new_owner": "acme"}, ""},
		{"repoTransfer", map[string]any{"new_owner": "bob"}, "bob/app"},
		{"repoEdit", map[string]any{"description": "x"}, ""},
		{"repoEdit", map[string]any{"name": "app2"}, ""},
		{"createFork", map[string]any{}, "bot/app"},
		{"createFork", map[string]any{"organization": "acme", "name": "fork"}, ""},
		{"createFork", map[string]any{"organization": "other"}, "other/app"},
		{"generateRepo", map[string]any{"owner": "acme", "name": "new"}, ""},
		{"generateRepo", map[string]any{"owner": "bob", "name": "new"}, "bob/new"},
		{"repoMigrate", map[string]any{"repo_owner": "acme", "repo_name": "m", "clone_addr": "https://x"}, ""},
		{"repoMigrate", map[string]any{"repo_name": "m", "clone_addr": "https://x"}, "bot/m"},
		{"repoMigrate", map[string]any{"repo_name": "m", "clone_addr": "https://x", "uid": 2}, "#uid"},
		{"repoMigrate", map[string]any{"repo_name": "m", "clone_addr": "https://x", "uid": 0}, "bot/m"},
		{"repoMigrate", map[string]any{"repo_owner": "acme", "repo_name": "m", "clone_addr": "https://x", "uid": 2}, ""},
		{"createCurrentUserRepo", map[string]any{"name": "mine"}, "bot/mine"},
		{"createOrgRepo", map[string]any{"name": "new"}, ""},
		{"createOrgRepoDeprecated", map[string]any{"name": "new"}, ""},
		{"adminCreateRepo", map[string]any{"name": "new"}, ""},
		{"adminCreateRepo", map[string]any{}, "acme/"},
		{"issueCreateIssueDependencies", map[string]any{"owner": "acme", "repo": "lib", "index": 3}, ""},
		{"issueCreateIssueDependencies", map[string]any{"owner": "bob", "repo": "demo-fork", "index": 3}, "bob/demo-fork"},
		{"issueRemoveIssueDependencies", map[string]any{"index": 3}, "/"},
		{"issueCreateIssueBlocking", map[string]any{"owner": "bob", "repo": "x", "index": 1}, "bob/x"},
		{"issueRemoveIssueBlocking", map[string]any{"owner": "acme", "repo": "x", "index": 1}, ""},
	}
	covered := map[string]bool{}
	for _, tt := range tests {
		covered[tt.id] = true
		p := allBut(t, "gitea.admin.system", "acme/*")
		d := decide(p, "bot", "t", ops[tt.id], map[string]any{"body": tt.body}, params)
		want := `"` + tt.target + `", outside the repositories`
		if id, ok := strings.CutPrefix(tt.target, "#"); ok {
			want = "names its owner by id (" + id
		}
		if d.Allowed != (tt.target == "") || tt.target != "" && !strings.Contains(d.Reason, want) {
			t.Errorf("%s with %v: %+v; want target %q", tt.id, tt.body, d, tt.target)
		}
	}
	for _, rt := range repoTargets {
		for _, id := range rt.ids {
			if !covered[id] {
				t.Errorf("repoTargets: %s has no example", id)
			}
			if n := len(targetsOf()[id]); n != 1 {
				t.Errorf("repoTargets: %s is named by %d rows; repoDenied judges only the first", id, n)
			}
			for _, f := range append(rt.owner, rt.name...) {
				_, inBody := bodies[id][strings.TrimPrefix(f, "#")]
				if !inBody && f != "@" && !strings.Contains(ops[id].Route, f) {
					t.Errorf("repoTargets: %s names %q, neither a body property nor a path parameter", id, f)
				}
			}
		}
	}
}

// TestByID: the index of a table by operation id (effectsOf, targetsOf)
// holds, for each id, every row naming it, in table order.
func TestByID(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		rows [][]string // the ids each row names
		want map[string][]int
	}{
		{"no rows", nil, map[string][]int{}},
		{"a row naming two ids", [][]string{{"a", "b"}}, map[string][]int{"a": {0}, "b": {0}}},
		{"an id of two rows, in table order", [][]string{{"b"}, {}, {"a", "b"}}, map[string][]int{"a": {2}, "b": {0, 2}}},
		{"an id named twice by one row", [][]string{{"a", "a"}}, map[string][]int{"a": {0, 0}}},
	}
	for _, tt := range tests {
		got := map[string][]int{}
		for id, rows := range byID(tt.rows, func(r *[]string) []string { return *r })() {
			got[id] = []int{}
			for _, r := range rows {
				for i := range tt.rows {
					if r == &tt.rows[i] {
						got[id] = append(got[id], i)
					}
				}
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tt.name, diff)
		}
	}
}

// TestRepoFreeRoutes lists every operation whose path names no single
// repository: under repositories each is denied, unless repoFree lists it
// with its reason (or repoTargets judges the repository its body names).
func TestRepoFreeRoutes(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	owner := allBut(t, "", "alice/demo")
	var free, denied []string
	for _, op := range ops {
		named := false
		for _, rp := range repoParams {
			named = named || strings.Contains(op.Route, rp.owner) && strings.Contains(op.Route, rp.repo)
		}
		if named {
			continue
		}
		d := decide(owner, "alice", "t", op, nil, map[string]string{})
		reason, listed := repoFree[op.ID]
		switch {
		case listed && (!d.Allowed || reason == ""):
			t.Errorf("%s %s (%s) is in repoFree (%q) but %+v", op.Method, op.Route, op.ID, reason, d)
		case listed:
			free = append(free, op.ID)
		case d.Allowed || !strings.Contains(d.Reason, op.Route) && !strings.Contains(d.Reason, "outside the repositories"):
			t.Errorf("%s %s (%s) names no repository and is not denied with a reason naming it: %+v", op.Method, op.Route, op.ID, d)
		default:
			denied = append(denied, op.ID)
		}
	}
	for id := range repoFree {
		if _, ok := ops[id]; !ok {
			t.Errorf("repoFree: unknown operation %s", id)
		}
	}
	for _, id := range []string{"repoGetByID", "repoSearch", "issueSearchIssues", "userListRepos", "userCurrentListRepos", "orgListRepos",
		"orgListTeamRepos", "notifyGetList", "userListActivityFeeds", "orgListActivityFeeds", "adminUnadoptedList", "topicSearch", "listPackages"} {
		if !strings.Contains(" "+strings.Join(denied, " ")+" ", " "+id+" ") {
			t.Errorf("%s is not denied under repositories", id)
		}
	}
	t.Logf("%d routes name no repository: %d listed free, %d denied", len(free)+len(denied), len(free), len(denied))
}

func TestProfileFlagsDerived(t *testing.T) {
	t.Parallel()
	cfg, err := parseProfiles([]byte(`{"profiles": [{"profile_name": "plain", "allowed_operations": ["gitea.read", "gitea.pr.create", "gitea.repo.commit"]},
		{"profile_name": "said", "allowed_operations": ["gitea.read"], "can_merge_prs": true}]}`))
	if err != nil {
		t.Fatal(err)
	}
	flags := func(p *profile) []bool {
		return []bool{can(p.CanApprovePRs), can(p.CanMergePRs), can(p.CanPushBranches), can(p.CanMutateIssues), can(p.CanAuthorImplPRs)}
	}
	for name, want := range map[string][]bool{
		"plain":           {false, false, true, false, true},
		"said":            {false, true, false, false, false},
		"gitea-reviewer":  {true, false, false, false, false},
		"gitea-owner":     {true, true, true, true, true},
		"prgs-reconciler": {false, false, false, true, false},
	} {
		if diff := cmp.Diff(want, flags(cfg.profiles[name])); diff != "" {
			t.Errorf("%s: can_* flags mismatch (-want +got):\n%s", name, diff)
		}
	}
}

// TestLiveEffectsUnreadable: when Gitea does not answer the live reads that
// judge a write's effects (the repository's default branch and deletion
// default, the pull request's head repository), the write is refused and
// nothing is sent.
func TestLiveEffectsUnreadable(t *testing.T) {
	t.Parallel()
	gitea := newScriptedGitea(t).user("carol").json("/repos/o/r/pulls/1", map[string]any{"user": map[string]any{"login": "bob"}, "head": map[string]any{"ref": "topic", "sha": headSHA, "repo": nil}}).
		json("/repos/o/r/git/refs/pull/1/head", []any{map[string]any{"ref": "refs/pull/1/head", "object": map[string]any{"sha": headSHA}}}).
		otherwise(fakeAnswer{status: http.StatusInternalServerError, body: `{"message":"database is locked"}`})
	for _, tc := range []struct {
		profile, method, path string
		body                  map[string]any
		reason                string
	}{
		{"gitea-merger", "POST", "/repos/o/r/pulls/1/merge", map[string]any{"do": "merge", "head_commit_id": headSHA}, `cannot read from Gitea whether merging in "o/r" deletes the head branch`},
		{"gitea-author", "POST", "/repos/o/r/pulls/1/update", nil, "cannot read the pull request's head repository from Gitea"},
		{"gitea-author", "POST", "/repos/o/r/contents/a.txt", map[string]any{"content": "eA==", "branch": "dev"}, `cannot read the default branch of "o/r" from Gitea; refusing to write to "dev"`},
		{"gitea-author", "PUT", "/repos/o/r/branches/dev", map[string]any{"new_commit_id": "abc"}, `cannot read from Gitea the messages of the commits repoUpdateBranch puts on a branch, which may reference issues Gitea closes`},
	} {
		args := map[string]any{"method": tc.method, "path": tc.path}
		if tc.body != nil {
			args["body"] = tc.body
		}
		res, isErr := fakeCall(t, t.Context(), gitea.server(t, "GITEA_MCP_PROFILE", tc.profile), "gitea_api_request", args)
		if !isErr || str(get(res, "error.kind")) != "permission_denied" || !strings.Contains(str(get(res, "error.message")), tc.reason) {
			t.Errorf("%s %s under %s: %v; want a refusal saying %q", tc.method, tc.path, tc.profile, res, tc.reason)
		}
	}
	if w := gitea.writes(); len(w) != 0 {
		t.Errorf("writes reached Gitea: %v", w)
	}
}

func TestRepoReveals(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	p := allBut(t, "", "acme/*")
	free := allBut(t, "")
	params := map[string]string{"owner": "acme", "repo": "app", "index": "1"}
	for id := range repoReveals {
		op, ok := ops[id]
		if !ok || op.Method != "GET" {
			t.Errorf("repoReveals: %s is not a read of the document", id)
		}
		if d := decide(p, "bot", "t", op, nil, params); d.Allowed || !strings.Contains(d.Reason, repoReveals[id]) {
			t.Errorf("%s under acme/*: %+v", id, d)
		}
		if d := decide(free, "bot", "t", op, nil, params); !d.Allowed {
			t.Errorf("%s without repositories: %+v", id, d)
		}
	}
}

func TestCompareHead(t *testing.T) {
	t.Parallel()
	tests := []struct{ spec, want string }{
		{"main...topic", "acme/app"},
		{"main..topic", "acme/app"},
		{"topic", "acme/app"},
		{"main...acme:topic", "acme/app"},
		{"main...ACME/App:topic", "acme/app"},
		{"main...bob:topic", ""},
		{"main...bob/app-fork:topic", "bob/app-fork"},
		{"bob/app-fork:topic", "bob/app-fork"},
		{"main..bob/x:y...z", "acme/app"}, // Gitea cuts at the first "..."
		{"main...a/b/c:d", "a/b/c"},       // no such repository: allowsRepo refuses it
	}
	for _, tt := range tests {
		if got := compareHead(tt.spec, "acme", "app"); got != tt.want {
			t.Errorf("compareHead(%q) = %q, want %q", tt.spec, got, tt.want)
		}
	}
	ops := docOps(t)
	p := allBut(t, "", "acme/*")
	params := map[string]string{"owner": "acme", "repo": "app", "basehead": "main...bob/app-fork:topic"}
	if d := decide(p, "bot", "t", ops["repoCompareDiff"], nil, params); d.Allowed || !strings.Contains(d.Reason, `head "main...bob/app-fork:topic" in "bob/app-fork"`) {
		t.Errorf("compare with a fork outside the list: %+v", d)
	}
	body := map[string]any{"body": map[string]any{"base": "main", "head": "bob:topic", "title": "t"}}
	if d := decide(p, "bot", "t", ops["repoCreatePullRequest"], body, params); d.Allowed || !strings.Contains(d.Reason, "in a fork Gitea finds by its owner") {
		t.Errorf("pull request from a fork named by its owner: %+v", d)
	}
	body = map[string]any{"body": map[string]any{"base": "main", "head": "acme/lib:topic", "title": "t"}}
	if d := decide(p, "bot", "t", ops["repoCreatePullRequest"], body, params); !d.Allowed {
		t.Errorf("pull request from a repository in the list: %+v", d)
	}
}

// FuzzCompareHead checks compareHead with an oracle of its own: the fuzzer
// gives a comparison's parts (base, separator, the head's owner, repository
// and branch, and which of Gitea's head forms joins them: a bare branch,
// owner:branch or owner/repo:branch), so the repository the head names is
// known before they are joined and parsed. Gitea looks users and repositories
// up by their lower-case names, and finds a fork itself for owner:branch of
// another owner, for which compareHead must answer "". Parts that would make
// the joined text mean something else are skipped: a ".." within a part or
// one made at a join (Gitea cuts at the first "...", else ".."), a ":" or "/"
// within a name, an empty name. A ":" or ".." is not valid in a git branch
// name either.
func FuzzCompareHead(f *testing.F) {
	for _, c := range []struct {
		base        string
		sep, form   uint8
		owner, repo string
		ref         string
	}{
		{"main", 0, 0, "", "", "topic"}, {"main", 1, 1, "bob", "", "x"}, {"main", 0, 2, "bob", "fork", "x"},
		{"a", 1, 2, "c", "d", "e"}, {"", 2, 1, "acme", "", "x"}, {"main", 1, 1, "Acme", "", "x"}, {"", 2, 2, "ACME", "APP", "x"}, {"v1.2", 0, 2, "Acme", "app-fork", "feature/x"},
	} {
		f.Add(c.base, c.sep, c.form, c.owner, c.repo, c.ref)
	}
	f.Fuzz(func(t *testing.T, base string, sep, form uint8, owner, repo, ref string) {
		head, want := ref, "acme/app" // a bare branch: of the path's repository
		switch form % 3 {
		case 1:
			if head = owner + ":" + ref; strings.ToLower(owner) != "acme" {
				want = "" // another owner's fork, which Gitea finds
			}
		case 2:
			if head = owner + "/" + repo + ":" + ref; strings.ToLower(owner) != "acme" || strings.ToLower(repo) != "app" {
				want = owner + "/" + repo
			}
		}
		spec := []string{base + "..." + head, base + ".." + head, head}[sep%3]
		names := []string{owner, repo}[:form%3]
		switch {
		case strings.Contains(base, "..") || strings.Contains(head, "..") || strings.HasSuffix(base, ".") || strings.HasPrefix(head, "."),
			strings.Contains(ref, ":"), slices.ContainsFunc(names, func(n string) bool { return n == "" || strings.ContainsAny(n, ":/") }):
			return
		}
		if got := compareHead(spec, "acme", "app"); got != want {
			t.Errorf("compareHead(%q) = %q; its head names %q", spec, got, want)
		}
	})
}

// TestRefOutside: texts anywhere in a body that reference a repository
// outside the list (as Gitea's cross-references and closing keywords read
// them) are refused under repositories acme/*; references within it, or
// none, are not.
func TestRefOutside(t *testing.T) {
	t.Parallel()
	p := allBut(t, "", "acme/*")
	for _, tc := range []struct {
		body any
		want string
	}{
		{map[string]any{"body": "see other/secret#1"}, "other/secret"},
		{map[string]any{"title": "fixes other/secret!12"}, "other/secret"},
		{map[string]any{"body": "closes http://gitea:3000/other/secret/issues/3"}, "other/secret"},
		{map[string]any{"body": "see https://gitea/other/secret/pulls/4/files"}, "other/secret"},
		{map[string]any{"files": []any{map[string]any{"path": "a", "content": "x"}}, "message": "Closes Other/Secret#2"}, "Other/Secret"},
		{"other/secret#5", "other/secret"},
		// Gitea reads a link's issue number with strconv.ParseInt: "+3" is 3.
		{map[string]any{"body": "closes [x](/other/secret/issues/+3)"}, "other/secret"},
		{map[string]any{"body": "<http://gitea/other/secret/pulls/+0004>"}, "other/secret"},
		// A Markdown hard line break (two spaces, or a backslash, before the
		// newline) joins the lines in Gitea's reading; a soft one does not.
		{map[string]any{"body": "see other/  \nsecret#1"}, "other/secret"},
		{map[string]any{"body": "closes other/\\\r\nsecret#1"}, "other/secret"},
		{map[string]any{"body": "see acme/\napp#1 and other/\nsecret"}, ""},
		{map[string]any{"body": "see acme/app#1, #2 and !3; closes ACME/lib#4"}, ""},
		{map[string]any{"body": "see src/main.go and issue 7"}, ""},
		{map[string]any{"body": "see http://gitea/acme/app/issues/1"}, ""},
		{nil, ""},
	} {
		if got := p.refOutside(tc.body); got != tc.want {
			t.Errorf("refOutside(%v) = %q, want %q", tc.body, got, tc.want)
		}
	}
	op := opInfo{ID: "issueCreateComment", Method: "POST", Route: "/repos/{owner}/{repo}/issues/{index}/comments"}
	params := map[string]string{"owner": "acme", "repo": "app", "index": "1"}
	if d := decide(p, "bot", "t", op, map[string]any{"body": map[string]any{"body": "see other/secret#1"}}, params); d.Allowed || !strings.Contains(d.Reason, `names "other/secret"`) {
		t.Errorf("a comment referencing other/secret#1 under acme/*: %+v", d)
	}
	if d := decide(allBut(t, ""), "bot", "t", op, map[string]any{"body": map[string]any{"body": "see other/secret#1"}}, params); !d.Allowed {
		t.Errorf("without repositories: %+v", d)
	}
}

// FuzzRefOutsideLink checks refOutside against Gitea's reading of a link in
// a markdown text (modules/references: findAllIssueReferencesBytes and
// getCrossReference, restated here): whenever Gitea reads a link as a
// reference to an issue of a repository outside acme/*, refOutside names a
// repository outside it.
func FuzzRefOutsideLink(f *testing.F) {
	for _, s := range []string{"/other/secret/issues/1", "/other/secret/issues/+1", "http://gitea/OTHER/secret/pulls/01", "/acme/app/issues/2", "//h/o/r/issues/3?x#y"} {
		f.Add(s)
	}
	p := allBut(f, "", "acme/*")
	valid := regexp.MustCompile(`^[a-z0-9_.-]+$`) // Gitea's validNamePattern
	f.Fuzz(func(t *testing.T, link string) {
		u, err := url.Parse(link)
		if err != nil {
			return
		}
		parts := strings.Split(u.EscapedPath(), "/")
		if len(parts) != 5 || parts[0] != "" || parts[3] != "issues" && parts[3] != "pulls" {
			return
		}
		owner, name := strings.ToLower(parts[1]), strings.ToLower(parts[2])
		if _, err := strconv.ParseInt(parts[4], 10, 64); err != nil || !valid.MatchString(owner) || !valid.MatchString(name) || p.allowsRepo(owner, name) {
			return
		}
		if got := p.refOutside("closes [x](" + link + ")"); got == "" {
			t.Errorf("Gitea reads the link %q as a reference to %s/%s; refOutside finds none", link, owner, name)
		}
	})
}

// TestQueryEffectEveryDoor checks that a rule on a query parameter holds on
// every door: repoUpdatePullRequest with style=rebase force-pushes the head
// branch, so gitea-author (no gitea.branch.delete) is refused and nothing is
// sent, through gitea_call_operation and through gitea_api_request, whose
// query reaches the policy beside its body.
func TestQueryEffectEveryDoor(t *testing.T) {
	t.Parallel()
	const update = "/repos/alice/demo/pulls/1/update"
	f := newScriptedGitea(t).user("bob").
		json("/repos/alice/demo/pulls/1", map[string]any{"number": 1, "state": "open", "user": map[string]any{"login": "bob"},
			"head": map[string]any{"ref": "topic", "repo": map[string]any{"full_name": "alice/demo"}},
			"base": map[string]any{"ref": "main", "repo": map[string]any{"full_name": "alice/demo"}}}).
		json("/repos/alice/demo", map[string]any{"autodetect_manual_merge": false, "full_name": "alice/demo", "default_branch": "main"}).
		json("/repos/alice/demo/compare/topic...alice/demo:main", map[string]any{"total_commits": 0, "commits": []any{}}).
		on("POST", "/repos/alice/demo/pulls/1/update", 200, `{}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "gitea-author")
	doors := map[string]func(style string) (string, map[string]any){
		"gitea_call_operation": func(style string) (string, map[string]any) {
			return "gitea_call_operation", map[string]any{"operation": "repoUpdatePullRequest",
				"arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "style": style}}
		},
		"gitea_api_request": func(style string) (string, map[string]any) {
			return "gitea_api_request", map[string]any{"method": "POST", "path": "/repos/alice/demo/pulls/1/update",
				"query": map[string]any{"style": style}}
		},
	}
	for name, door := range doors {
		for _, tc := range []struct {
			style, perm string
			sent        bool
		}{{"rebase", "gitea.branch.delete", false}, {"merge", "", true}} {
			before := len(f.requests())
			tool, args := door(tc.style)
			out, _ := fakeCall(t, t.Context(), s, tool, args)
			sent := slicesContainsPath(f.requests()[before:], update)
			perm := str0(get(out, "error.permission_report.required_permission"))
			if sent != tc.sent || !tc.sent && perm != tc.perm {
				t.Errorf("%s style=%s: sent %v, required %q; want sent %v, required %q: %v", name, tc.style, sent, perm, tc.sent, tc.perm, out)
			}
		}
	}
}

// TestDefaultMessage: a contents write naming no message gets Gitea's own,
// "Add <path>" and the like, which Gitea reads for references as any
// message: a path naming an issue needs gitea.issue.close, and one naming an
// issue outside the profile's repositories is refused (the path is a path
// parameter, which the body's scan did not see); a message given is judged
// instead.
func TestDefaultMessage(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	for _, tc := range []struct {
		op       string
		path     string
		body     map[string]any
		profile  *profile
		want     string // the required permission of a refusal, "" allowed, or a reason's words
		refusing bool
	}{
		{"repoCreateFile", "fixes #1", map[string]any{"content": "eAo=", "branch": "dev"}, allBut(t, "gitea.issue.close"), "gitea.issue.close", true},
		{"repoCreateFile", "fixes #1", map[string]any{"content": "eAo=", "branch": "dev", "message": "notes"}, allBut(t, "gitea.issue.close"), "", false},
		{"repoUpdateFile", "fixes bob/secret#1", map[string]any{"content": "eAo=", "sha": "abc", "branch": "dev"}, allBut(t, "", "acme/*"), `"bob/secret", outside`, true},
		{"repoDeleteFile", "fixes bob/secret#1", map[string]any{"sha": "abc", "branch": "dev", "message": " "}, allBut(t, "", "acme/*"), `"bob/secret", outside`, true},
		{"repoChangeFiles", "", map[string]any{"branch": "dev", "files": []any{map[string]any{"operation": "delete", "path": "closes #2"}}}, allBut(t, "gitea.issue.close"), "gitea.issue.close", true},
		{"repoCreateFile", "notes.md", map[string]any{"content": "eAo=", "branch": "dev"}, allBut(t, "gitea.issue.close", "acme/*"), "", false},
	} {
		params := map[string]string{"owner": "acme", "repo": "app", "filepath": tc.path}
		d := decide(tc.profile, "bot", "t", ops[tc.op], map[string]any{"body": tc.body}, params)
		if d.Allowed == tc.refusing || tc.refusing && d.RequiredPermission != tc.want && !strings.Contains(d.Reason, tc.want) {
			t.Errorf("%s %q %v: %+v; want refused %v (%s)", tc.op, tc.path, tc.body, d, tc.refusing, tc.want)
		}
	}
}
