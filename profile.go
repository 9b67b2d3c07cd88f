package main

// Execution profiles (README, "Execution profiles"): a profile names the
// canonical Gitea operations a task may perform. This file holds the
// canonical operations and their aliases, the built-in profiles, and the
// loading and selection of profiles (GITEA_MCP_PROFILE, GITEA_MCP_CONFIG)
// with what a profile allows. It never reads a token into an error, and a
// name it cannot normalize grants nothing; what one call may do is decided
// in policy.go.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
	"sync"
)

// Canonical operations used by the code itself.
const (
	permRead     = "gitea.read"
	permApprove  = "gitea.pr.approve"
	permMerge    = "gitea.pr.merge"
	defaultToken = "GITEA_TOKEN"
)

// canonicalOps lists every canonical Gitea operation with the one line README.md shows for it
// (TestCanonicalOpsREADME checks the table).
// gitea-owner is allowed all of them; there is no wildcard spelling (`gitea.*` is unknown).
var canonicalOps = []canonicalOp{
	{"gitea.read", "every GET request: repositories, issues, pull requests, files, identity"},
	{"gitea.query", "read-only requests sent as POST: render markdown or markup, bulk file contents"},
	{"gitea.issue.create", "open an issue"},
	{"gitea.issue.comment", "comment on an issue or pull request thread; edit or delete one's own comments and their attachments (another's needs gitea.issue.edit too); reactions"},
	{"gitea.issue.label", "add, replace, remove or clear the labels of an issue or pull request"},
	{"gitea.issue.close", "close an issue (issueEditIssue with state \"closed\"; another field besides needs gitea.issue.edit too)"},
	{"gitea.issue.edit", "edit an issue (title, body, assignees, milestone, reopen), its deadline, attachments, dependencies, blocks, lock, pin, subscriptions, tracked time"},
	{"gitea.issue.delete", "delete an issue (a pull request's number needs gitea.repo.admin)"},
	{"gitea.issue.manage", "create, edit or delete the labels and milestones of a repository"},
	{"gitea.pr.create", "open a pull request; edit one (title, body, base, reopen); request or unrequest reviewers"},
	{"gitea.pr.comment", "review with event COMMENT; resolve or unresolve review comments"},
	{"gitea.pr.review", "start a pending review (event PENDING or none); delete one's own review (one whose deletion restores an earlier approval needs gitea.pr.approve too)"},
	{"gitea.pr.approve", "review with event APPROVED"},
	{"gitea.pr.request_changes", "review with event REQUEST_CHANGES"},
	{"gitea.pr.merge", "merge a pull request; cancel a scheduled auto-merge; with a write, land it on a default branch"},
	{"gitea.pr.force_merge", "merge a pull request past branch protection (force_merge: true); no built-in profile but gitea-owner holds it"},
	{"gitea.pr.close", "close a pull request (repoEditPullRequest with state \"closed\"; another field besides needs gitea.pr.create too); no alias, granted deliberately"},
	{"gitea.branch.create", "create a branch"},
	{"gitea.branch.push", "move an existing branch: set it to a commit, update a pull request head from its base, sync a fork"},
	{"gitea.branch.delete", "delete or rename a branch"},
	{"gitea.repo.commit", "commit through the contents API: create, update, delete or change files, apply a diff patch"},
	{"gitea.repo.create", "create, fork, generate or migrate a repository"},
	{"gitea.repo.admin", "repository settings: edit, delete, transfer, avatar, topics, collaborators, teams, deploy key deletion, branch and tag protections, push mirrors, review dismissal and undismissal, deleting another's review, review requests that undo an official review or restore an uncounted approval"},
	{"gitea.repo.status", "set a commit status (can satisfy required status checks)"},
	{"gitea.release.write", "create, edit or delete releases, release attachments and tags"},
	{"gitea.wiki.write", "create, edit or delete wiki pages"},
	{"gitea.webhook.write", "create, edit, delete or test repository, organization and user webhooks"},
	{"gitea.actions.write", "Actions: secrets, variables, runners, workflow dispatch, enable and disable, reruns, run and artifact deletion"},
	{"gitea.package.write", "delete, link or unlink packages"},
	{"gitea.org.admin", "organizations and teams: create, edit, delete, rename, avatar, members, blocks, labels, team members and repositories"},
	{"gitea.user.settings", "the caller's account: settings, avatar, emails, GPG keys, key, token and OAuth2 app deletion, blocks, follows, stars, watches, notification read marks"},
	{"gitea.token.create", "mint a credential: access tokens, OAuth2 applications, runner registration tokens, user SSH keys, deploy keys"},
	{"gitea.admin.user", "site administration of users: create, edit, delete, rename, their keys, badges, organizations, repositories"},
	{"gitea.admin.system", "site administration: cron tasks, system webhooks, unadopted repositories, instance runners, repository git hooks (server-side scripts)"},
}

