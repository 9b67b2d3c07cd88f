package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// builtin returns the built-in profile called name.
func builtin(t testing.TB, name string) *profile {
	t.Helper()
	for _, p := range builtinProfiles() {
		if p.Name == name {
			return p
		}
	}
	t.Fatalf("no built-in profile %q", name)
	return nil
}

// compiled returns p compiled, failing the test on error.
func compiled(t testing.TB, p *profile) *profile {
	t.Helper()
	if err := p.compile(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPermRulesCoverDocument(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	if len(ops) != 471 {
		t.Errorf("document has %d operations, want 471", len(ops))
	}
	reached := map[string]bool{}
	for _, r := range effectRules {
		reached[r.perm] = true
	}
	for _, r := range argRules {
		for _, perm := range r.values {
			reached[perm] = true
		}
	}
	for _, op := range ops {
		perm := requiredPermission(op, nil)
		reached[perm] = true
		switch {
		case !isCanonical[perm]:
			t.Errorf("%s %s (%s) requires %q, not a canonical operation", op.Method, op.Route, op.ID, perm)
		case (perm == permRead) != (op.Method == "GET"):
			t.Errorf("%s %s (%s) requires %s: reads are exactly the GET requests", op.Method, op.Route, op.ID, perm)
		}
	}
	for _, op := range canonicalOps {
		if !reached[op.name] {
			t.Errorf("no operation requires %s", op.name)
		}
	}
}

func TestPermRules(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	for i, r := range permRules {
		if len(r.examples) == 0 {
			t.Errorf("rule %d (%s) has no examples", i, r.perm)
		}
		for _, id := range r.examples {
			op, ok := ops[id]
			first := slices.IndexFunc(permRules, func(r permRule) bool { return r.matches(op) })
			if !ok || first != i || requiredPermission(op, nil) != r.perm {
				t.Errorf("rule %d (%s): example %s (known %v) is matched first by rule %d and requires %q", i, r.perm, id, ok, first, requiredPermission(op, nil))
			}
		}
	}
}

func TestArgRules(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	for _, r := range argRules {
		for _, id := range r.ids {
			if _, ok := ops[id]; !ok {
				t.Errorf("argRule %s: unknown operation %s", r.field, id)
			}
			for _, ex := range r.examples {
				if got := requiredPermission(ops[id], ex.args); got != ex.want {
					t.Errorf("%s with %v requires %q, want %q", id, ex.args, got, ex.want)
				}
			}
		}
	}
}

func TestOperationAliases(t *testing.T) {
	t.Parallel()
	for alias, want := range operationAliases {
		got, err := normalizeOperation(alias)
		if err != nil || got != want || !isCanonical[want] {
			t.Errorf("normalizeOperation(%q) = %q, %v; want canonical %q", alias, got, err, want)
		}
	}
}

func TestNormalizeOperation(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, want, err string
	}{
		{"gitea.pr.merge", "gitea.pr.merge", ""},
		{"merge", "gitea.pr.merge", ""},
		{"gitea.pr.close", "gitea.pr.close", ""},
		{"close", "", "unknown gitea operation"},
		{"gitea.pr.frobnicate", "", "unknown gitea operation"},
		{"gitea.*", "", "not an operation name"},
		{"issue.create", "", "ambiguous"},
		{"pr.merge", "", "ambiguous"},
		{"jenkins.read", "", `belongs to service "jenkins"`},
		{"Merge", "", "not an operation name"},
		{" merge", "", "not an operation name"},
		{"", "", "not an operation name"},
		{"gitea..read", "", "not an operation name"},
	}
	for _, tt := range tests {
		got, err := normalizeOperation(tt.name)
		if got != tt.want || !errContains(err, tt.err) {
			t.Errorf("normalizeOperation(%q) = %q, %v; want %q, error containing %q", tt.name, got, err, tt.want, tt.err)
		}
	}
}

// errContains reports whether err is nil and want empty, or err's text contains want.
func errContains(err error, want string) bool {
	if err == nil || want == "" {
		return err == nil && want == ""
	}
	return strings.Contains(err.Error(), want)
}

func TestAllows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		allowed, forbidden []string
		perm               string
		ok                 bool
		reason             string
	}{
		{[]string{"read", "merge"}, nil, "gitea.pr.merge", true, "gitea.pr.merge is allowed by p"},
		{[]string{"read", "merge"}, nil, "merge", true, "allowed"},
		{[]string{"gitea.pr.merge"}, []string{"merge"}, "gitea.pr.merge", false, "gitea.pr.merge is forbidden for p; use a profile that allows it, such as gitea-merger"},
		{[]string{"merge"}, []string{"gitea.pr.merge"}, "merge", false, "forbidden for p"},
		{[]string{"issue.create", "gitea.read"}, nil, "gitea.issue.create", false, "gitea.issue.create is not in the allowed operations of p; use a profile that allows it, such as gitea-issue-manager"},
		{[]string{"gitea.read"}, nil, "gitea.read", true, "allowed"},
		{[]string{"gitea.read"}, []string{"issue.create"}, "gitea.read", false, `forbidden entry "issue.create" of p cannot be normalized`},
		{nil, nil, "gitea.read", false, "not in the allowed operations of p"},
		{[]string{}, nil, "gitea.read", false, "not in the allowed operations of p"},
		{[]string{"gitea.read"}, nil, "gitea.nope", false, "unknown gitea operation"},
		{[]string{"gitea.*"}, nil, "gitea.read", false, "not in the allowed operations"},
		{[]string{"gitea.pr.close"}, nil, "gitea.pr.close", true, "allowed"},
		{[]string{"gitea.read"}, nil, "gitea.pr.close", false, "such as prgs-reconciler"},
	}
	for _, tt := range tests {
		p := compiled(t, &profile{Name: "p", AllowedOperations: tt.allowed, ForbiddenOperations: tt.forbidden})
		ok, reason := p.allows(tt.perm)
		if ok != tt.ok || !strings.Contains(reason, tt.reason) {
			t.Errorf("allowed %q forbidden %q: allows(%q) = %v, %q; want %v, %q", tt.allowed, tt.forbidden, tt.perm, ok, reason, tt.ok, tt.reason)
		}
	}
}

