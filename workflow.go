package main

// The workflow gates (README, "Workflow tools"): the checks that come
// before a pull request is approved, merged, reconciled or a file written,
// on top of the executor's own: eligibility (not the author, open,
// mergeable), merge (confirm text, unchanged head and base, expected files),
// reconcile (head already in base, unchanged since the proof) and
// write_file's own reads. A gate that cannot read what it needs refuses;
// every refusal is audited. Each request still goes through the executor.

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// writeFile serves gitea_write_file: it reads the file's current SHA when
// none is given (a missing file is created), encodes the text as Gitea wants
// it, and commits through the contents API (gitea.repo.commit).
func writeFile(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	const tool, action = "gitea_write_file", "write_file"
	loc := map[string]any{"owner": args["owner"], "repo": args["repo"], "filepath": args["path"]}
	sha, _ := args["sha"].(string)
	refuse := func(gates []gate) {
		s.refuseGates(ctx, tool, action, "repoUpdateFile", with(loc, "body", map[string]any{"branch": args["branch"]}), gates)
	}
	for _, k := range []string{"path", "branch"} { // what every answer shows of them must be what was written
		if v, _ := args[k].(string); hasHidden(v) {
			msg := fmt.Sprintf("%s %q holds hidden characters (zero-width, bidirectional or tag characters), which every answer removes: what was written would not be what is reported; nothing was written", k, v)
			refuse([]gate{{"no hidden characters", false, msg}})
			return errorResult("invalid_arguments", msg)
		}
	}
	if sha == "" {
		var cur struct {
			File *struct {
				SHA  string `json:"sha"`
				Type string `json:"type"`
			} `json:"file_contents"`
		}
		env := s.step(ctx, tool, "", "repoGetContentsExt", with(loc, "ref", args["branch"]), &cur)
		switch {
		case env.Error != nil && env.Error.Status == http.StatusNotFound: // a new file
		case env.Error != nil:
			refuse(stopped("read the file", env))
			return envelopeResult(env)
		case cur.File == nil || cur.File.Type != "file" || cur.File.SHA == "":
			msg := fmt.Sprintf("%q on branch %q is not a file; nothing was written", args["path"], args["branch"])
			refuse([]gate{{"a file", false, msg}})
			return errorResult("invalid_arguments", msg)
		default:
			sha = cur.File.SHA
		}
	}
	text, _ := args["text"].(string)
	body := with(nil, "content", base64.StdEncoding.EncodeToString([]byte(text)), "message", args["message"], "branch", args["branch"], "sha", sha)
	opID := "repoCreateFile"
	if sha != "" {
		opID = "repoUpdateFile"
	}
	var written struct {
		Content struct {
			Path string `json:"path"`
			SHA  string `json:"sha"`
		} `json:"content"`
		Commit struct {
			SHA string `json:"sha"`
		} `json:"commit"`
	}
	env := s.step(ctx, tool, action, opID, with(loc, "body", body), &written)
	if env.Error == nil {
		env.Files = nil // it reported on Gitea's answer, which this summary replaces
		env.Data = map[string]any{"path": written.Content.Path, "branch": args["branch"], "file_sha": written.Content.SHA,
			"commit_sha": written.Commit.SHA, "created": opID == "repoCreateFile"}
	}
	return envelopeResult(env)
}

// hasHidden reports whether the result pipeline would remove characters of s.
func hasHidden(s string) bool {
	_, n := stripHidden(s)
	return n > 0
}

// pullRequest is what the workflow reads of a pull request.
type pullRequest struct {
	State     string  `json:"state"`
	Merged    bool    `json:"merged"`
	Mergeable *bool   `json:"mergeable"`
	User      account `json:"user"`
	Head      struct {
		SHA string `json:"sha"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"` // the base branch's head
	} `json:"base"`
	MergeCommitSHA *string `json:"merge_commit_sha"`
}

// gate is one check of a workflow, passed or blocked.
type gate struct {
	Gate   string `json:"gate"`
	Passed bool   `json:"passed"`
	Detail string `json:"detail,omitempty"`
}