// canonicalOp is a canonical operation and its line in README.md.
type canonicalOp struct{ name, doc string }

// isCanonical is the set of canonicalOps names.
var isCanonical = func() map[string]bool {
	m := make(map[string]bool, len(canonicalOps))
	for _, op := range canonicalOps {
		m[op.name] = true
	}
	return m
}()

// operationAliases is the document's table of legacy spellings; nothing else is accepted unqualified.
var operationAliases = map[string]string{
	"read":            "gitea.read",
	"review":          "gitea.pr.review",
	"comment":         "gitea.pr.comment",
	"approve":         "gitea.pr.approve",
	"request_changes": "gitea.pr.request_changes",
	"merge":           "gitea.pr.merge",
	"pr.create":       "gitea.pr.create",
	"branch.push":     "gitea.branch.push",
	"branch":          "gitea.branch.create",
	"commit":          "gitea.repo.commit",
	"push":            "gitea.branch.push",
	"open_pr":         "gitea.pr.create",
}

// normalizeOperation returns the canonical Gitea operation that name
// spells: a canonical name or an entry of the alias table, nothing else. A
// dotted name of another service (jenkins.read) is not a Gitea operation, and
// a Gitea name without its prefix (pr.merge) is ambiguous rather than guessed.
func normalizeOperation(name string) (string, error) {
	if isCanonical[name] {
		return name, nil
	}
	first, _, dotted := strings.Cut(name, ".")
	switch {
	case !validWord(name, ".") || strings.Contains(name, "..") || strings.HasPrefix(name, ".") || strings.HasSuffix(name, "."):
		return "", fmt.Errorf("operation %q: not an operation name", name)
	case operationAliases[name] != "":
		return operationAliases[name], nil
	case first == "gitea" && dotted:
		return "", fmt.Errorf("operation %q: unknown gitea operation", name)
	case !dotted:
		return "", fmt.Errorf("operation %q: unknown gitea operation (not in the alias table)", name)
	case slices.ContainsFunc(canonicalOps, func(op canonicalOp) bool { return strings.HasPrefix(op.name, "gitea."+first+".") }): // an area of Gitea's
		return "", fmt.Errorf("operation %q: ambiguous; spell it gitea.%s or use an alias", name, name)
	}
	return "", fmt.Errorf("operation %q: belongs to service %q, not %q", name, first, "gitea")
}

// validWord reports whether s is non-empty and made of a-z, 0-9, _ and the bytes in extra.
func validWord(s, extra string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '_' || strings.IndexByte(extra, c) >= 0) {
			return false
		}
	}
	return s != ""
}

// profile is one execution profile, as written in the profile file.
type profile struct {
	Name                  string   `json:"profile_name"`
	AuthenticatedUsername string   `json:"authenticated_username"` // verified against gitea_whoami; empty accepts any verified login
	AllowedOperations     []string `json:"allowed_operations"`
	ForbiddenOperations   []string `json:"forbidden_operations"`
	TokenSourceName       string   `json:"token_source_name"` // environment variable holding the token; never the token
	AuditLabel            string   `json:"audit_label"`
	// The can_* flags: left out (nil), compile derives each from allowed_operations.
	CanApprovePRs            *bool    `json:"can_approve_prs"`
	CanMergePRs              *bool    `json:"can_merge_prs"`
	CanPushBranches          *bool    `json:"can_push_branches"`
	CanMutateIssues          *bool    `json:"can_mutate_issues"`
	CanAuthorImplPRs         *bool    `json:"can_author_impl_prs"`
	Repositories             []string `json:"repositories"`                // owner/name globs with *; absent = any repository
	AllowDefaultBranchWrites bool     `json:"allow_default_branch_writes"` // writes may land on a default branch without gitea.pr.merge

	allowed, forbidden map[string]bool // normalized by compile
	badForbidden       string          // first forbidden entry that cannot be normalized: denies everything
	repoPats           [][2]string     // lower-case owner and name globs; nil = unrestricted
}

