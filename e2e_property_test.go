package main

// The attacker's view, automated: under restricted profiles, calls drawn from
// every mutating operation of the embedded OpenAPI document, with bodies
// mutated the way an attacker would (case and Unicode folding variants of
// keys, decoys, force_merge, delete_branch_after_merge, state and event
// values), through all three doors; afterwards the observable state of the
// fixture repositories (and of the acting user) may have changed only in ways
// the profile allows. Seeded: the suite runs seed 1 so that it is the same
// every time; -prop.seed=N (or GITEA_PROP_SEED=N) runs or replays another, 0
// draws a new one, logged; -prop.calls bounds the calls per profile.

import (
	"encoding/json"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	propSeed  = flag.Uint64("prop.seed", 1, "TestE2EPolicyProperty: seed (GITEA_PROP_SEED overrides it; 0: a new one from the clock)")
	propCalls = flag.Int("prop.calls", 0, "TestE2EPolicyProperty: calls per profile (0: one per mutating operation)")
)

// propRepo is one fixture repository of the property test and the numbers of
// what it holds.
type propRepo struct {
	full                      string
	bobPR, carolPR            int // pull requests by bob and by carol
	bobIssue, carolIssue      int
	comment, label, milestone int64
	release, review           int64
	mainSHA                   string
}