// eligibility checks whether the caller may approve or merge a pull request
// now: a verified identity, the executor's decision on that very approval or
// merge at the live head (check: the profile's permission,
// authenticated_username, repositories and every live check), not the
// author, the pull request open and, for a merge, Gitea's own mergeable. It
// reads the pull request live and returns it with the gates.
func (s *server) eligibility(ctx context.Context, tool, action string, args map[string]any) (*pullRequest, []gate, *envelope) {
	var pr pullRequest
	if env := s.step(ctx, tool, "", "repoGetPullRequest", target(args), &pr); env.Error != nil {
		return nil, nil, env
	}
	perm, opID, body := permApprove, "repoCreatePullReview", map[string]any{"event": "APPROVED", "commit_id": pr.Head.SHA}
	if action == "merge" {
		perm, opID, body = permMerge, "repoMergePullRequest", s.mergeBody(args, pr.Head.SHA)
	}
	me := s.exec.whoami(ctx)
	login := me.Login
	d := decision{Reason: fmt.Sprintf("operation %q is not in the OpenAPI document, or it is disabled (DISABLED_TOOLS)", opID)}
	if op, ok := s.cat.operation(opID); ok {
		if env := s.exec.run1(ctx, &request{tool: tool, op: op, args: with(target(args), "body", body), judge: &d}); env.Error != nil {
			d.Reason = env.Error.Message // the request itself cannot be made
		}
	}
	self, selfWhy := selfActionDenied(perm, me, pr.User)
	mergeable := pr.Mergeable != nil && *pr.Mergeable
	gates := []gate{
		{"identity verified", login != "", "login " + login},
		{"policy allows " + perm, d.Allowed, d.Reason},
		{"not the author", !self, firstNonEmpty(selfWhy, "author "+pr.User.Login)},
		{"pull request open", pr.State == "open" && !pr.Merged, "state " + pr.State},
	}
	if action == "merge" {
		seen := "unknown"
		if pr.Mergeable != nil {
			seen = strconv.FormatBool(*pr.Mergeable)
		}
		detail := "mergeable " + seen
		if !mergeable {
			detail += ": unknown or false is a refusal (Gitea answers false while it checks for conflicts, for a conflict and for a draft)"
		}
		gates = append(gates, gate{"Gitea reports it mergeable", mergeable, detail})
	}
	return &pr, gates, nil
}

// refuseGates audits a workflow mutation (operation opID with args) that the
// workflow's own gates refused before sending it, naming the gates that
// failed.
func (s *server) refuseGates(ctx context.Context, tool, action, opID string, args map[string]any, gates []gate) {
	var names, details []string
	for _, g := range gates {
		if !g.Passed {
			names, details = append(names, fmt.Sprintf("%q", g.Gate)), append(details, g.Gate+": "+g.Detail)
		}
	}
	op, _ := s.cat.operation(opID)
	s.exec.refuse(ctx, refusal{tool: tool, action: action, op: op, args: args, method: "POST", rule: "gate " + strings.Join(names, ", "),
		reason: strings.Join(details, "; ")})
}

// stopped is the gate of a workflow step that could not run: its error.
func stopped(step string, env *envelope) []gate {
	return []gate{{step, false, env.Error.Kind + ": " + env.Error.Message}}
}

// firstNonEmpty returns the first of its arguments that is not empty.
func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// passed reports whether every gate passed.
func passed(gates []gate) bool {
	return !slices.ContainsFunc(gates, func(g gate) bool { return !g.Passed })
}

func checkEligibility(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	action, _ := args["action"].(string)
	pr, gates, env := s.eligibility(ctx, "gitea_check_pr_eligibility", action, args)
	if env != nil {
		return envelopeResult(env)
	}
	out := map[string]any{"action": action, "eligible": passed(gates), "gates": gates, "head_sha": pr.Head.SHA, "base": pr.Base.Ref,
		"author": pr.User.Login, "state": pr.State, "mergeable": pr.Mergeable,
		"pin": map[string]string{"approve": "on every route an approval names head_sha as commit_id", "merge": "on every route a merge names head_sha as head_commit_id (gitea_merge_pr: head_sha)"}[action]}
	if !passed(gates) {
		out["hint"] = hint(s, action, gates) // what would make it possible, only when it is not
	}
	return jsonResult(out, false)
}