// boolGates lists, for each capability flag, the operations it must be true to grant.
// A flag left out is derived: true when the profile grants one of them. A
// profile granting one of them with the flag set to false is rejected at load.
var boolGates = []struct {
	field string
	flag  func(*profile) **bool
	ops   []string
}{
	{"can_approve_prs", func(p *profile) **bool { return &p.CanApprovePRs }, []string{"gitea.pr.approve"}},
	{"can_merge_prs", func(p *profile) **bool { return &p.CanMergePRs }, []string{"gitea.pr.merge", "gitea.pr.force_merge"}},
	{"can_push_branches", func(p *profile) **bool { return &p.CanPushBranches },
		[]string{"gitea.branch.push", "gitea.branch.create", "gitea.branch.delete", "gitea.repo.commit"}},
	{"can_mutate_issues", func(p *profile) **bool { return &p.CanMutateIssues },
		[]string{"gitea.issue.create", "gitea.issue.label", "gitea.issue.close", "gitea.issue.edit", "gitea.issue.delete", "gitea.issue.manage"}},
	{"can_author_impl_prs", func(p *profile) **bool { return &p.CanAuthorImplPRs }, []string{"gitea.pr.create"}},
}

// can reports whether a capability flag is set, after compile: nil (never compiled) is false.
func can(flag *bool) bool { return flag != nil && *flag }

// compile validates p and normalizes its operations and repositories.
func (p *profile) compile() error {
	if !validWord(p.Name, "-.") {
		return fmt.Errorf("profile %q: profile_name must be lower-case letters, digits, '-', '.', '_'", p.Name)
	}
	if p.TokenSourceName == "" {
		p.TokenSourceName = defaultToken
	}
	if !envName(p.TokenSourceName) { // never echo the value: it might be a pasted token
		return fmt.Errorf("profile %q: token_source_name must name an environment variable (A-Z, 0-9, _)", p.Name)
	}
	if slices.Contains(serverSecrets, p.TokenSourceName) { // sent to Gitea in every request's Authorization header
		return fmt.Errorf("profile %q: token_source_name %s holds a secret of this server, not a Gitea token", p.Name, p.TokenSourceName)
	}
	if p.AuditLabel == "" {
		p.AuditLabel = p.Name
	}
	p.allowed, p.forbidden = map[string]bool{}, map[string]bool{}
	for _, name := range p.AllowedOperations {
		if op, err := normalizeOperation(name); err == nil { // else it grants nothing
			p.allowed[op] = true
		}
	}
	for _, name := range p.ForbiddenOperations {
		if op, err := normalizeOperation(name); err == nil {
			p.forbidden[op] = true
		} else if p.badForbidden == "" {
			p.badForbidden = name
		}
	}
	for _, g := range boolGates {
		granted := slices.IndexFunc(g.ops, p.grants)
		switch flag := g.flag(p); {
		case *flag == nil:
			derived := granted >= 0
			*flag = &derived
		case !**flag && granted >= 0:
			return fmt.Errorf("profile %q: allowed_operations grants %s but %s is false", p.Name, g.ops[granted], g.field)
		}
	}
	p.repoPats = nil
	if p.Repositories != nil {
		p.repoPats = [][2]string{}
	}
	for _, r := range p.Repositories {
		owner, name, ok := strings.Cut(strings.ToLower(r), "/")
		if !ok || !validWord(owner, "-.*") || !validWord(name, "-.*") {
			return fmt.Errorf("profile %q: repository %q must be owner/name (letters, digits, '-', '.', '_', '*')", p.Name, r)
		}
		p.repoPats = append(p.repoPats, [2]string{owner, name})
	}
	return nil
}

// serverSecrets are the settings holding the server's own secrets, which no
// profile may read as its Gitea token.
var serverSecrets = []string{"MCP_BEARER_TOKEN", "MCP_OAUTH_KEY", "GITEA_OAUTH_CLIENT_SECRET", "GITEA_AUDIT_KEY"}