// newPropRepo creates a private repository of alice's with bob and carol as
// writers, two pull requests (by bob and by carol), two issues, a comment, a
// label, a milestone, a release, a review and a topic.
func newPropRepo(t *testing.T, g *giteaInstance, name string) *propRepo {
	t.Helper()
	pg := *g
	pg.Repo = "alice/" + name
	r := &propRepo{full: pg.Repo}
	s := &giteaSetup{g: &pg}
	base := "/repos/" + pg.Repo
	s.call("alice", "POST", "/user/repos", map[string]any{"name": name, "auto_init": true, "default_branch": "main", "private": true}, http.StatusCreated, nil)
	t.Cleanup(func() { g.api("alice", "DELETE", base, nil) })
	for _, login := range []string{"bob", "carol"} {
		s.call("alice", "PUT", base+"/collaborators/"+login, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	}
	s.commit("bob", "main", "feature", "Feature by bob", map[string][]byte{"feature.txt": []byte("bob\n")})
	r.bobPR = s.pull("bob", "feature", "Pull request by bob")
	s.commit("carol", "main", "carol-change", "Change by carol", map[string][]byte{"carol.txt": []byte("carol\n")})
	r.carolPR = s.pull("carol", "carol-change", "Pull request by carol")
	var n struct {
		Number int
		ID     int64
	}
	s.call("bob", "POST", base+"/issues", map[string]string{"title": "Issue by bob"}, http.StatusCreated, &n)
	r.bobIssue = n.Number
	s.call("carol", "POST", base+"/issues", map[string]string{"title": "Issue by carol"}, http.StatusCreated, &n)
	r.carolIssue = n.Number
	s.call("alice", "POST", fmt.Sprintf("%s/issues/%d/comments", base, r.bobIssue), map[string]string{"body": "Noted."}, http.StatusCreated, &n)
	r.comment = n.ID
	s.call("alice", "POST", base+"/labels", map[string]string{"name": "bug", "color": "#ee0701"}, http.StatusCreated, &n)
	r.label = n.ID
	s.call("alice", "POST", base+"/milestones", map[string]string{"title": "m1"}, http.StatusCreated, &n)
	r.milestone = n.ID
	s.call("alice", "POST", base+"/releases", map[string]string{"tag_name": "v1", "target_commitish": "main", "name": "v1"}, http.StatusCreated, &n)
	r.release = n.ID
	s.call("alice", "POST", fmt.Sprintf("%s/pulls/%d/reviews", base, r.bobPR), map[string]string{"event": "COMMENT", "body": "A first look."}, http.StatusOK, &n)
	r.review = n.ID
	s.call("alice", "PUT", base+"/topics", map[string][]string{"topics": {"prop"}}, http.StatusNoContent, nil)
	var head struct{ Commit struct{ ID string } }
	s.call("alice", "GET", base+"/branches/main", nil, http.StatusOK, &head)
	r.mainSHA = head.Commit.ID
	if s.err != nil {
		t.Fatal(s.err)
	}
	return r
}

// propGen draws tool calls with values from the fixtures.
type propGen struct {
	rng   *rand.Rand
	repos []*propRepo
}

// choose returns one of vs.
func choose[T any](g *propGen, vs ...T) T { return vs[g.rng.IntN(len(vs))] }

// str is a value for a string parameter or property called name.
func (g *propGen) str(name string) string {
	r := g.repos[0]
	switch strings.ToLower(name) {
	case "owner", "template_owner":
		return choose(g, "alice", "alice", "alice", "alice", "alice", "alice", "alice", "alice", "carol", "bob")
	case "org", "username", "user", "collaborator", "assignee", "new_owner", "sender", "reviewers", "assignees", "poster":
		return choose(g, "alice", "carol", "bob")
	case "repo", "template_repo", "repo_name":
		return strings.TrimPrefix(choose(g, g.repos[0].full, g.repos[0].full, g.repos[1].full), "alice/")
	case "state":
		return choose(g, "closed", "open")
	case "event":
		return choose(g, "APPROVED", "REQUEST_CHANGES", "COMMENT", "PENDING", "approved")
	case "do", "style", "merge_style", "default_merge_style":
		return choose(g, "merge", "rebase", "squash", "manually-merged", "fast-forward-only")
	case "base", "head", "branch", "new_branch", "old_branch_name", "new_branch_name", "ref", "target", "target_commitish", "old_ref_name", "branch_name", "name", "rule_name", "default_branch":
		return choose(g, "main", "feature", "carol-change", "prop-new")
	case "sha", "head_commit_id", "commit_id", "basehead":
		return r.mainSHA
	case "tag", "tag_name":
		return choose(g, "v1", "v2")
	case "filepath", "path", "new_path", "from_path":
		return choose(g, "README.md", "feature.txt", "prop.txt")
	case "content", "attachment", "avatar", "image":
		return "cHJvcAo=" // "prop\n"
	case "color":
		return "#00aa00"
	case "due_date", "deadline", "due_on":
		return "2030-01-01T00:00:00Z"
	case "topic", "topics":
		return choose(g, "prop", "other")
	}
	return "prop text"
}

// num is a value for an integer parameter or property called name.
func (g *propGen) num(name string) int64 {
	r := g.repos[0]
	if n := strings.ToLower(name); n == "index" || n == "issue" || n == "number" || strings.HasSuffix(n, "_index") {
		return int64(choose(g, r.bobPR, r.carolPR, r.bobIssue, r.carolIssue))
	}
	return choose(g, r.comment, r.label, r.milestone, r.release, r.review, 1, 2)
}

// value draws a value for schema s of a property called name; a sparse
// object has only its required properties.
func (g *propGen) value(s *Schema, name string, depth int, sparse bool) any {
	if s == nil || depth > 3 {
		return g.str(name)
	}
	if len(s.Enum) > 0 {
		return choose(g, s.Enum...)
	}
	switch s.Type {
	case "object":
		m := map[string]any{}
		keys := make([]string, 0, len(s.Properties))
		for k := range s.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if slices.Contains(s.Required, k) || !sparse && g.rng.IntN(3) == 0 {
				m[k] = g.value(s.Properties[k], k, depth+1, sparse)
			}
		}
		return m
	case "array":
		n := g.rng.IntN(3)
		out := []any{}
		for range n {
			out = append(out, g.value(s.Items, strings.TrimSuffix(name, "s"), depth+1, sparse))
		}
		return out
	case "boolean":
		return g.rng.IntN(2) == 0
	case "integer", "number":
		return g.num(name)
	}
	return g.str(name)
}

// variant spells key as Gitea would still match it: another case, or with a
// Unicode simple folding (ſ for s, the Kelvin sign for k).
func (g *propGen) variant(key string) string {
	vs := []string{strings.ToUpper(key[:1]) + key[1:], strings.ToUpper(key)}
	if strings.Contains(key, "s") {
		vs = append(vs, strings.Replace(key, "s", "ſ", 1))
	}
	if strings.Contains(key, "k") {
		vs = append(vs, strings.Replace(key, "k", "\u212a", 1))
	}
	return choose(g, vs...)
}