// gateHints says what makes each gate of the pull request's own state pass,
// by gate; a gate not named here is the identity's or the profile's (hint).
var gateHints = map[string]string{
	"pull request open": "the pull request is closed or merged: there is nothing to do",
	"Gitea reports it mergeable": "Gitea answers mergeable false for a few seconds after the base branch or the head moves, while it checks for conflicts: " +
		"check again with gitea_check_pr_eligibility shortly; if it stays false, the author resolves the conflict or marks the draft (WIP) ready",
	"head is still head_sha":                           "the head moved since head_sha: review the new head (gitea_check_pr_eligibility gives it) and pass it as head_sha",
	"base is still base":                               "the pull request now targets another base: check it again (gitea_check_pr_eligibility gives it) and pass that base",
	"changed files are exactly expected_changed_files": "the pull request changes other files than expected_changed_files: review its files again",
}

// hint says what would make an action possible on this server, for the gates
// that did not pass: what the pull request's state needs (gateHints), or the
// role that may take the action.
func hint(s *server, action string, gates []gate) string {
	var hints []string
	role := false
	prof, _ := s.exec.active(context.Background())
	for _, g := range gates {
		if g.Passed {
			continue
		}
		if h, ok := gateHints[g.Gate]; ok {
			hints = append(hints, h)
		} else if perm, ok := strings.CutPrefix(g.Gate, "policy allows "); !ok || !prof.mayUse(perm) {
			role = true // else the policy refused for the pull request's state, its detail says why
		}
	}
	name := profileName(prof)
	if name == "" {
		name = "no profile"
	}
	switch {
	case !role:
	case action == "merge":
		hints = append(hints, "merging needs a merger profile (gitea-merger) whose identity did not author the pull request; this server runs as "+name)
	case action == "approve":
		hints = append(hints, "approving needs a reviewer profile (gitea-reviewer) whose identity did not author the pull request; this server runs as "+name)
	}
	return strings.Join(hints, "; ")
}

// maxFilePages bounds the pages of changed files the merge gate reads; a list
// that does not end within them is not compared.
const maxFilePages = 100

// mergeBody is the body gitea_merge_pr sends, and eligibility judges: the
// style asked, the head pinned, and the head branch kept unless the profile
// may delete it (then the repository's default applies).
func (s *server) mergeBody(args map[string]any, head string) map[string]any {
	method, _ := args["merge_method"].(string)
	body := map[string]any{"do": firstNonEmpty(method, "merge"), "head_commit_id": head}
	if prof, _ := s.exec.active(context.Background()); !prof.mayUse("gitea.branch.delete") {
		body["delete_branch_after_merge"] = false
	}
	return body
}