// envName reports whether s looks like an environment variable name: [A-Z_][A-Z0-9_]*.
func envName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('A' <= c && c <= 'Z' || c == '_' || i > 0 && '0' <= c && c <= '9') {
			return false
		}
	}
	return s != ""
}

// grants reports whether p grants the canonical operation op.
func (p *profile) grants(op string) bool {
	return p.badForbidden == "" && !p.forbidden[op] && p.allowed[op]
}

// granted lists the canonical operations p grants, sorted: its allowed ones
// that no forbidden entry takes away.
func (p *profile) granted() []string {
	return slices.DeleteFunc(sortedSet(p.allowed), func(op string) bool { return !p.grants(op) })
}

// warnings lists the allowed entries of p that cannot be normalized and so grant nothing.
func (p *profile) warnings() []string {
	var w []string
	for _, name := range p.AllowedOperations {
		if _, err := normalizeOperation(name); err != nil {
			w = append(w, fmt.Sprintf("profile %q: allowed entry grants nothing: %v", p.Name, err))
		}
	}
	return w
}

// allows reports whether p may perform perm (a canonical name or an alias),
// with a short reason. Forbidden wins over allowed; unknown names are denied.
func (p *profile) allows(perm string) (bool, string) {
	op, err := normalizeOperation(perm)
	switch {
	case err != nil:
		return false, err.Error()
	case p.badForbidden != "":
		return false, fmt.Sprintf("forbidden entry %q of %s cannot be normalized, so %s denies everything; fix its forbidden_operations", p.badForbidden, p.Name, p.Name)
	case p.forbidden[op]:
		return false, fmt.Sprintf("%s is forbidden for %s%s", op, p.Name, suggestProfile(op))
	case !p.allowed[op]:
		return false, fmt.Sprintf("%s is not in the allowed operations of %s%s", op, p.Name, suggestProfile(op))
	}
	return true, op + " is allowed by " + p.Name
}

// builtinFor maps each canonical operation to the narrowest built-in profile granting it.
var builtinFor = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for _, b := range builtinProfiles() {
		for _, op := range canonicalOps {
			if m[op.name] == "" && b.grants(op.name) {
				m[op.name] = b.Name
			}
		}
	}
	return m
})

// suggestProfile names the narrowest built-in profile granting op, as a reason suffix.
func suggestProfile(op string) string {
	return "; use a profile that allows it, such as " + builtinFor()[op]
}

// builtinProfiles returns fresh compiled copies of the document's reference profiles,
// narrowest first. Additions to the document's lists follow its own definitions:
// issue-manager's can_mutate_issues covers editing (gitea.issue.edit); the author's
// branch.push means "push branches / create commits" (gitea.branch.create, gitea.repo.commit).
// Their can_* flags are derived from their operations.
func builtinProfiles() []*profile {
	ps := []*profile{
		{Name: "gitea-issue-manager",
			AllowedOperations:   []string{"gitea.read", "gitea.issue.create", "gitea.issue.comment", "gitea.issue.label", "gitea.issue.close", "gitea.issue.edit"},
			ForbiddenOperations: []string{"gitea.pr.approve", "gitea.pr.merge", "gitea.branch.push"}},
		{Name: "gitea-author",
			AllowedOperations:   []string{"gitea.read", "gitea.branch.push", "gitea.branch.create", "gitea.repo.commit", "gitea.pr.create", "gitea.pr.comment", "gitea.issue.comment"},
			ForbiddenOperations: []string{"gitea.pr.approve", "gitea.pr.merge"}},
		{Name: "gitea-reviewer",
			AllowedOperations:   []string{"gitea.read", "gitea.pr.comment", "gitea.pr.review", "gitea.pr.approve", "gitea.pr.request_changes", "gitea.issue.comment"},
			ForbiddenOperations: []string{"gitea.pr.merge", "gitea.branch.push"}},
		{Name: "gitea-merger",
			AllowedOperations:   []string{"gitea.read", "gitea.pr.merge"},
			ForbiddenOperations: []string{"gitea.pr.approve", "gitea.branch.push", "gitea.pr.create", "gitea.pr.force_merge"}},
		{Name: "prgs-reconciler",
			AllowedOperations:   reconcilerNeeds,
			ForbiddenOperations: reconcilerForbidden},
		{Name: "gitea-owner",
			AllowedOperations: sortedSet(isCanonical)},
	}
	for _, p := range ps {
		if err := p.compile(); err != nil {
			panic(err) // a built-in profile is wrong: TestBuiltinProfiles
		}
	}
	return ps
}