func TestProfileWarnings(t *testing.T) {
	t.Parallel()
	p := compiled(t, &profile{Name: "p", AllowedOperations: []string{"gitea.read", "issue.create"}})
	want := []string{`profile "p": allowed entry grants nothing: operation "issue.create": ambiguous; spell it gitea.issue.create or use an alias`}
	if diff := cmp.Diff(want, p.warnings()); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestBuiltinProfiles(t *testing.T) {
	t.Parallel()
	all := []string{}
	for _, op := range canonicalOps {
		all = append(all, op.name)
	}
	tests := []struct {
		name  string
		grant []string // exactly the operations the profile grants
	}{
		{"gitea-issue-manager", []string{"gitea.read", "gitea.issue.create", "gitea.issue.comment", "gitea.issue.label", "gitea.issue.close", "gitea.issue.edit"}},
		{"gitea-author", []string{"gitea.read", "gitea.pr.create", "gitea.pr.comment", "gitea.branch.create", "gitea.branch.push", "gitea.repo.commit", "gitea.issue.comment"}},
		{"gitea-reviewer", []string{"gitea.read", "gitea.issue.comment", "gitea.pr.comment", "gitea.pr.review", "gitea.pr.approve", "gitea.pr.request_changes"}},
		{"gitea-merger", []string{"gitea.read", "gitea.pr.merge"}},
		{"prgs-reconciler", []string{"gitea.read", "gitea.issue.comment", "gitea.issue.close", "gitea.pr.comment", "gitea.pr.close"}},
		{"gitea-owner", all},
	}
	var names []string
	for _, tt := range tests {
		p := builtin(t, tt.name)
		names = append(names, p.Name)
		var got []string
		for _, op := range canonicalOps {
			if ok, _ := p.allows(op.name); ok {
				got = append(got, op.name)
			}
		}
		slices.Sort(got)
		slices.Sort(tt.grant)
		if diff := cmp.Diff(tt.grant, got); diff != "" {
			t.Errorf("%s grants mismatch (-want +got):\n%s", tt.name, diff)
		}
		if err := assessReconcilerProfile(p); (err == nil) != (tt.name == "prgs-reconciler") {
			t.Errorf("assessReconcilerProfile(%s) = %v", tt.name, err)
		}
		if p.TokenSourceName != "GITEA_TOKEN" || p.AuditLabel != p.Name || len(p.warnings()) > 0 {
			t.Errorf("%s: token_source_name %q, audit_label %q, warnings %q", p.Name, p.TokenSourceName, p.AuditLabel, p.warnings())
		}
	}
	if diff := cmp.Diff(names, builtinNames()); diff != "" {
		t.Errorf("built-in profiles mismatch (-want +got):\n%s", diff)
	}
}

// builtinNames returns the names of the built-in profiles in order.
func builtinNames() []string {
	var names []string
	for _, p := range builtinProfiles() {
		names = append(names, p.Name)
	}
	return names
}

func TestAssessReconcilerProfile(t *testing.T) {
	t.Parallel()
	forbidden := []string{"gitea.pr.approve", "gitea.pr.merge", "gitea.pr.review", "gitea.pr.create", "gitea.branch.push", "gitea.repo.commit"}
	tests := []struct {
		name string
		p    profile
		err  string
	}{
		{"document shape", profile{AllowedOperations: reconcilerNeeds, ForbiddenOperations: forbidden}, ""},
		{"legacy spellings", profile{AllowedOperations: append([]string{"read", "comment"}, reconcilerNeeds[2:]...),
			ForbiddenOperations: []string{"approve", "merge", "review", "pr.create", "push", "commit"}}, ""},
		{"missing pr.close", profile{AllowedOperations: reconcilerNeeds[:4], ForbiddenOperations: forbidden}, "gitea.pr.close is not allowed"},
		{"merge not forbidden", profile{AllowedOperations: reconcilerNeeds, ForbiddenOperations: forbidden[1:]}, "gitea.pr.approve is not in forbidden_operations"},
		{"extra operation", profile{AllowedOperations: append([]string{"gitea.issue.create"}, reconcilerNeeds...), ForbiddenOperations: forbidden},
			"gitea.issue.create is allowed but outside the reconciler set"},
		{"merge capability", profile{AllowedOperations: reconcilerNeeds, ForbiddenOperations: forbidden, CanMergePRs: new(true)}, "must be false"},
		{"bad forbidden entry", profile{AllowedOperations: reconcilerNeeds, ForbiddenOperations: append([]string{"pr.merge"}, forbidden...)}, "gitea.read is not allowed"},
	}
	for _, tt := range tests {
		tt.p.Name = "r"
		err := assessReconcilerProfile(compiled(t, &tt.p))
		if !errContains(err, tt.err) {
			t.Errorf("%s: assessReconcilerProfile = %v, want error containing %q", tt.name, err, tt.err)
		}
	}
}

func TestAllowsRepo(t *testing.T) {
	t.Parallel()
	tests := []struct {
		repos       []string
		owner, repo string
		want        bool
	}{
		{nil, "any", "thing", true},
		{[]string{}, "acme", "app", false},
		{[]string{"acme/*"}, "acme", "app", true},
		{[]string{"acme/*"}, "ACME", "App", true},
		{[]string{"acme/*"}, "other", "app", false},
		{[]string{"Acme/app-*"}, "acme", "app-web", true},
		{[]string{"acme/app-*"}, "acme", "app", false},
		{[]string{"*/docs"}, "anyone", "docs", true},
		{[]string{"acme/*"}, "acme", "", false},
		{[]string{"acme/*"}, "acme/x", "app", false},
		{[]string{"*/*"}, "a", "b/c", false},
	}
	for _, tt := range tests {
		p := compiled(t, &profile{Name: "p", Repositories: tt.repos})
		if got := p.allowsRepo(tt.owner, tt.repo); got != tt.want {
			t.Errorf("repositories %q: allowsRepo(%q, %q) = %v, want %v", tt.repos, tt.owner, tt.repo, got, tt.want)
		}
	}
}

func TestRepoParams(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	for _, rp := range repoParams {
		found := false
		for _, op := range ops {
			found = found || op.Route == rp.example
		}
		if !found || !strings.Contains(rp.example, rp.owner) || !strings.Contains(rp.example, rp.repo) {
			t.Errorf("repoParams %s/%s: example %s is not a route naming both", rp.owner, rp.repo, rp.example)
		}
	}
}

func TestParseProfiles(t *testing.T) {
	t.Parallel()
	const ok = `{"profile_name": "acme-bot", "allowed_operations": ["read"], "token_source_name": "ACME_TOKEN"}`
	tests := []struct {
		name, file string
		switching  bool
		err        string
	}{
		{"empty object", `{}`, false, ""},
		{"one profile", `{"profiles": [` + ok + `]}`, false, ""},
		{"switching top level", `{"allow_runtime_switching": true}`, true, ""},
		{"switching under rules", `{"rules": {"allow_runtime_switching": true}}`, true, ""},
		{"switching agree", `{"allow_runtime_switching": true, "rules": {"allow_runtime_switching": true}}`, true, ""},
		{"switching disagree", `{"allow_runtime_switching": false, "rules": {"allow_runtime_switching": true}}`, false, "allow_runtime_switching is false at the top level but true under rules"},
		{"unknown top-level field", `{"profile": []}`, false, `unknown field "profile"`},
		{"unknown rules field", `{"rules": {"switching": true}}`, false, `unknown field "switching"`},
		{"unknown profile field", `{"profiles": [{"profile_name": "x", "can_merge": true}]}`, false, `unknown field "can_merge"`},
		{"trailing data", `{} {}`, false, "data after the top-level object"},
		{"not json", `profiles: []`, false, "invalid character"},
		{"null profile", `{"profiles": [null]}`, false, "profiles[0] is null"},
		{"built-in name", `{"profiles": [{"profile_name": "gitea-merger"}]}`, false, `profile "gitea-merger" is built in`},
		{"duplicate", `{"profiles": [` + ok + `,` + ok + `]}`, false, `profile "acme-bot" is defined twice`},
		{"bad name", `{"profiles": [{"profile_name": "Acme Bot"}]}`, false, `profile "Acme Bot": profile_name must be`},
		{"capability contradiction", `{"profiles": [{"profile_name": "m", "allowed_operations": ["merge"], "can_merge_prs": false}]}`, false,
			`profile "m": allowed_operations grants gitea.pr.merge but can_merge_prs is false`},
		{"capability left out is derived", `{"profiles": [{"profile_name": "m", "allowed_operations": ["gitea.pr.create", "merge"]}]}`, false, ""},
		{"force merge needs can_merge_prs", `{"profiles": [{"profile_name": "m", "allowed_operations": ["gitea.pr.force_merge"], "can_merge_prs": false}]}`, false,
			`grants gitea.pr.force_merge but can_merge_prs is false`},
		{"forbidden lifts the contradiction", `{"profiles": [{"profile_name": "m", "allowed_operations": ["merge"], "forbidden_operations": ["merge"]}]}`, false, ""},
		{"bad token source", `{"profiles": [{"profile_name": "t", "token_source_name": "gitea-token"}]}`, false, "token_source_name must name an environment variable"},
		// A secret of the server's own, read as a Gitea token, was sent to Gitea in every request's Authorization header.
		{"token source the OAuth key", `{"profiles": [{"profile_name": "t", "token_source_name": "MCP_OAUTH_KEY"}]}`, false, `token_source_name MCP_OAUTH_KEY holds a secret of this server`},
		{"token source the bearer token", `{"profiles": [{"profile_name": "t", "token_source_name": "MCP_BEARER_TOKEN"}]}`, false, `token_source_name MCP_BEARER_TOKEN holds a secret`},
		{"token source the audit key", `{"profiles": [{"profile_name": "t", "token_source_name": "GITEA_AUDIT_KEY"}]}`, false, `token_source_name GITEA_AUDIT_KEY holds a secret`},
		{"token source the client secret", `{"profiles": [{"profile_name": "t", "token_source_name": "GITEA_OAUTH_CLIENT_SECRET"}]}`, false, `holds a secret`},
		{"bad repository", `{"profiles": [{"profile_name": "r", "repositories": ["acme"]}]}`, false, `repository "acme" must be owner/name`},
		{"bad repository glob", `{"profiles": [{"profile_name": "r", "repositories": ["acme/[a]"]}]}`, false, `repository "acme/[a]" must be owner/name`},
		// A key given twice, in any spelling encoding/json folds together, kept
		// the last silently: a forbidden_operations emptied, switching turned on.
		{"forbidden given twice", `{"profiles": [{"profile_name": "m", "allowed_operations": ["read", "merge"], "forbidden_operations": ["merge"], "Forbidden_Operations": []}]}`, false,
			`key "Forbidden_Operations" given twice (as "forbidden_operations")`},
		{"folded key twice", `{"profiles": [{"profile_name": "m", "forbidden_operations": ["merge"], "forbidden_operationſ": []}]}`, false,
			`key "forbidden_operationſ" given twice (as "forbidden_operations")`},
		{"switching given twice", `{"allow_runtime_switching": false, "allow_runtime_switching": true}`, false, `key "allow_runtime_switching" given twice`},
		{"flag given twice", `{"profiles": [{"profile_name": "m", "can_merge_prs": false, "CAN_MERGE_PRS": true}]}`, false, `key "CAN_MERGE_PRS" given twice`},
		// null decodes as the key left out: "repositories": null lifted every restriction.
		{"repositories null", `{"profiles": [{"profile_name": "r", "repositories": null, "allowed_operations": ["read"]}]}`, false,
			`key "repositories" is null: leave it out or give it a value`},
		{"flag null", `{"profiles": [{"profile_name": "r", "can_merge_prs": null}]}`, false, `key "can_merge_prs" is null`},
		{"keys in another case once each", `{"Profiles": [{"Profile_Name": "m", "ALLOWED_OPERATIONS": ["read"]}, {"profile_name": "n"}]}`, false, ""},
	}
	for _, tt := range tests {
		cfg, err := parseProfiles([]byte(tt.file))
		if !errContains(err, tt.err) {
			t.Errorf("%s: parseProfiles = %v, want error containing %q", tt.name, err, tt.err)
		}
		if err == nil && cfg.AllowRuntimeSwitching != tt.switching {
			t.Errorf("%s: AllowRuntimeSwitching = %v, want %v", tt.name, cfg.AllowRuntimeSwitching, tt.switching)
		}
	}
}

func TestLoadProfiles(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	bad := filepath.Join(dir, "bad.json")
	os.WriteFile(good, []byte(`{"profiles": [{"profile_name": "acme-bot", "allowed_operations": ["read"]}]}`), 0o600)
	os.WriteFile(bad, []byte(`{"profiles": 1}`), 0o600)
	tests := []struct {
		path  string
		names []string
		err   string
	}{
		{"", builtinNames(), ""},
		{good, append(builtinNames(), "acme-bot"), ""},
		{bad, nil, `profile config "` + bad + `": json: cannot unmarshal number`},
		{filepath.Join(dir, "missing.json"), nil, "GITEA_MCP_CONFIG: open"},
	}
	for _, tt := range tests {
		cfg, err := loadProfiles(tt.path)
		if !errContains(err, tt.err) || err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("loadProfiles(%q) = %v, want one-line error containing %q", tt.path, err, tt.err)
			continue
		}
		if err == nil {
			if diff := cmp.Diff(tt.names, cfg.names); diff != "" {
				t.Errorf("loadProfiles(%q) names mismatch (-want +got):\n%s", tt.path, diff)
			}
		}
	}
}