func mergePR(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	const tool, action = "gitea_merge_pr", "merge_pr"
	method, _ := args["merge_method"].(string)
	headSHA, _ := args["head_sha"].(string)
	merge := with(target(args), "body", s.mergeBody(args, headSHA))
	refuse := func(gates []gate) { s.refuseGates(ctx, tool, action, "repoMergePullRequest", merge, gates) }
	index, _ := args["index"].(json.Number)
	if confirm, _ := args["confirm"].(string); confirm != "MERGE PR "+index.String() {
		gates := []gate{{"confirm", false, fmt.Sprintf("confirm must be exactly %q; nothing was sent", "MERGE PR "+index.String())}}
		refuse(gates)
		return jsonResult(map[string]any{"merged": false, "gates": gates}, true)
	}
	gates := []gate{{"confirm", true, ""}}
	pr, elig, env := s.eligibility(ctx, tool, "merge", args)
	if env != nil {
		refuse(stopped("read the pull request", env))
		return envelopeResult(env)
	}
	gates = append(gates, elig...)
	gates = append(gates, gate{"head is still head_sha", pr.Head.SHA == headSHA, "live head " + pr.Head.SHA})
	if base, ok := args["base"].(string); ok { // a pull request retargeted since the check merges elsewhere
		gates = append(gates, gate{"base is still base", pr.Base.Ref == base, "live base " + pr.Base.Ref})
	}
	if files, ok := args["expected_changed_files"].([]any); ok && passed(gates) {
		var got, want []string
		// A name the result pipeline changed is not Gitea's: it cannot be compared.
		altered, whole := false, false
		for page := 1; page <= maxFilePages && !whole; page++ { // every page: Gitea caps how many one answer holds
			var changed []struct {
				Filename string `json:"filename"`
				Previous string `json:"previous_filename"` // a rename's old name, which it deletes
			}
			env := s.step(ctx, tool, "", "repoGetPullRequestFiles", with(target(args), "limit", 50, "page", page), &changed)
			if env.Error != nil {
				refuse(stopped("read the changed files", env))
				return envelopeResult(env)
			}
			altered = altered || env.HiddenRemoved > 0 || len(env.SecretsMasked) > 0
			for _, f := range changed {
				got = append(got, f.Filename)
				if f.Previous != "" {
					got = append(got, f.Previous)
				}
				altered = altered || strings.Contains(f.Filename+f.Previous, redactedMarker)
			}
			whole = len(changed) == 0
		}
		for _, f := range files {
			want = append(want, fmt.Sprint(f))
		}
		slices.Sort(got)
		slices.Sort(want)
		detail := "changed: " + strings.Join(got, ", ")
		if altered {
			detail += " (as shown: hidden characters or secrets were removed from Gitea's file names, which cannot be compared)"
		}
		// Gitea lists a file whose type changed as two of one name, and lists
		// as many files as git counts: the last are left out.
		dup := len(slices.Compact(slices.Clone(got))) != len(got)
		if dup {
			detail += " (a name listed twice, as Gitea lists a file whose type changed, and leaves as many files out at the end of the list: the rest is unknown)"
		}
		if !whole {
			detail += fmt.Sprintf(" (the first %d pages, which did not reach the end of the list: the rest is unknown)", maxFilePages)
		}
		gates = append(gates, gate{"changed files are exactly expected_changed_files", whole && slices.Equal(got, want) && !altered && !dup, detail})
	}
	if !passed(gates) {
		refuse(gates)
		return jsonResult(map[string]any{"merged": false, "gates": gates, "hint": hint(s, "merge", gates)}, true)
	}
	env = s.step(ctx, tool, action, "repoMergePullRequest", merge, nil)
	if env.Error != nil {
		gates = append(gates, gate{"merge", false, env.Error.Kind + ": " + env.Error.Message})
		return jsonResult(map[string]any{"merged": false, "gates": gates, "merge_result": env}, true)
	}
	gates = append(gates, gate{"merge", true, "merged with " + firstNonEmpty(method, "merge")})
	var after pullRequest
	s.step(ctx, tool, "", "repoGetPullRequest", target(args), &after)
	return jsonResult(map[string]any{"merged": true, "gates": gates, "merge_commit": after.MergeCommitSHA}, false)
}

// objectID matches a commit's full object id (SHA-1 or SHA-256), in the
// lower case Gitea answers with.
var objectID = regexp.MustCompile(`^(?:[0-9a-f]{40}|[0-9a-f]{64})$`)