// reconcilerNeeds and reconcilerForbidden are the document's reconciler profile shape.
var (
	reconcilerNeeds     = []string{"gitea.read", "gitea.pr.comment", "gitea.issue.comment", "gitea.issue.close", "gitea.pr.close"}
	reconcilerForbidden = []string{"gitea.pr.approve", "gitea.pr.merge", "gitea.pr.review", "gitea.pr.create", "gitea.branch.push", "gitea.repo.commit"}
)

// assessReconcilerProfile checks that p has the reconciler shape: it allows the
// narrow set, explicitly forbids the reconciler's forbidden operations, allows
// nothing else, and claims no approve, merge, push or authoring capability.
func assessReconcilerProfile(p *profile) error {
	var problems []string
	for _, op := range reconcilerNeeds {
		if ok, _ := p.allows(op); !ok {
			problems = append(problems, op+" is not allowed")
		}
	}
	for _, op := range reconcilerForbidden {
		if !p.forbidden[op] {
			problems = append(problems, op+" is not in forbidden_operations")
		}
	}
	for _, op := range canonicalOps {
		if p.grants(op.name) && !slices.Contains(reconcilerNeeds, op.name) {
			problems = append(problems, op.name+" is allowed but outside the reconciler set")
		}
	}
	if can(p.CanApprovePRs) || can(p.CanMergePRs) || can(p.CanPushBranches) || can(p.CanAuthorImplPRs) {
		problems = append(problems, "can_approve_prs, can_merge_prs, can_push_branches and can_author_impl_prs must be false")
	}
	if len(problems) > 0 {
		return fmt.Errorf("reconciler profile %q: %s", p.Name, strings.Join(problems, "; "))
	}
	return nil
}

// profileConfig is the set of selectable profiles: the built-ins plus the file's.
type profileConfig struct {
	AllowRuntimeSwitching bool                // gitea_activate_profile may switch profiles
	profiles              map[string]*profile // by profile_name
	names                 []string            // profile names, built-ins first
}

// profileFile is the JSON file named by GITEA_MCP_CONFIG.
type profileFile struct {
	AllowRuntimeSwitching *bool `json:"allow_runtime_switching"`
	Rules                 *struct {
		AllowRuntimeSwitching *bool `json:"allow_runtime_switching"`
	} `json:"rules"`
	Profiles []*profile `json:"profiles"`
}

// loadProfiles reads the profile file at path ("" = built-ins only).
func loadProfiles(path string) (*profileConfig, error) {
	if path == "" {
		return parseProfiles(nil)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("GITEA_MCP_CONFIG: %w", err)
	}
	cfg, err := parseProfiles(data)
	if err != nil {
		return nil, fmt.Errorf("profile config %q: %w", path, err)
	}
	return cfg, nil
}

// parseProfiles returns the built-in profiles plus those of the profile file
// data (nil = none). Unknown fields, trailing data, invalid or duplicate
// profiles, a profile reusing a built-in name, and conflicting
// allow_runtime_switching values are errors.
func parseProfiles(data []byte) (*profileConfig, error) {
	cfg := &profileConfig{profiles: map[string]*profile{}}
	for _, p := range builtinProfiles() {
		cfg.profiles[p.Name] = p
		cfg.names = append(cfg.names, p.Name)
	}
	if data == nil {
		return cfg, nil
	}
	if err := duplicateKey(data); err != nil {
		return nil, err
	}
	var f profileFile
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the top-level object")
	}
	top, rules := f.AllowRuntimeSwitching, (*bool)(nil)
	if f.Rules != nil {
		rules = f.Rules.AllowRuntimeSwitching
	}
	if top != nil && rules != nil && *top != *rules {
		return nil, fmt.Errorf("allow_runtime_switching is %v at the top level but %v under rules", *top, *rules)
	}
	cfg.AllowRuntimeSwitching = top != nil && *top || rules != nil && *rules
	builtins := len(cfg.names)
	for i, p := range f.Profiles {
		switch {
		case p == nil:
			return nil, fmt.Errorf("profiles[%d] is null", i)
		case slices.Contains(cfg.names[:builtins], p.Name):
			return nil, fmt.Errorf("profile %q is built in; give the file's profile another name", p.Name)
		case cfg.profiles[p.Name] != nil:
			return nil, fmt.Errorf("profile %q is defined twice", p.Name)
		}
		if err := p.compile(); err != nil {
			return nil, err
		}
		cfg.profiles[p.Name] = p
		cfg.names = append(cfg.names, p.Name)
	}
	return cfg, nil
}