func TestSelectProfile(t *testing.T) {
	t.Parallel()
	const token = "0123456789abcdef0123456789abcdef01234567"
	cfg, err := parseProfiles([]byte(`{"profiles": [{"profile_name": "acme-bot", "allowed_operations": ["read"], "token_source_name": "ACME_TOKEN"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		cfg          *profileConfig
		name         string
		env          map[string]string
		profile, tok string
		err          string
	}{
		{cfg, "", map[string]string{"GITEA_TOKEN": token}, "", token, ""},
		{cfg, "", nil, "", "", ""},
		{cfg, "gitea-reviewer", map[string]string{"GITEA_TOKEN": token}, "gitea-reviewer", token, ""},
		{nil, "gitea-merger", map[string]string{"GITEA_TOKEN": token}, "gitea-merger", token, ""},
		{cfg, "acme-bot", map[string]string{"ACME_TOKEN": token}, "acme-bot", token, ""},
		{cfg, "acme-bot", map[string]string{"GITEA_TOKEN": token}, "acme-bot", "", `profile "acme-bot": no token: environment variable ACME_TOKEN (its token_source_name) is empty or unset`},
		{cfg, "gitea-merger", nil, "gitea-merger", "", "environment variable GITEA_TOKEN"},
		{cfg, "gitea-admin", map[string]string{"GITEA_TOKEN": token}, "", "", `unknown profile "gitea-admin" (GITEA_MCP_PROFILE); known: gitea-issue-manager,`},
	}
	for _, tt := range tests {
		p, tok, err := selectProfile(tt.cfg, tt.name, func(k string) string { return tt.env[k] })
		name := ""
		if p != nil {
			name = p.Name
		}
		if name != tt.profile || tok != tt.tok || !errContains(err, tt.err) {
			t.Errorf("selectProfile(%q) = %q, token %v, %v; want %q, token %v, error containing %q", tt.name, name, tok != "", err, tt.profile, tt.tok != "", tt.err)
		}
	}
}

func TestProfileErrorsHideTokens(t *testing.T) {
	t.Parallel()
	const token = "abcdef0123456789abcdef0123456789abcdef01"
	env := func(k string) string {
		if k == "GITEA_TOKEN" || k == "DECOY" {
			return token
		}
		return ""
	}
	files := []string{
		`{"profiles": [{"profile_name": "t", "token_source_name": "` + token + `"}]}`,
		`{"profiles": [{"profile_name": "t", "can_merge_prs": "` + token + `"}]}`,
		`{"profiles": [{"profile_name": "t", "token": "` + token + `"}]}`,
		`{"profiles": [{"profile_name": "t", "allowed_operations": "` + token + `"}]}`,
		`{"allow_runtime_switching": "` + token + `"}`,
		`{"profiles": [{"profile_name": "t", "audit_label": "x"}]} "` + token + `"`,
		`{"profiles": [{"profile_name": "t", "token_source_name": "UNSET"}]}`,
	}
	for _, file := range files {
		path := filepath.Join(t.TempDir(), "p.json")
		os.WriteFile(path, []byte(file), 0o600)
		cfg, err := loadProfiles(path)
		if err == nil {
			_, _, err = selectProfile(cfg, "t", env)
		}
		if err == nil || strings.Contains(err.Error(), token) {
			t.Errorf("file %s: error %v: want an error without the token", file, err)
		}
	}
	if _, _, err := selectProfile(nil, "no-such-profile", env); err == nil || strings.Contains(err.Error(), token) {
		t.Errorf("unknown profile: error %v: want an error without the token", err)
	}
}

func TestDecide(t *testing.T) {
	t.Parallel()
	ops := docOps(t)
	bot := compiled(t, &profile{Name: "acme-bot", AuthenticatedUsername: "bot", Repositories: []string{"acme/*"},
		AllowedOperations: []string{"read", "gitea.issue.create", "gitea.user.settings", "gitea.repo.create"}})
	acme := map[string]string{"owner": "acme", "repo": "app", "index": "1"}
	tests := []struct {
		p        *profile
		identity string
		op       string
		args     map[string]any
		path     map[string]string
		want     decision
	}{
		{nil, "", "repoGetPullRequest", nil, acme, decision{Allowed: true, RequiredPermission: "gitea.read", Reason: "reads need no profile"}},
		{nil, "alice", "repoMergePullRequest", nil, acme,
			decision{RequiredPermission: "gitea.pr.merge", Identity: "alice", Reason: "no active profile; gitea.pr.merge needs one (set GITEA_MCP_PROFILE)"}},
		{builtin(t, "gitea-reviewer"), "rita", "repoCreatePullReview", map[string]any{"event": "APPROVED"}, acme,
			decision{Allowed: true, RequiredPermission: "gitea.pr.approve", Identity: "rita", Profile: "gitea-reviewer", Reason: "gitea.pr.approve is allowed by gitea-reviewer"}},
		{builtin(t, "gitea-reviewer"), "rita", "repoMergePullRequest", nil, acme,
			decision{RequiredPermission: "gitea.pr.merge", Identity: "rita", Profile: "gitea-reviewer",
				Reason: "gitea.pr.merge is forbidden for gitea-reviewer; use a profile that allows it, such as gitea-merger"}},
		{builtin(t, "gitea-author"), "al", "repoSubmitPullReview", map[string]any{"event": "APPROVED"}, acme,
			decision{RequiredPermission: "gitea.pr.approve", Identity: "al", Profile: "gitea-author",
				Reason: "gitea.pr.approve is forbidden for gitea-author; use a profile that allows it, such as gitea-reviewer"}},
		{builtin(t, "gitea-author"), "al", "repoEditPullRequest", map[string]any{"state": "closed"}, acme,
			decision{RequiredPermission: "gitea.pr.close", Identity: "al", Profile: "gitea-author",
				Reason: "gitea.pr.close is not in the allowed operations of gitea-author; use a profile that allows it, such as prgs-reconciler"}},
		{builtin(t, "gitea-author"), "al", "repoEditPullRequest", map[string]any{"title": "x"}, acme,
			decision{Allowed: true, RequiredPermission: "gitea.pr.create", Identity: "al", Profile: "gitea-author", Reason: "gitea.pr.create is allowed by gitea-author"}},
		{builtin(t, "prgs-reconciler"), "rc", "repoEditPullRequest", map[string]any{"state": "closed"}, acme,
			decision{Allowed: true, RequiredPermission: "gitea.pr.close", Identity: "rc", Profile: "prgs-reconciler", Reason: "gitea.pr.close is allowed by prgs-reconciler"}},
		{builtin(t, "gitea-reviewer"), "rita", "repoCreatePullReview", map[string]any{"event": "approve"}, acme,
			decision{Identity: "rita", Profile: "gitea-reviewer",
				Reason: "repoCreatePullReview: event must be one of APPROVED, COMMENT, PENDING, REQUEST_CHANGES, given once as a string; nothing was sent"}},
		{builtin(t, "gitea-merger"), "", "repoMergePullRequest", nil, acme,
			decision{RequiredPermission: "gitea.pr.merge", Profile: "gitea-merger", Reason: "authenticated identity unknown; verify it with gitea_whoami before mutating"}},
		{builtin(t, "gitea-merger"), "", "repoGetPullRequest", nil, acme,
			decision{Allowed: true, RequiredPermission: "gitea.read", Profile: "gitea-merger", Reason: "gitea.read is allowed by gitea-merger"}},
		{bot, "Bot", "issueCreateIssue", nil, acme,
			decision{Allowed: true, RequiredPermission: "gitea.issue.create", Identity: "Bot", Profile: "acme-bot", Reason: "gitea.issue.create is allowed by acme-bot"}},
		{bot, "alice", "issueCreateIssue", nil, acme,
			decision{RequiredPermission: "gitea.issue.create", Identity: "alice", Profile: "acme-bot", Reason: `identity "alice" is not "bot", the authenticated_username of acme-bot; check its token`}},
		{bot, "bot", "issueCreateIssue", nil, map[string]string{"owner": "other", "repo": "app"},
			decision{RequiredPermission: "gitea.issue.create", Identity: "bot", Profile: "acme-bot", Reason: `repository "other/app" is outside the repositories of acme-bot`}},
		{bot, "bot", "repoGetPullRequest", nil, map[string]string{"owner": "other", "repo": "app"},
			decision{RequiredPermission: "gitea.read", Identity: "bot", Profile: "acme-bot", Reason: `repository "other/app" is outside the repositories of acme-bot`}},
		{bot, "bot", "issueCreateIssue", nil, map[string]string{"owner": "acme"},
			decision{RequiredPermission: "gitea.issue.create", Identity: "bot", Profile: "acme-bot", Reason: `repository "acme/" is outside the repositories of acme-bot`}},
		{bot, "bot", "repoSearch", nil, nil,
			decision{RequiredPermission: "gitea.read", Identity: "bot", Profile: "acme-bot",
				Reason: "acme-bot is limited to its repositories and GET /repos/search (repoSearch) names no single repository: it may reveal or touch others"}},
		{bot, "bot", "repoGetByID", nil, map[string]string{"id": "7"},
			decision{RequiredPermission: "gitea.read", Identity: "bot", Profile: "acme-bot",
				Reason: "acme-bot is limited to its repositories and GET /repositories/{id} (repoGetByID) names no single repository: it may reveal or touch others"}},
		{bot, "bot", "getVersion", nil, nil,
			decision{Allowed: true, RequiredPermission: "gitea.read", Identity: "bot", Profile: "acme-bot", Reason: "gitea.read is allowed by acme-bot"}},
		{bot, "bot", "notifyReadList", nil, nil,
			decision{RequiredPermission: "gitea.user.settings", Identity: "bot", Profile: "acme-bot",
				Reason: "acme-bot is limited to its repositories and PUT /notifications (notifyReadList) names no single repository: it may reveal or touch others"}},
		{bot, "bot", "createFork", nil, acme,
			decision{RequiredPermission: "gitea.repo.create", Identity: "bot", Profile: "acme-bot", Reason: `createFork forks into "bot/app", outside the repositories of acme-bot`}},
		{bot, "bot", "createFork", map[string]any{"body": map[string]any{"organization": "acme", "name": "app-fork"}}, acme,
			decision{Allowed: true, RequiredPermission: "gitea.repo.create", Identity: "bot", Profile: "acme-bot", Reason: "gitea.repo.create is allowed by acme-bot"}},
		{builtin(t, "gitea-merger"), "mo", "repoMergePullRequest", map[string]any{"body": map[string]any{"do": "merge", "force_merge": true}}, acme,
			decision{RequiredPermission: "gitea.pr.force_merge", Identity: "mo", Profile: "gitea-merger",
				Reason: "repoMergePullRequest: force_merge: true merges past branch protection (required approvals and status checks); " +
					"gitea.pr.force_merge is forbidden for gitea-merger; use a profile that allows it, such as gitea-owner"}},
		{builtin(t, "gitea-merger"), "mo", "repoMergePullRequest", map[string]any{"body": map[string]any{"do": "merge", "delete_branch_after_merge": true}}, acme,
			decision{RequiredPermission: "gitea.branch.delete", Identity: "mo", Profile: "gitea-merger",
				Reason: "repoMergePullRequest: delete_branch_after_merge: true deletes the head branch; " +
					"gitea.branch.delete is not in the allowed operations of gitea-merger; use a profile that allows it, such as gitea-owner"}},
		{builtin(t, "gitea-owner"), "root", "repoMergePullRequest", map[string]any{"body": map[string]any{"do": "merge", "force_merge": true, "delete_branch_after_merge": true}}, acme,
			decision{Allowed: true, RequiredPermission: "gitea.pr.merge", Identity: "root", Profile: "gitea-owner", Reason: "gitea.pr.merge is allowed by gitea-owner"}},
	}
	for _, tt := range tests {
		op, ok := ops[tt.op]
		if !ok {
			t.Fatalf("unknown operation %s", tt.op)
		}
		tt.want.Tool, tt.want.Operation = "tool_"+tt.op, tt.op
		got := decide(tt.p, tt.identity, "tool_"+tt.op, op, tt.args, tt.path)
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("decide(%s) mismatch (-want +got):\n%s", tt.op, diff)
		}
	}
}

func TestDecideUnmappedOperation(t *testing.T) {
	t.Parallel()
	got := decide(builtin(t, "gitea-owner"), "root", "t", opInfo{ID: "newThing", Method: "POST", Route: "/new/thing"}, nil, nil)
	want := decision{Tool: "t", Operation: "newThing", Profile: "gitea-owner", Identity: "root", Reason: "POST /new/thing (newThing) maps to no canonical operation; it is denied"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestDecisionJSON(t *testing.T) {
	t.Parallel()
	data, err := json.Marshal(decision{Allowed: true, Tool: "t", Operation: "o", RequiredPermission: "p", Profile: "f", Identity: "i", Reason: "r"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"tool":"t","operation":"o","required_permission":"p","profile":"f","identity":"i","reason":"r"}`
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestSelfActionDenied(t *testing.T) {
	t.Parallel()
	alice, bob := account{Login: "alice", ID: 1}, account{Login: "bob", ID: 2}
	tests := []struct {
		perm       string
		me, author account
		denied     bool
		reason     string
	}{
		{"gitea.pr.approve", alice, alice, true, `"alice" authored this pull request and may not approve it; use a profile with another identity`},
		{"gitea.pr.merge", account{Login: "Alice"}, account{Login: "alice"}, true, `"Alice" authored this pull request and may not merge it`},
		{"merge", alice, alice, true, "may not merge it"},
		{"gitea.pr.merge", bob, alice, false, ""},
		{"gitea.pr.merge", account{Login: "bob"}, account{Login: "alice"}, false, ""},
		// a rename after the caller's login was verified: the id still matches
		{"gitea.pr.merge", account{Login: "alice-old", ID: 1}, alice, true, `"alice-old" authored this pull request and may not merge it`},
		// another account that took a renamed user's old login
		{"gitea.pr.merge", account{Login: "alice", ID: 3}, alice, false, ""},
		// an id on one side only: the logins decide
		{"gitea.pr.approve", account{Login: "alice"}, alice, true, "may not approve it"},
		{"gitea.pr.approve", bob, account{}, true, "cannot compare the pull request author with the authenticated identity; refusing to approve"},
		{"gitea.pr.merge", account{}, alice, true, "refusing to merge"},
		{"gitea.pr.comment", alice, alice, false, ""},
		{"gitea.pr.request_changes", alice, alice, false, ""},
	}
	for _, tt := range tests {
		denied, reason := selfActionDenied(tt.perm, tt.me, tt.author)
		if denied != tt.denied || !strings.Contains(reason, tt.reason) || tt.reason == "" && reason != "" {
			t.Errorf("selfActionDenied(%q, %+v, %+v) = %v, %q; want %v, %q", tt.perm, tt.me, tt.author, denied, reason, tt.denied, tt.reason)
		}
	}
}

func FuzzNormalizeOperation(f *testing.F) {
	for _, s := range []string{"read", "gitea.pr.merge", "issue.create", "jenkins.read", "gitea..x", ".", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := normalizeOperation(name)
		switch {
		case err != nil && got != "":
			t.Errorf("normalizeOperation(%q) = %q with error %v", name, got, err)
		case err == nil && !isCanonical[got]:
			t.Errorf("normalizeOperation(%q) = %q, not canonical", name, got)
		}
	})
}

func FuzzRequiredPermission(f *testing.F) {
	f.Add("repoEditPullRequest", []byte(`{"state":"closed"}`))
	f.Add("repoCreatePullReview", []byte(`{"body":{"event":"APPROVED"},"event":null}`))
	f.Add("issueEditIssue", []byte(`{"body":{"state":[1]}}`))
	ops := docOps(f)
	f.Fuzz(func(t *testing.T, id string, body []byte) {
		var args map[string]any
		if json.Unmarshal(body, &args) != nil {
			return
		}
		op := ops[id]
		perm := requiredPermission(op, args)
		if perm != "" && !isCanonical[perm] || perm == permRead && op.Method != "GET" {
			t.Errorf("%s with %s requires %q", id, body, perm)
		}
	})
}

func FuzzParseProfiles(f *testing.F) {
	f.Add([]byte(`{"rules":{"allow_runtime_switching":true},"profiles":[{"profile_name":"a","allowed_operations":["read"],"repositories":["a/*"]}]}`))
	f.Add([]byte(`{"profiles":[{"profile_name":"m","allowed_operations":["merge"],"can_merge_prs":true}]}`))
	f.Add([]byte(`{"profiles":[{"profile_name":"m","forbidden_operations":["merge"],"Forbidden_operations":[]}],"x":[{"a":1},[{"b":2}]]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := parseProfiles(data)
		if err != nil {
			return
		}
		for _, name := range cfg.names {
			for _, op := range canonicalOps {
				p := cfg.profiles[name]
				if ok, _ := p.allows(op.name); ok && (p.forbidden[op.name] || !p.allowed[op.name]) {
					t.Errorf("%s grants %s outside its sets", name, op.name)
				}
			}
		}
	})
}

func BenchmarkDecide(b *testing.B) {
	ops := docOps(b)
	bot := compiled(b, &profile{Name: "acme-bot", Repositories: []string{"acme/*", "tools/*"}, AllowedOperations: []string{"read", "gitea.pr.comment"}})
	path := map[string]string{"owner": "acme", "repo": "app", "index": "7"}
	cases := []struct {
		name string
		p    *profile
		op   string
		args map[string]any
	}{
		{"read-no-profile", nil, "repoGetPullRequest", nil},
		{"approve-allowed", builtin(b, "gitea-reviewer"), "repoCreatePullReview", map[string]any{"event": "APPROVED", "body": "ok"}},
		{"merge-denied", builtin(b, "gitea-reviewer"), "repoMergePullRequest", nil},
		{"owner-late-rule", builtin(b, "gitea-owner"), "repoAddTeam", nil},
		{"repositories", bot, "repoResolvePullReviewComment", nil},
		{"repositories-no-repo-route", bot, "repoSearch", nil},
		{"merge-effects", builtin(b, "gitea-merger"), "repoMergePullRequest",
			map[string]any{"body": map[string]any{"do": "merge", "force_merge": true, "delete_branch_after_merge": true}}},
		{"commit-effects", builtin(b, "gitea-author"), "repoChangeFiles",
			map[string]any{"body": map[string]any{"branch": "main", "new_branch": "topic", "message": "m", "files": []any{}}}},
	}
	for _, c := range cases {
		op := ops[c.op]
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				decide(c.p, "rita", "tool", op, c.args, path)
			}
		})
	}
}

// requiredPermission is resolvePermission's permission alone.
func requiredPermission(op opInfo, args map[string]any) string {
	perm, _ := resolvePermission(op, args)
	return perm
}

// TestCanonicalOpsREADME checks README.md's table of canonical operations
// against canonicalOps and operationAliases: the same operations in the same
// order, each with its aliases and canonicalOps' text, so that one text per
// operation exists and the README cannot drift from it.
func TestCanonicalOpsREADME(t *testing.T) {
	t.Parallel()
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(readme), "| Operation | Alias | Covers |\n|---|---|---|\n")
	if !ok {
		t.Fatal("README.md has no table of canonical operations")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	aliases := map[string][]string{}
	for alias, op := range operationAliases {
		aliases[op] = append(aliases[op], "`"+alias+"`")
	}
	var want []string
	for _, op := range canonicalOps {
		slices.Sort(aliases[op.name])
		want = append(want, fmt.Sprintf("| `%s` | %s | %s |", op.name, strings.Join(aliases[op.name], ", "), op.doc))
	}
	got := strings.Split(strings.ReplaceAll(table, "| | ", "|  | "), "\n")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("README.md's canonical operations differ from canonicalOps and operationAliases: mismatch (-want +got):\n%s", diff)
	}
}

// TestPermRulesOrder proves the order of permRules for every operation of the
// document: where more than one rule matches an operation, the first one
// shadows the others, and its precedes names each canonical operation it
// shadows (or says "every rule below"); a precedes naming one it never
// shadows, or given where the rule shadows nothing, is stale.
func TestPermRulesOrder(t *testing.T) {
	t.Parallel()
	shadows := make([]map[string][]string, len(permRules)) // rule -> shadowed perm -> operations
	for _, op := range docOps(t) {
		first := -1
		for i := range permRules {
			switch {
			case !permRules[i].matches(op):
			case first < 0:
				first = i
			default:
				if shadows[first] == nil {
					shadows[first] = map[string][]string{}
				}
				shadows[first][permRules[i].perm] = append(shadows[first][permRules[i].perm], op.ID)
			}
		}
	}
	named := regexp.MustCompile(`gitea\.[a-z_]+(\.[a-z_]+)?`)
	for i, r := range permRules {
		all := strings.Contains(r.precedes, "every rule below")
		for perm, ids := range shadows[i] {
			if !all && !slices.Contains(named.FindAllString(r.precedes, -1), perm) {
				t.Errorf("rule %d (%s) shadows %s for %v: its precedes must say why it comes first", i, r.perm, perm, ids)
			}
		}
		if r.precedes != "" && len(shadows[i]) == 0 {
			t.Errorf("rule %d (%s) shadows no rule: its precedes %q is stale", i, r.perm, r.precedes)
		}
		for _, perm := range named.FindAllString(r.precedes, -1) {
			if shadows[i][perm] == nil {
				t.Errorf("rule %d (%s): precedes names %s, which it never shadows", i, r.perm, perm)
			}
		}
	}
}

// TestPermitted pins the one rule every policy question asks: reads without
// a profile, nothing else without one, and a profile's allowed and forbidden
// operations (aliases included).
func TestPermitted(t *testing.T) {
	t.Parallel()
	author := &profile{Name: "author", allowed: map[string]bool{permRead: true, "gitea.pr.create": true}, forbidden: map[string]bool{permMerge: true}}
	tests := []struct {
		p      *profile
		perm   string
		want   bool
		reason string
	}{
		{nil, permRead, true, "reads need no profile"},
		{nil, "read", false, "no active profile; read needs one"},
		{nil, permMerge, false, "no active profile; gitea.pr.merge needs one (set GITEA_MCP_PROFILE)"},
		{nil, "", false, "no active profile"},
		{author, permRead, true, "gitea.read is allowed by author"},
		{author, "open_pr", true, "gitea.pr.create is allowed by author"},
		{author, "merge", false, "gitea.pr.merge is forbidden for author"},
		{author, "gitea.pr.close", false, "gitea.pr.close is not in the allowed operations of author"},
		{author, "", false, "not an operation name"},
	}
	for _, tt := range tests {
		got, why := permitted(tt.p, tt.perm)
		if got != tt.want || !strings.Contains(why, tt.reason) {
			t.Errorf("permitted(%v, %q) = %v, %q; want %v, reason containing %q", tt.p != nil, tt.perm, got, why, tt.want, tt.reason)
		}
	}
}

// TestProfileLookalikes: operation names spelled with Unicode lookalikes (a
// Cyrillic е, a Kelvin sign, a fullwidth dot, a trailing zero-width space)
// never normalize: allowed, they grant nothing; forbidden, they deny
// everything. Tried while attacking the profile file; nothing widened.
func TestProfileLookalikes(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"gitea.pr.m\u0435rge", "gitea.pr.merge\u200b", "gitea\uff0epr.merge", "\u212aitea.pr.merge", "GITEA.PR.MERGE", "gitea.pr.merge "} {
		file := fmt.Sprintf(`{"profiles": [{"profile_name": "a", "allowed_operations": ["read", %q]}, {"profile_name": "f", "allowed_operations": ["read", "merge"], "forbidden_operations": [%q]}]}`, name, name)
		cfg, err := parseProfiles([]byte(file))
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		if a, f := cfg.profiles["a"], cfg.profiles["f"]; a.grants(permMerge) || f.grants(permMerge) || f.grants(permRead) {
			t.Errorf("%q: allowed grants merge %v; forbidden leaves merge %v, read %v", name, a.grants(permMerge), f.grants(permMerge), f.grants(permRead))
		}
	}
}