func reconcile(ctx context.Context, s *server, _ *session, args map[string]any) map[string]any {
	const tool, action = "gitea_reconcile_already_landed_pr", "reconcile_already_landed_pr"
	closing := with(target(args), "body", map[string]any{"state": "closed"})
	refuse := func(gates []gate) map[string]any {
		s.refuseGates(ctx, tool, action, "repoEditPullRequest", closing, gates)
		return jsonResult(map[string]any{"closed": false, "gates": gates, "note": "nothing was changed"}, true)
	}
	stop := func(step string, env *envelope) map[string]any {
		s.refuseGates(ctx, tool, action, "repoEditPullRequest", closing, stopped(step, env))
		return envelopeResult(env)
	}
	prof, _ := s.exec.active(ctx)
	if prof == nil {
		return refuse([]gate{{"reconciler profile", false, "no active profile; use a server started with GITEA_MCP_PROFILE=prgs-reconciler"}})
	}
	if err := assessReconcilerProfile(prof); err != nil {
		return refuse([]gate{{"reconciler profile", false, err.Error()}})
	}
	gates := []gate{{"reconciler profile", true, prof.Name}}
	var pr pullRequest
	if env := s.step(ctx, tool, "", "repoGetPullRequest", target(args), &pr); env.Error != nil {
		return stop("read the pull request", env)
	}
	gates = append(gates, gate{"pull request open", pr.State == "open" && !pr.Merged, "state " + pr.State})
	if !passed(gates) {
		return refuse(gates)
	}
	var branch struct {
		Commit struct {
			ID string `json:"id"`
		} `json:"commit"`
	}
	if env := s.step(ctx, tool, "", "repoGetBranch", with(repoOf(args), "branch", pr.Base.Ref), &branch); env.Error != nil {
		return stop("read the base branch", env)
	}
	baseSHA := branch.Commit.ID
	// The proof counts the head's commits outside the base, both named by
	// full object ids: Gitea reads sha as an object id, and git reads not's
	// full hex as one before any ref. A comparison (base...head) would not
	// do: Gitea reads each side as a branch or a tag first, and a branch
	// named after either commit would decide it.
	var outside []any
	env := s.step(ctx, tool, "", "repoGetAllCommits", with(repoOf(args), "sha", pr.Head.SHA, "not", baseSHA, "limit", 1,
		"stat", false, "files", false, "verification", false), &outside)
	if env.Error != nil {
		return stop("list the head's commits outside the base", env)
	}
	// The branch was read by its name as the pipeline delivered it, hidden
	// characters removed: its head must be the pull request's own base.
	landed := env.Pagination != nil && env.Pagination.TotalCount != nil && *env.Pagination.TotalCount == 0 &&
		objectID.MatchString(baseSHA) && objectID.MatchString(pr.Head.SHA) && baseSHA == pr.Base.SHA
	proof := fmt.Sprintf("head %s is an ancestor of %s at %s: no commit of the head is outside the base", pr.Head.SHA, pr.Base.Ref, baseSHA)
	switch {
	case baseSHA != pr.Base.SHA:
		proof = fmt.Sprintf("the branch read as %q is at %s, the pull request's base at %q: not the same branch, or it moved", pr.Base.Ref, baseSHA, pr.Base.SHA)
	case !landed:
		proof = fmt.Sprintf("head %s has commits outside %s at %s, or Gitea did not say (or named a commit by other than its full id)", pr.Head.SHA, pr.Base.Ref, baseSHA)
	}
	gates = append(gates, gate{"head already in base", landed, proof})
	var again pullRequest
	if env := s.step(ctx, tool, "", "repoGetPullRequest", target(args), &again); env.Error != nil {
		return stop("read the pull request again", env)
	}
	// The base too: a proof about one branch says nothing of another.
	gates = append(gates, gate{"head unchanged since the proof", again.Head.SHA == pr.Head.SHA && again.State == "open" && again.Base.Ref == pr.Base.Ref && again.Base.SHA == baseSHA,
		"live head " + again.Head.SHA + " into " + again.Base.Ref + " at " + again.Base.SHA})
	if !passed(gates) {
		return refuse(gates)
	}
	comment := fmt.Sprintf("Closing as already landed: the head commit %s is contained in %s, recorded at %s.", pr.Head.SHA, pr.Base.Ref, baseSHA)
	if env := s.step(ctx, tool, action, "issueCreateComment", with(target(args), "body", map[string]any{"body": comment}), nil); env.Error != nil {
		gates = append(gates, gate{"proof comment", false, env.Error.Kind + ": " + env.Error.Message})
		return refuse(gates)
	}
	gates = append(gates, gate{"proof comment", true, comment})
	if env := s.step(ctx, tool, action, "repoEditPullRequest", closing, nil); env.Error != nil {
		gates = append(gates, gate{"close", false, env.Error.Kind + ": " + env.Error.Message})
		return jsonResult(map[string]any{"closed": false, "gates": gates}, true)
	}
	gates = append(gates, gate{"close", true, ""})
	// A push between the last read and the close is seen only now: Gitea
	// closes without a pin, and nothing undoes the close for us.
	var closed pullRequest
	env = s.step(ctx, tool, "", "repoGetPullRequest", target(args), &closed)
	if live := "live head " + closed.Head.SHA; env.Error != nil || closed.Head.SHA != pr.Head.SHA {
		if env.Error != nil {
			live = "not read again: " + env.Error.Kind
		}
		gates = append(gates, gate{"head unchanged through the close", false, live + "; reopen the pull request unless its head is in " + pr.Base.Ref})
		return jsonResult(map[string]any{"closed": true, "gates": gates}, true)
	}
	gates = append(gates, gate{"head unchanged through the close", true, ""})
	return jsonResult(map[string]any{"closed": true, "gates": gates, "head_sha": pr.Head.SHA, "base": pr.Base.Ref, "base_sha": baseSHA}, false)
}