// duplicateKey refuses a JSON text in which an object gives a key twice, in
// any spelling encoding/json folds together ("forbidden_operations" and
// "Forbidden_Operations" or "forbidden_operation\u017f"): the decoder would
// keep the last one silently, emptying a forbidden list or turning
// switching on. It also refuses a member whose value is null, which the
// decoder reads as the key left out. Malformed JSON is left to the decoder
// to report.
func duplicateKey(data []byte) error {
	type level struct {
		obj, atKey bool
		keys       map[string]string // by foldKey, as first given
		last       string
	}
	var open []*level
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := dec.Token()
		if err != nil {
			return nil
		}
		var top *level
		if len(open) > 0 {
			top = open[len(open)-1]
		}
		if k, isStr := tok.(string); isStr && top != nil && top.atKey {
			f := foldKey(k)
			if first, seen := top.keys[f]; seen {
				return fmt.Errorf("key %q given twice (as %q): one would silently replace the other", k, first)
			}
			top.keys[f], top.last, top.atKey = k, k, false
			continue
		}
		if tok == json.Delim('}') || tok == json.Delim(']') {
			open = open[:len(open)-1]
			continue
		}
		if top != nil && top.obj {
			if tok == nil { // decoded as the key left out: "repositories": null would lift every restriction
				return fmt.Errorf("key %q is null: leave it out or give it a value", top.last)
			}
			top.atKey = true // after this value, a key
		}
		if d, isDelim := tok.(json.Delim); isDelim {
			open = append(open, &level{obj: d == '{', atKey: d == '{', keys: map[string]string{}})
		}
	}
}

// selectProfile returns the profile called name (GITEA_MCP_PROFILE) and the
// token read from the variable its token_source_name names. An empty name
// selects no profile (reads only) with the GITEA_TOKEN value, possibly empty.
// A profile whose variable is empty comes with errUnsetToken. Errors never
// contain a token value.
func selectProfile(cfg *profileConfig, name string, tokenOf func(string) string) (*profile, string, error) {
	if name == "" {
		return nil, tokenOf(defaultToken), nil
	}
	if cfg == nil {
		cfg, _ = parseProfiles(nil) // the built-ins: no error
	}
	p := cfg.profiles[name]
	if p == nil {
		return nil, "", fmt.Errorf("unknown profile %q (GITEA_MCP_PROFILE); known: %s", name, strings.Join(cfg.names, ", "))
	}
	token := tokenOf(p.TokenSourceName)
	if token == "" {
		return p, "", fmt.Errorf("profile %q: %w: environment variable %s (its token_source_name) is empty or unset", name, errUnsetToken, p.TokenSourceName)
	}
	return p, token, nil
}

// switchProfile is selectProfile for gitea_activate_profile: it reaches
// only the file's own profiles, never a built-in one, which would leave the
// file's forbidden operations and repositories behind, nor none (name ""),
// under which every read is allowed, on any repository, with GITEA_TOKEN.
func switchProfile(cfg *profileConfig, name string, tokenOf func(string) string) (*profile, string, error) {
	switch {
	case name == "":
		return nil, "", errors.New("no profile named: switching reaches only the profiles of GITEA_MCP_CONFIG, never none, under which every read would be allowed on any repository, whatever their repositories")
	case slices.ContainsFunc(builtinProfiles(), func(p *profile) bool { return p.Name == name }):
		return nil, "", fmt.Errorf("profile %q is built in: switching reaches only the profiles of GITEA_MCP_CONFIG, whose limits (forbidden operations, repositories) a built-in would leave behind", name)
	}
	return selectProfile(cfg, name, tokenOf)
}