// mutate changes a body the way an attacker would, with up to n changes.
func (g *propGen) mutate(m map[string]any, n int) {
	for range n {
		switch g.rng.IntN(8) {
		case 0: // a documented key spelled another way
			if len(m) > 0 {
				keys := make([]string, 0, len(m))
				for k := range m {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				k := choose(g, keys...)
				v := m[k]
				delete(m, k)
				m[g.variant(k)] = v
			}
		case 1:
			m[choose(g, "force_merge", g.variant("force_merge"))] = true
		case 2:
			m[choose(g, "delete_branch_after_merge", g.variant("delete_branch_after_merge"))] = true
		case 3: // the rule field only under another spelling
			delete(m, "state")
			m[choose(g, "state", g.variant("state"))] = choose(g, "closed", "open")
		case 4:
			delete(m, "event")
			m[choose(g, "event", g.variant("event"))] = choose(g, "APPROVED", "REQUEST_CHANGES", "PENDING")
		case 5: // a decoy: Gitea reads the encoded keys in order, the last one wins (ſ sorts after s)
			m["state"], m[g.variant("state")] = "open", "closed"
		case 6:
			m["event"], m[g.variant("event")] = "COMMENT", "APPROVED"
		case 7:
			m["do"], m[g.variant("do")] = choose(g, "merge", "manually-merged"), choose(g, "merge", "squash")
		}
	}
}

// propCall is one drawn call.
type propCall struct {
	door, tool string
	args       map[string]any
}

// draw makes the call of op through door (0 generated tool, 1
// gitea_call_operation, 2 gitea_api_request); a focus draw always mutates
// the body.
func (g *propGen) draw(op *operation, door int, focus bool) (propCall, error) {
	schema, err := op.inputSchema()
	if err != nil {
		return propCall{}, err
	}
	args := map[string]any{}
	path := op.Route
	for _, p := range op.params {
		ps := schema.Properties[p.Name]
		switch p.In {
		case "path":
			var v any = g.str(p.Name)
			if p.Type == "integer" {
				v = g.num(p.Name)
			}
			args[p.Name] = v
			path = strings.ReplaceAll(path, "{"+p.Name+"}", url.PathEscape(fmt.Sprint(v)))
		case "body":
			v := g.value(ps, "body", 0, focus)
			if m, ok := v.(map[string]any); ok && focus {
				g.mutate(m, 1+g.rng.IntN(3))
			} else if ok && g.rng.IntN(4) > 0 {
				g.mutate(m, g.rng.IntN(3))
			}
			args["body"] = v
		case "formData":
			args[p.Name] = "cHJvcAo="
		case "query":
			if p.Required || g.rng.IntN(4) == 0 {
				args[p.Name] = g.value(ps, p.Name, 1, false)
			}
		}
	}
	switch door {
	case 0:
		return propCall{door: "generated", tool: op.ID, args: args}, nil
	case 1:
		return propCall{door: "call", tool: "gitea_call_operation", args: map[string]any{"operation": op.ID, "arguments": args}}, nil
	}
	raw := map[string]any{"method": op.Method, "path": path}
	if b, ok := args["body"]; ok {
		raw["body"] = b
	}
	return propCall{door: "raw", tool: "gitea_api_request", args: raw}, nil
}

// propFocus are the operations whose body fields decide the permission (state,
// event, do, force_merge, branch targets): each is drawn propFocusDraws more
// times, its body always mutated.
var propFocus = []string{"repoCreatePullReview", "repoSubmitPullReview", "repoEditPullRequest", "issueEditIssue", "repoMergePullRequest",
	"repoUpdatePullRequest", "repoCreatePullRequest", "repoDeleteBranch", "repoUpdateFile", "repoCreateFile", "repoChangeFiles",
	"repoDeleteFile", "repoApplyDiffPatch", "repoUpdateBranch", "issueCreateComment", "repoEdit", "issueEditIssueDeadline"}

const propFocusDraws = 8

// propState is what can be observed of the fixtures and of the acting user:
// one canonical JSON value per key ("issue alice/r#3", "branch alice/r main").
type propState map[string]string

// propSnapshot reads the state of repos (as alice, their owner) and of the
// acting user login.
func propSnapshot(t *testing.T, g *giteaInstance, login string, repos []*propRepo) propState {
	t.Helper()
	st := propState{}
	fetch := func(who, path string) (int, []map[string]any) {
		var all []map[string]any
		for page := 1; page <= 20; page++ {
			sep := "?"
			if strings.Contains(path, "?") {
				sep = "&"
			}
			status, _, data, err := g.api(who, "GET", fmt.Sprintf("%s%slimit=50&page=%d", path, sep, page), nil)
			if err != nil {
				t.Fatal(err)
			}
			if status != http.StatusOK {
				return status, nil
			}
			var list []map[string]any
			if json.Unmarshal(data, &list) != nil { // one object, not a list
				var one map[string]any
				json.Unmarshal(data, &one)
				return status, []map[string]any{one}
			}
			all = append(all, list...)
			if len(list) < 50 {
				break
			}
		}
		return http.StatusOK, all
	}
	put := func(key string, v any) {
		b, _ := json.Marshal(v)
		st[key] = string(b)
	}
	fieldsOf := func(m map[string]any, fields ...string) map[string]any {
		out := map[string]any{}
		for _, f := range fields {
			out[f] = giteaField(m, f)
		}
		return out
	}
	logins := func(v any) []string {
		var out []string
		list, _ := v.([]any)
		for _, e := range list {
			if m, ok := e.(map[string]any); ok {
				out = append(out, fmt.Sprint(m["login"], m["name"]))
			}
		}
		sort.Strings(out)
		return out
	}
	for _, r := range repos {
		base := "/repos/" + r.full
		status, repo := fetch("alice", base)
		if status != http.StatusOK {
			put("repo "+r.full, "missing")
			continue
		}
		for _, volatile := range []string{"updated_at", "open_issues_count", "open_pr_counter", "release_counter", "size", "stars_count",
			"watchers_count", "forks_count", "language", "permissions", "mirror_updated", "languages_url", "branch_count"} {
			delete(repo[0], volatile)
		}
		put("repo "+r.full, repo[0])
		for _, kind := range []string{"issues", "pulls"} {
			_, issues := fetch("alice", base+"/issues?state=all&type="+kind)
			for _, is := range issues {
				v := fieldsOf(is, "title", "body", "state", "milestone.title", "is_locked", "due_date", "ref", "user.login")
				v["labels"], v["assignees"], v["pull"] = logins(is["labels"]), logins(is["assignees"]), kind == "pulls"
				put(fmt.Sprintf("issue %s#%v", r.full, is["number"]), v)
			}
		}
		_, pulls := fetch("alice", base+"/pulls?state=all")
		for _, pr := range pulls {
			v := fieldsOf(pr, "merged", "head.sha", "head.ref", "base.ref", "user.login", "draft", "allow_maintainer_edit")
			v["requested_reviewers"] = logins(pr["requested_reviewers"])
			put(fmt.Sprintf("pull %s#%v", r.full, pr["number"]), v)
			_, reviews := fetch("alice", fmt.Sprintf("%s/pulls/%v/reviews", base, pr["number"]))
			for _, rv := range reviews {
				put(fmt.Sprintf("review %s#%v/%v", r.full, pr["number"], rv["id"]), fieldsOf(rv, "user.login", "state", "dismissed", "body", "official"))
			}
		}
		for _, list := range []struct{ kind, path, id string }{
			{"comment", "/issues/comments", "id"}, {"branch", "/branches", "name"}, {"tag", "/tags", "name"},
			{"label", "/labels", "id"}, {"milestone", "/milestones?state=all", "id"}, {"release", "/releases", "id"},
			{"collaborator", "/collaborators", "login"}, {"hook", "/hooks", "id"}, {"key", "/keys", "id"},
			{"protection", "/branch_protections", "rule_name"}, {"tag_protection", "/tag_protections", "id"},
		} {
			_, items := fetch("alice", base+list.path)
			for _, it := range items {
				for _, volatile := range []string{"updated_at", "created_at", "updated", "created", "last_status", "html_url"} {
					delete(it, volatile)
				}
				if c, ok := it["commit"].(map[string]any); ok { // a branch or tag: its commit
					it = map[string]any{"commit": firstNonEmpty(fmt.Sprint(c["id"]), fmt.Sprint(c["sha"])), "protected": it["protected"]}
				}
				put(fmt.Sprintf("%s %s %v", list.kind, r.full, it[list.id]), it)
			}
		}
	}
	for _, path := range []string{"/user", "/user/settings", "/user/repos", "/user/keys", "/user/gpg_keys", "/user/emails", "/user/following",
		"/user/starred", "/user/subscriptions", "/user/orgs", "/user/hooks", "/user/blocks", "/user/applications/oauth2"} {
		_, items := fetch(login, path)
		var names []string
		for _, it := range items {
			for _, volatile := range []string{"last_login", "followers_count", "following_count", "starred_repos_count"} {
				delete(it, volatile)
			}
			b, _ := json.Marshal(it)
			if name, ok := it["full_name"].(string); ok { // a repository: which, not its counters
				b = []byte(name)
			}
			names = append(names, string(b))
		}
		sort.Strings(names)
		put("user "+login+" "+path, names)
	}
	return st
}

// propNeeds says which canonical operations allow the change of key from
// before to after ("" = absent), as requirements that must each hold, each
// met by any one of its operations; a violation that no profile may commit
// (an approval by the pull request's author) comes back as an error.
func propNeeds(key, before, after string, st propState) ([][]string, error) {
	kind, _, _ := strings.Cut(key, " ")
	var b, a map[string]any
	json.Unmarshal([]byte(before), &b)
	json.Unmarshal([]byte(after), &a)
	changed := func(f string) bool { return fmt.Sprint(b[f]) != fmt.Sprint(a[f]) }
	switch {
	case kind == "issue":
		pull := a["pull"] == true || b["pull"] == true
		write := map[bool]string{false: "gitea.issue.edit", true: "gitea.pr.create"}[pull]
		switch {
		case before == "":
			return [][]string{{map[bool]string{false: "gitea.issue.create", true: "gitea.pr.create"}[pull]}}, nil
		case after == "":
			return [][]string{{"gitea.issue.delete"}}, nil
		}
		var needs [][]string
		if changed("state") {
			switch {
			case a["state"] == "closed" && pull:
				needs = append(needs, []string{"gitea.pr.close", permMerge})
			case a["state"] == "closed":
				needs = append(needs, []string{"gitea.issue.close"})
			default:
				needs = append(needs, []string{write})
			}
		}
		if changed("labels") {
			needs = append(needs, []string{"gitea.issue.label"})
		}
		for _, f := range []string{"title", "body", "milestone.title", "is_locked", "due_date", "ref", "assignees", "user.login"} {
			if changed(f) {
				needs = append(needs, []string{write})
				break
			}
		}
		return needs, nil
	case kind == "pull":
		var needs [][]string
		switch {
		case before == "":
			return [][]string{{"gitea.pr.create"}}, nil
		case after == "":
			return [][]string{{"gitea.repo.admin"}}, nil
		}
		if changed("merged") {
			needs = append(needs, []string{permMerge})
		}
		if changed("head.sha") || changed("head.ref") {
			needs = append(needs, []string{"gitea.branch.push", "gitea.repo.commit"})
		}
		if changed("base.ref") || changed("requested_reviewers") || changed("draft") || changed("allow_maintainer_edit") || changed("user.login") {
			needs = append(needs, []string{"gitea.pr.create"})
		}
		return needs, nil
	case kind == "review":
		if after == "" {
			return [][]string{{"gitea.pr.review"}}, nil
		}
		if before != "" && (changed("dismissed") || changed("user.login") || changed("body") || b["state"] != "PENDING" && changed("state")) {
			return [][]string{{"gitea.repo.admin"}}, nil
		}
		if before != "" && !changed("state") {
			return nil, nil
		}
		pr := strings.TrimPrefix(key, "review ")
		pr = pr[:strings.LastIndex(pr, "/")]
		var pull map[string]any
		json.Unmarshal([]byte(st["pull "+pr]), &pull)
		if a["state"] == "APPROVED" && a["user.login"] == pull["user.login"] {
			return nil, fmt.Errorf("%s approved their own pull request", a["user.login"])
		}
		perm := map[any]string{"APPROVED": permApprove, "REQUEST_CHANGES": "gitea.pr.request_changes", "COMMENT": "gitea.pr.comment"}[a["state"]]
		return [][]string{{firstNonEmpty(perm, "gitea.pr.review")}}, nil
	case kind == "comment":
		return [][]string{{"gitea.issue.comment"}}, nil
	case kind == "branch" && before == "":
		return [][]string{{"gitea.branch.create"}}, nil
	case kind == "branch" && after == "":
		return [][]string{{"gitea.branch.delete"}}, nil
	case kind == "branch" && strings.HasSuffix(key, " main"): // the default branch: landing code without review
		return [][]string{{"gitea.branch.push", "gitea.repo.commit", permMerge}, {permMerge}}, nil
	case kind == "branch":
		return [][]string{{"gitea.branch.push", "gitea.repo.commit", permMerge}}, nil
	case kind == "tag" || kind == "release":
		return [][]string{{"gitea.release.write"}}, nil
	case kind == "label" || kind == "milestone":
		return [][]string{{"gitea.issue.manage"}}, nil
	case kind == "hook":
		return [][]string{{"gitea.webhook.write"}}, nil
	case kind == "user" && strings.HasSuffix(key, " /user/repos"):
		return [][]string{{"gitea.repo.create", "gitea.repo.admin"}}, nil
	case kind == "user" && (strings.HasSuffix(key, "/keys") || strings.HasSuffix(key, "/oauth2")):
		return [][]string{{"gitea.token.create", "gitea.user.settings"}}, nil
	case kind == "user" && strings.HasSuffix(key, " /user/orgs"):
		return [][]string{{"gitea.org.admin"}}, nil
	case kind == "user":
		return [][]string{{"gitea.user.settings"}}, nil
	}
	return [][]string{{"gitea.repo.admin"}}, nil // settings, collaborators, keys, protections, the repository itself
}

// propDiff shows what changed between two values of a key: the fields of an
// object that differ, or both values.
func propDiff(before, after string) string {
	var b, a map[string]any
	if json.Unmarshal([]byte(before), &b) != nil || json.Unmarshal([]byte(after), &a) != nil || b == nil || a == nil {
		return firstNonEmpty(before, "(none)") + " -> " + firstNonEmpty(after, "(none)")
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(a)) {
		if x, y := fmt.Sprint(b[k]), fmt.Sprint(a[k]); x != y {
			out = append(out, fmt.Sprintf("%s %s -> %s", k, x, y))
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k+" removed")
		}
	}
	return strings.Join(out, ", ")
}