// errUnsetToken is selectProfile's error for a profile whose token variable is
// empty: activation is refused, but the server starts with it (its calls
// then fail with not_configured), as clients start servers before users fill
// in their settings.
var errUnsetToken = errors.New("no token")

// permitted is the one rule of the policy on a canonical operation (or an
// alias) perm, which decide, the listing and find (shows, mayUse),
// eligibility and the task resolver all apply: without a profile only reads
// are allowed; with one, what the profile allows (forbidden wins, unknown
// names are denied).
func permitted(p *profile, perm string) (bool, string) {
	switch {
	case p != nil:
		return p.allows(perm)
	case perm == permRead:
		return true, "reads need no profile"
	}
	return false, "no active profile; " + perm + " needs one (set GITEA_MCP_PROFILE)"
}

// allowsRepo reports whether owner/repo is within p's repositories (case-insensitive globs).
func (p *profile) allowsRepo(owner, repo string) bool {
	if p.repoPats == nil {
		return true
	}
	// An empty name would match a "*" pattern; a name holding "/" matches
	// none, since path.Match's "*" never matches "/" (TestAllowsRepo).
	owner, repo = strings.ToLower(owner), strings.ToLower(repo)
	if owner == "" || repo == "" {
		return false
	}
	for _, pat := range p.repoPats {
		if o, _ := path.Match(pat[0], owner); o {
			if r, _ := path.Match(pat[1], repo); r {
				return true
			}
		}
	}
	return false
}

// fetchedRef returns a path, query or body ref value naming FETCH_HEAD,
// which git resolves wherever Gitea reads a revision (TestFetchedRef), or "".
func fetchedRef(args map[string]any, pathParams map[string]string) string {
	names := func(v string) bool { // in any case, read without allocating
		u := strings.IndexByte(v, '_') // FETCH_HEAD's is the sixth byte
		for i := max(0, u-len("FETCH")); u >= 0 && i+len("FETCH_HEAD") <= len(v); i++ {
			if strings.EqualFold(v[i:i+len("FETCH_HEAD")], "FETCH_HEAD") {
				return true
			}
		}
		return false
	}
	for _, v := range pathParams {
		if names(v) {
			return v
		}
	}
	body, _ := args["body"].(map[string]any)
	for _, m := range []map[string]any{args, body} {
		for k, v := range m {
			switch s, _ := v.(string); k {
			case "sha", "ref", "not", "old_ref_name", "target", "target_commitish", "new_commit_id":
				if names(s) {
					return s
				}
			}
		}
	}
	return ""
}

// shows reports whether profile p (nil: none) may call op with some
// arguments, judged without identity: what tools/list and
// gitea_find_operations show. An operation whose permission follows from its
// body is shown when one of its values' is allowed; one the profile's
// repositories refuse whatever the arguments is not. Every call is still
// decided in full by executor.check.
func (p *profile) shows(op *operation) bool {
	info := opInfo{ID: op.ID, Method: op.Method, Route: op.Route}
	return anyPermitted(p, callPermissions(info)) && (p == nil || p.unreachable(info) == "")
}

// mayUse reports whether profile p (nil: none) allows perm; "" and
// gitea.read always. A perm an argRule gives a call without its field stands
// for every value of that rule (gitea.pr.review: any review verdict;
// gitea.pr.create: editing or closing a pull request).
func (p *profile) mayUse(perm string) bool {
	if perm == "" || perm == permRead {
		return true
	}
	for i, r := range argRules {
		if r.values[""] == perm {
			return anyPermitted(p, argPerms()[i])
		}
	}
	return anyPermitted(p, []string{perm})
}

// anyPermitted reports whether p allows one of perms.
func anyPermitted(p *profile, perms []string) bool {
	return slices.ContainsFunc(perms, func(perm string) bool { ok, _ := permitted(p, perm); return ok })
}

// byID indexes the rows of a table by the operation ids each names, in table
// order, once at first use.
func byID[T any](rows []T, ids func(*T) []string) func() map[string][]*T {
	return sync.OnceValue(func() map[string][]*T {
		m := map[string][]*T{}
		for i := range rows {
			for _, id := range ids(&rows[i]) {
				m[id] = append(m[id], &rows[i])
			}
		}
		return m
	})
}