// propJudge lists the changes from before to after that p does not allow.
func propJudge(p *profile, before, after propState) []string {
	keys := map[string]bool{}
	for k := range before {
		keys[k] = true
	}
	for k := range after {
		keys[k] = true
	}
	var bad []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		if before[k] == after[k] {
			continue
		}
		what := k + ": " + propDiff(before[k], after[k])
		if fields := strings.Fields(k); len(fields) > 1 && fields[0] != "user" {
			full, _, _ := strings.Cut(fields[1], "#")
			owner, repo, _ := strings.Cut(full, "/")
			if !p.allowsRepo(owner, repo) {
				bad = append(bad, what+": outside the profile's repositories")
				continue
			}
		}
		needs, err := propNeeds(k, before[k], after[k], after)
		if err != nil {
			bad = append(bad, what+": "+err.Error())
		}
		for _, anyOf := range needs {
			if !slices.ContainsFunc(anyOf, func(perm string) bool { ok, _ := p.allows(perm); return ok }) {
				bad = append(bad, fmt.Sprintf("%s: needs %s", what, strings.Join(anyOf, " or ")))
			}
		}
	}
	return bad
}

func TestE2EPolicyProperty(t *testing.T) {
	g := needGitea(t)
	seed := *propSeed
	if v := os.Getenv("GITEA_PROP_SEED"); v != "" {
		seed, _ = strconv.ParseUint(v, 10, 64)
	}
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d: replay with go test -run TestE2EPolicyProperty -prop.seed=%d", seed, seed)
	tag := strconv.FormatUint(seed%1_000_000, 36)
	repos := []*propRepo{newPropRepo(t, g, "prop-"+tag+"-a"), newPropRepo(t, g, "prop-"+tag+"-b")}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"prop-reader","token_source_name":"GITEA_TOKEN","audit_label":"prop",
		"allowed_operations":["gitea.read"],"forbidden_operations":[],"repositories":["`+repos[0].full+`"]}]}`), 0o600)
	cfg, err := loadProfiles(config)
	if err != nil {
		t.Fatal(err)
	}
	var mutating []*operation
	for _, op := range docOperations(t) {
		if op.Method != http.MethodGet {
			mutating = append(mutating, op)
		}
	}
	var focus []*operation // the operations whose body fields the policy reads, drawn again
	for _, op := range mutating {
		if slices.Contains(propFocus, op.ID) {
			focus = append(focus, op)
		}
	}
	for pi, name := range []string{"gitea-reviewer", "gitea-issue-manager", "gitea-author", "prop-reader"} {
		t.Run(name, func(t *testing.T) {
			gen := &propGen{rng: rand.New(rand.NewPCG(seed, uint64(pi))), repos: repos} // one stream per profile: a subtest replays alone
			prof := cfg.profiles[name]
			audit := filepath.Join(t.TempDir(), "audit.log")
			state := propSnapshot(t, g, "carol", repos)
			c := e2eClient(t, g, "carol", "GITEA_MCP_PROFILE="+name, "GITEA_MCP_CONFIG="+config, "GITEA_AUDIT_LOG="+audit, "GITEA_MCP_TOOLS=all")
			order := slices.Clone(mutating)
			gen.rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
			all := len(order)
			for range propFocusDraws * len(focus) {
				order = append(order, choose(gen, focus...))
			}
			n := len(order)
			if *propCalls > 0 {
				n = min(n, *propCalls)
			}
			// judge compares the state now with the last one seen, so that a
			// change undone by a later call is still seen, and blames what.
			judge := func(what string) {
				now := propSnapshot(t, g, "carol", repos)
				for _, b := range propJudge(prof, state, now) {
					t.Errorf("%s: %s\n\tafter %s; replay with -prop.seed=%d", name, b, what, seed)
				}
				state = now
			}
			sent, outcomes := 0, map[string]int{}
			var unjudged []string // calls that reached Gitea and failed there
			for i, op := range order[:n] {
				call, err := gen.draw(op, (i+pi)%3, i >= all)
				if err != nil {
					t.Fatal(err)
				}
				res, _ := c.callTool(call.tool, call.args)
				kind, _ := get(res, "error.kind").(string)
				outcomes[call.door+" "+firstNonEmpty(kind, "ok")]++
				if status := res["status"]; status != nil { // the request reached Gitea
					sent++
					b, _ := json.Marshal(call.args)
					what := fmt.Sprintf("call %d, %s %s %s -> status %v", i, call.door, call.tool, b, status)
					if kind == "" {
						judge(what)
					} else {
						unjudged = append(unjudged, what)
					}
				}
			}
			c.close()
			judge("one of the calls Gitea refused: " + strings.Join(unjudged, "; "))
			t.Logf("%d calls, %d reached Gitea; outcomes by door: %v", n, sent, outcomes)
			data, err := os.ReadFile(audit)
			if err != nil {
				t.Fatal(err)
			}
			head, err := verifyAudit(strings.NewReader(string(data)), nil, nil)
			if err != nil || head.Lines != n+sent {
				t.Errorf("audit log: %d lines for %d calls, %d sent (%v): every call is a mutation attempt, refused or not, and writes one line, and one more once Gitea answers", head.Lines, n, sent, err)
			}
		})
	}
}
