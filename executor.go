package main

// The executor (README, "Execution profiles" and "Results"): the one door
// to Gitea. Every tool's request, one operation with its arguments whatever
// the door, goes through run: validate the arguments and encode the path
// (resolve, encode.go), decide it under the active profile (check, with the live reads
// self-approval, self-merge, head pins and effects need), write the audit
// line of a mutation, send (client.go), and hand the answer to the result
// pipeline. It never sends a request it was told to deny, never follows a
// redirect, never retries a write, and never puts a token into an answer or
// an error.

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
)

// request is what a tool asks of Gitea, whatever its door: an operation with
// its generated tool's arguments (gitea_api_request's method and path are
// matched to their operation in encode.go, rawCall).
type request struct {
	tool     string
	action   string // the workflow action audited, e.g. close_pr
	hideURLs bool   // workflow tools: Gitea's absolute URLs made relative
	full     bool   // Gitea's answer whole, not the compact view (compact.go)
	op       *operation
	args     map[string]any // by parameter name
	judge    *decision      // set: only decide (gitea_check_pr_eligibility), nothing sent or audited
}

// executor is the single place every Gitea request goes through: it resolves
// the operation, checks it, encodes the path, sends, and runs the result
// pipeline.
type executor struct {
	cfg    *config
	cat    *catalog
	client *http.Client
	routes func() *routeTable // built on first use

	profiles *profileConfig
	audit    *auditLog
	srcDir   string // the checkout the server runs from, for infraCheck; "" if none

	mu    sync.Mutex
	prof  *profile // active profile; nil: reads only
	shape bool     // prof has the reconciler's shape (assessReconcilerProfile)
	self  *caller  // the active profile's identity
}

// caller is the identity a request acts as: a token, how it was obtained
// (mode "token", "sudo" or "oauth"), the user every request acts for in sudo
// mode, and the account Gitea verified for it, cached.
type caller struct {
	token string
	mode  string
	sudo  string

	mu sync.Mutex
	me account // verified effective account; zero until verified
}

// account is a Gitea user as the policy compares them: by id, which a rename
// does not change, and by login where Gitea gave no id.
type account struct {
	Login    string `json:"login"`
	ID       int64  `json:"id"`
	FullName string `json:"full_name"` // Gitea writes it into commit messages (sign-offs, trailers)
}

// written returns the texts of a's name that Gitea may write into a commit
// message: its full name as given, and as Gitea's gitSafeName writes it
// (newlines, < and > removed, trimmed), which may join a reference.
func (a account) written() []any {
	return []any{a.FullName, strings.TrimSpace(strings.NewReplacer("\n", "", "<", "", ">", "").Replace(a.FullName))}
}

// sameAccount reports whether a and b are the same Gitea account: by id (a
// rename keeps it), or by login (case-insensitive) where Gitea gave no id;
// an unknown account is nobody's.
func sameAccount(a, b account) bool {
	if a.ID != 0 && b.ID != 0 {
		return a.ID == b.ID
	}
	return a.Login != "" && strings.EqualFold(a.Login, b.Login)
}

// callerKey carries a per-request caller (OAuth) in a request's context.
type callerKey struct{}

// active returns the active profile and the identity a request acts as: its
// own caller (OAuth) or the profile's.
func (x *executor) active(ctx context.Context) (*profile, *caller) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if c, ok := ctx.Value(callerKey{}).(*caller); ok {
		return x.prof, c
	}
	return x.prof, x.self
}

// activate makes p the active profile, acting with a fresh caller for token.
func (x *executor) activate(p *profile, token string) {
	c := &caller{token: token, mode: "token", sudo: x.cfg.sudo}
	if c.sudo != "" {
		c.mode = "sudo"
	}
	shape := p != nil && assessReconcilerProfile(p) == nil
	x.mu.Lock()
	x.prof, x.self, x.shape = p, c, shape
	x.mu.Unlock()
}

// setCatalog gives the executor the operations it resolves; the route table is
// built on first use.
func (x *executor) setCatalog(cat *catalog) {
	x.cat = cat
	x.routes = sync.OnceValue(func() *routeTable {
		specs := make([]routeSpec, len(cat.ops))
		for i, op := range cat.ops {
			specs[i] = op.routeSpec()
		}
		return newRouteTable(specs)
	})
}

// sent is one HTTP exchange with Gitea, as the result pipeline sees it.
type sent struct {
	method, path string // path relative to /api/v1, as encoded
	query        url.Values
	status       int
	header       http.Header
	body         []byte
	class        mediaClass // how body was bounded and is delivered, from its Content-Type
	retries      int        // GETs sent again after a 429
}

// do runs one tool request and returns the tools/call result.
func (x *executor) do(ctx context.Context, r *request) map[string]any {
	return envelopeResult(x.run(ctx, r))
}

// fail is the envelope of a request refused before anything was sent.
func fail(kind, msg string) *envelope {
	return &envelope{Error: &failure{Kind: kind, Message: msg}}
}

// run resolves, checks, encodes, sends and builds the result envelope.
func (x *executor) run(ctx context.Context, r *request) *envelope {
	return x.complete(ctx, r.tool, r.op, x.run1(ctx, r))
}

// stamp names the tool and the caller, as known (never asking Gitea), in
// env, and redacts the caller's token and the server's secrets from its
// error.
func (x *executor) stamp(ctx context.Context, tool string, env *envelope) {
	if env.Request == nil {
		env.Request = &requestInfo{}
	}
	env.Request.Tool = tool
	_, c := x.active(ctx)
	if env.Identity == nil {
		env.Identity = c.identity()
	}
	if env.Error != nil { // an argument's error may quote it, a secret the caller gave included
		env.Error.Message = x.redactor(c).redact(env.Error.Message)
	}
}

// redactor redacts caller c's token, the server's secrets and more.
func (x *executor) redactor(c *caller, more ...string) *redactor {
	return newRedactor(append(append([]string{c.token}, x.cfg.secrets...), more...)...)
}

// complete stamps env, names the operation (if known) in it, and logs the
// outcome to the client.
func (x *executor) complete(ctx context.Context, tool string, op *operation, env *envelope) *envelope {
	x.stamp(ctx, tool, env)
	if op != nil && env.Request.Operation == "" {
		env.Request.Operation, env.Request.Method = op.ID, op.Method
	}
	if sess, ok := ctx.Value(sessionKey{}).(*session); ok {
		level, what := "info", fmt.Sprintf("status %d", env.Status)
		if env.Error != nil {
			level, what = "warning", env.Error.Kind
		}
		sess.log(ctx, level, tool+": "+what)
	}
	return env
}

// refused is the envelope of a request whose arguments were refused (err).
func refused(err error) *envelope {
	var ke *kindError
	if errors.As(err, &ke) {
		return fail(ke.kind, err.Error())
	}
	return fail("invalid_request", err.Error())
}

func (x *executor) run1(ctx context.Context, r *request) *envelope {
	op := r.op
	p, pathParams, query, body, err := x.resolve(r)
	if err != nil {
		x.refuse(ctx, refusal{tool: r.tool, action: r.action, op: op, args: r.args, rule: "argument validation", reason: err.Error()})
		return refused(err)
	}
	if x.cfg.url == nil {
		return fail("not_configured", "GITEA_URL is not set: set it to the base URL of the Gitea instance")
	}
	prof, c := x.active(ctx)
	ctx = context.WithValue(ctx, callerKey{}, c) // one identity for every request of this call
	if c.token == "" {
		name := defaultToken
		if prof != nil {
			name = prof.TokenSourceName
		}
		return fail("not_configured", name+" is not set: set it to a Gitea access token")
	}
	red := x.redactor(c, bodySecrets(op.ID, body)...)
	args := r.args
	if _, named := args["body"]; !named && schemaKind(body) == "object" {
		// A body parameter of another name (repository, content, ...): the
		// policy reads every body as "body".
		args = maps.Clone(args)
		args["body"] = body
	}
	d := x.check(ctx, prof, r.tool, op, args, pathParams)
	// A reason may quote what Gitea holds (a referenced name, a branch): it
	// reaches the model and the audit log through the pipeline too.
	sc := &scrubber{red: red, mask: x.cfg.secretMode != modeOff}
	d.Action, d.Reason = r.action, x.message(sc, d.Reason, maxReason)
	if r.judge != nil {
		*r.judge = d
		return &envelope{}
	}
	// A mutation's line is written before it is sent, and one that cannot be
	// written stops it; a second line records Gitea's answer.
	if d.Allowed && d.RequiredPermission != permRead {
		if err := x.audited(ctx, auditEntryFor(d, prof, op.Method, p, 0)); err != nil {
			d.Allowed, d.Infra, d.Reason = false, true, x.message(sc, auditStop(err), maxReason)
		}
	}
	if !d.Allowed {
		x.audited(ctx, auditEntryFor(d, prof, op.Method, p, 0))
		return &envelope{Identity: c.identity(), Request: &requestInfo{Method: op.Method, Path: p, Operation: op.ID}, UntrustedContent: untrustedNotice,
			HiddenRemoved: sc.hidden, SecretsMasked: sc.rules, Error: &failure{Kind: d.kind(), Message: d.Reason, PermissionReport: &d}}
	}
	ex, err := x.send(ctx, op, p, query, body)
	if d.RequiredPermission != permRead {
		e := auditEntryFor(d, prof, op.Method, p, ex.status)
		e.Decision = "answered"
		x.audited(ctx, e)
	}
	if err != nil {
		return x.failure(ctx, ex, err, red)
	}
	view := x.compact(op, ex, r.full)
	env := x.result(ctx, op, ex, red, r.hideURLs || view != "") // a compact view's html_url is relative too
	if env.Error == nil {
		env.View = view
	}
	return env
}

// check takes the policy decision for one call before anything is sent: the
// profile's permissions and repositories, a verified identity for every
// mutation, the runtime isolation check, and the checks that need Gitea's
// live state (who authored the pull request being approved or merged, and
// whether the call pins its head, pinDenied; whether an issue edited, closed
// or deleted through the issue API is a pull request; whose a review, public
// key or comment being deleted or edited is (ownerReads); whether a review
// request undoes a review (reviewUndone); whether a label being deleted is the
// path's (foundIn); under repositories, the organization of a team whose
// repository a /teams route names, since Gitea finds it there), then
// liveEffects.
func (x *executor) check(ctx context.Context, prof *profile, tool string, op *operation, args map[string]any, params map[string]string) decision {
	info := opInfo{ID: op.ID, Method: op.Method, Route: op.Route}
	var me account
	if perm, _ := resolvePermission(info, args); perm != permRead {
		err := infraCheck(x.cfg.profileFile, x.srcDir)
		if err == nil && x.audit.failed() != nil {
			err = errors.New(auditStop(x.audit.failed()))
		}
		if err != nil {
			d := decide(prof, "", tool, info, args, params)
			d.Allowed, d.Reason, d.Infra = false, err.Error(), true
			return d
		}
		if ok, _ := permitted(prof, perm); ok { // nothing is sent for a call denied anyway
			me = x.whoami(ctx)
		}
	}
	d := decide(prof, me.Login, tool, info, args, params)
	if d.Allowed && prof != nil && prof.repoPats != nil && strings.HasPrefix(op.Route, "/teams/{id}/repos/{org}/") {
		// Gitea finds the repository in the team's organization, whatever {org} names.
		var team struct {
			Org struct {
				Login string `json:"username"`
			} `json:"organization"`
		}
		if !x.live(ctx, "orgGetTeam", map[string]string{"id": params["id"]}, &team) || team.Org.Login == "" {
			d.Allowed, d.Reason = false, fmt.Sprintf("cannot read from Gitea the organization of team %s, where Gitea finds the repository %q; refusing", params["id"], params["repo"])
		} else if !prof.allowsRepo(team.Org.Login, params["repo"]) {
			d.Allowed, d.Reason = false, fmt.Sprintf("team %s is of %q, where Gitea finds the repository whatever the path names: %q is outside the repositories of %s",
				params["id"], team.Org.Login, team.Org.Login+"/"+params["repo"], prof.Name)
		}
	}
	if !d.Allowed || d.RequiredPermission == permRead {
		return d
	}
	if read, ok := foundIn[op.ID]; ok && !x.live(ctx, read, params, nil) {
		d.Allowed, d.Reason = false, fmt.Sprintf("Gitea does not show label %s as one of %q (%s): it deletes a label by its id alone, also where "+
			"another repository's or organization's id is that of the path's; nothing was sent", params["id"], cmp.Or(params["org"], params["owner"]+"/"+params["repo"]), read)
		return d
	}
	var pr livePR
	pinned := d.RequiredPermission == permApprove || d.RequiredPermission == permMerge
	if pinned || op.ID == "repoUpdatePullRequest" {
		if !x.live(ctx, "repoGetPullRequest", params, &pr) {
			d.Allowed, d.Reason = false, "cannot read the pull request (its author and head) from Gitea; refusing"
			return d
		}
	}
	switch {
	case pinned:
		if denied, why := selfActionDenied(d.RequiredPermission, me, pr.User); denied {
			d.Allowed, d.Reason = false, why
		} else if why := pinDenied(op.ID, args, pr.Head.SHA); why != "" {
			d.Allowed, d.Reason = false, why
		} else if why := x.shownHead(ctx, op.ID, params, pr.Head.SHA); why != "" {
			d.Allowed, d.Reason = false, why
		}
	case ownerReads[op.ID].read != "":
		o := ownerReads[op.ID]
		var obj struct {
			User account `json:"user"`
		}
		if !x.live(ctx, o.read, params, &obj) {
			d.Allowed, d.Reason = false, "cannot read the "+o.what+" from Gitea to tell whose it is; refusing"
		} else if !sameAccount(me, obj.User) {
			d.RequiredPermission = o.perm
			if d.Allowed, d.Reason = permitted(prof, d.RequiredPermission); !d.Allowed {
				d.Reason = fmt.Sprintf("the %s is %q's, not yours: %s; %s", o.what, obj.User.Login, o.why, d.Reason)
			}
		}
		if d.Allowed && op.ID == "repoDeletePullReview" {
			d = x.restoreDenied(ctx, prof, params, obj.User, d)
		}
	case op.ID == "repoCreatePullReviewRequests" || op.ID == "repoDeletePullReviewRequests":
		body, _ := args["body"].(map[string]any)
		if undo, ok := x.reviewUndone(ctx, op.ID, params, body); !ok {
			d.Allowed, d.Reason = false, "cannot read the pull request's reviews from Gitea to tell whether the request undoes one; refusing"
		} else if undo != "" {
			d.RequiredPermission = "gitea.repo.admin"
			if d.Allowed, d.Reason = permitted(prof, d.RequiredPermission); !d.Allowed {
				d.Reason = fmt.Sprintf("%s; %s; or let them review", undo, d.Reason)
			}
		}
	case x.cfg.oauth != nil && (op.ID == "userUpdateOAuth2Application" || op.ID == "userDeleteOAuth2Application"):
		// Gitea sends every user who granted the server's application to its
		// redirect URIs without asking, and an edit answers with a new secret.
		var app struct {
			ClientID string `json:"client_id"`
		}
		if !x.live(ctx, "userGetOAuth2Application", params, &app) || app.ClientID == "" {
			d.Allowed, d.Reason = false, "cannot read from Gitea whether the application is the server's own OAuth2 application; refusing"
		} else if app.ClientID == x.cfg.oauth.clientID {
			d.Allowed, d.Reason = false, "this is the server's own OAuth2 application (GITEA_OAUTH_CLIENT_ID), through which every user signs in: changing or deleting it is the operator's, in Gitea"
		}
	case op.ID == "issueEditIssue" || op.ID == "issueDelete" || d.RequiredPermission == "gitea.issue.edit" && strings.Contains(op.Route, "/issues/{index}"):
		// An issue number may be a pull request's: editing one through the
		// issue API (its fields, deadline, lock, pin, ...) needs what editing
		// the pull request needs, closing it (and with another field,
		// editing it too) what closing it needs; deleting it erases its
		// reviews, which is repository administration.
		var issue struct {
			PullRequest any `json:"pull_request"`
		}
		if !x.live(ctx, "issueGetIssue", params, &issue) {
			d.Allowed, d.Reason = false, "cannot read the issue to tell whether it is a pull request; refusing to write to it"
		} else if issue.PullRequest != nil {
			closing := d.RequiredPermission == "gitea.issue.close"
			switch {
			case op.ID == "issueDelete":
				d.RequiredPermission = "gitea.repo.admin"
			case closing:
				d.RequiredPermission = "gitea.pr.close"
			default:
				d.RequiredPermission = "gitea.pr.create"
			}
			if d.Allowed, d.Reason = permitted(prof, d.RequiredPermission); d.Allowed && closing && editsBesideClose(args) {
				d.RequiredPermission = "gitea.pr.create"
				d.Allowed, d.Reason = permitted(prof, d.RequiredPermission)
			}
			if !d.Allowed { // the caller named an issue: say why a pull request's permission decides
				d.Reason = issuePRReason(params["index"], d.Reason)
			}
		}
		if body, _ := args["body"].(map[string]any); d.Allowed && d.RequiredPermission == "gitea.issue.edit" && (op.ID == "issueCreateIssueBlocking" || op.ID == "issueRemoveIssueBlocking") {
			// A block is written into the issue the body names (Gitea's
			// target, which must be writable), which may be a pull request:
			// its dependencies hold back its merge.
			owner, _ := body["owner"].(string)
			repo, _ := body["repo"].(string)
			named := map[string]string{"owner": owner, "repo": repo, "index": scalar(body["index"])}
			if !x.live(ctx, "issueGetIssue", named, &issue) {
				d.Allowed, d.Reason = false, "cannot read the issue the body names to tell whether it is a pull request; refusing to write its dependencies"
			} else if issue.PullRequest != nil {
				d.RequiredPermission = "gitea.pr.create"
				if d.Allowed, d.Reason = permitted(prof, d.RequiredPermission); !d.Allowed {
					d.Reason = fmt.Sprintf("%s writes the block into %s/%s#%s, a pull request, whose dependencies hold back its merge; %s", op.ID, owner, repo, named["index"], d.Reason)
				}
			}
		}
	}
	if d.Allowed {
		if perm, why := x.liveEffects(ctx, prof, op, args, params, &pr); why != "" {
			d.Allowed, d.Reason = false, why
			d.RequiredPermission = cmp.Or(perm, d.RequiredPermission) // "" for a repository out of reach
		}
	}
	return d
}

// restoreDenied judges the deletion of reviewer's review of params (d, so
// far allowed) by the approval it makes count again (restoredApproval): that
// approves, at the commit the approval was given, so it needs what an
// approval needs (gitea.pr.approve, and that commit the live head).
func (x *executor) restoreDenied(ctx context.Context, prof *profile, params map[string]string, reviewer account, d decision) decision {
	at, ok := x.restoredApproval(ctx, params, reviewer)
	if !ok {
		d.Allowed, d.Reason = false, "cannot read the pull request's reviews from Gitea to tell whether deleting this one makes an earlier approval count again; refusing"
		return d
	}
	if at == "" {
		return d
	}
	undo := fmt.Sprintf("deleting this official review makes Gitea count %q's earlier approval, of %s, again (it marks their latest remaining review official)", reviewer.Login, at)
	var pr livePR
	d.RequiredPermission = permApprove
	if d.Allowed, d.Reason = permitted(prof, permApprove); !d.Allowed {
		d.Reason = fmt.Sprintf("%s: that approves; %s", undo, d.Reason)
	} else if !x.live(ctx, "repoGetPullRequest", params, &pr) || pr.Head.SHA == "" {
		d.Allowed, d.Reason = false, "cannot read the pull request's head from Gitea; refusing"
	} else if at != pr.Head.SHA {
		d.Allowed, d.Reason = false, fmt.Sprintf("%s, not of the pull request's head %s: that approves a head it was not given at; approve the head with repoCreatePullReview (event APPROVED, commit_id) instead; nothing was sent", undo, pr.Head.SHA)
	}
	return d
}

// ownerReads maps a write that reaches another's object to the read that
// tells whose it is, and what writing another's needs, and why: a review
// deleted by a site administrator (undone as dismissing does), a public key
// (DELETE /user/keys/{id} takes any for one, and the key behind a deploy key
// the caller added, which names no user), a comment edited or deleted.
var ownerReads = map[string]ownerRead{
	"repoDeletePullReview": {"repoGetPullReview", "review", "gitea.repo.admin", "deleting it undoes it as dismissing does"},
	"userCurrentDeleteKey": {"userCurrentGetKey", "key", "gitea.admin.user", "deleting another user's key (or a deploy key's) is user administration"},
	"issueEditComment":     comments, "issueDeleteComment": comments, "issueEditCommentDeprecated": comments, "issueDeleteCommentDeprecated": comments,
	"issueCreateIssueCommentAttachment": comments, "issueEditIssueCommentAttachment": comments, "issueDeleteIssueCommentAttachment": comments,
}

type ownerRead struct{ read, what, perm, why string }

// comments: any writer of the repository edits or deletes another's comment
// (a review's included), and a repository administrator what it attaches.
var comments = ownerRead{"issueGetComment", "comment", "gitea.issue.edit", "changing another's words, or what they attached, in their name is moderating the thread"}

// foundIn maps a deletion to the read that finds its object, named by id, in
// the path's repository or organization: Gitea's DeleteLabel
// (models/issues/label.go) takes the label by its id alone and deletes it
// where its organization's id is the path's repository's, or its
// repository's the path's organization's.
var foundIn = map[string]string{"issueDeleteLabel": "issueGetLabel", "orgDeleteLabel": "orgGetLabel"}

// issuePRReason is the reason of a refusal to write through the issue API to
// number index, which Gitea says is a pull request's: why the pull request's
// permission decides, then why it is not granted.
func issuePRReason(index, why string) string {
	return fmt.Sprintf("#%s is a pull request, and the issue API writes to it as to a pull request: %s", index, why)
}

// livePR is what the policy reads of a pull request: its author and head.
type livePR struct {
	User  account `json:"user"`
	State string  `json:"state"`
	Title string  `json:"title"`
	Body  string  `json:"body"`
	Head  struct {
		SHA  string `json:"sha"`
		Ref  string `json:"ref"`
		Repo *struct {
			FullName      string `json:"full_name"`
			DefaultBranch string `json:"default_branch"`
		} `json:"repo"`
	} `json:"head"`
	Base struct {
		Ref string `json:"ref"`
		SHA string `json:"sha"` // the base branch's tip
	} `json:"base"`
}

// bodyField returns a request body field from args: from args["body"] when that
// is an object, else from args itself. A field given in both places, or a value
// that is neither a string nor null, makes ok false.
func bodyField(args map[string]any, name string) (value string, ok bool) {
	v, found := args[name]
	if body, isObj := args["body"].(map[string]any); isObj {
		if bv, inBody := body[name]; inBody {
			if found {
				return "", false // given twice: ambiguous
			}
			v = bv
		}
	}
	switch v := v.(type) {
	case nil:
		return "", true
	case string:
		return v, true
	}
	return "", false
}

// whoami returns the effective account of the request's caller (in sudo
// mode the sudo user), verified through Gitea once and cached; a zero account
// when Gitea cannot tell.
func (x *executor) whoami(ctx context.Context) account {
	_, c := x.active(ctx)
	c.mu.Lock()
	me := c.me
	c.mu.Unlock()
	if me.Login != "" {
		return me
	}
	if !x.live(ctx, "userGetCurrent", nil, &me) || me.Login == "" {
		return account{} // still unknown: asked again next time
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.me = me
	return me
}

// marksMerged returns why moving branch ("" none) of full onto tip's history
// (a commit or ref of full; "" unknown) is refused, its tip becoming tip
// where moved (non-nil: the parent full forks, "" none): where full detects
// manual merges (detects, or read live), Gitea checks the open pull requests
// the pushed branch bases or heads and marks merged by the pusher, closing
// it, each whose head (refs/pull/N/head) its base then holds
// (services/pull/check.go manuallyMerged), as do: manually-merged does,
// which needs gitea.pr.merge and gitea.pr.close; so does the parent, where
// it detects them, for the pull requests the moved branch heads there.
func (x *executor) marksMerged(ctx context.Context, p *profile, full, branch, tip string, moved *string, detects *bool) (string, string) {
	owner, name, _ := strings.Cut(full, "/")
	repo, perm := map[string]string{"owner": owner, "repo": name}, permMerge
	if p.grants(perm) {
		perm = "gitea.pr.close"
	}
	r := struct {
		Detects *bool `json:"autodetect_manual_merge"`
	}{detects}
	switch {
	case branch == "":
		return "", ""
	case r.Detects == nil && (!x.live(ctx, "repoGet", repo, &r) || r.Detects == nil):
		return perm, fmt.Sprintf("cannot read from Gitea whether %q detects manual merges, which marks merged the pull requests %q bases or heads once their base holds their head; refusing", full, branch)
	case !*r.Detects && moved != nil: // a fork that does not detect them may head pull requests of a parent that does
		return x.parentMarksMerged(ctx, p, repo, *moved, branch, tip, perm)
	case !*r.Detects:
		return "", ""
	}
	pulls, ok := allPages[struct { // number, base.ref, head.ref and head.repo.full_name
		Number     int64
		Base, Head struct {
			Ref  string
			Repo *struct {
				FullName string `json:"full_name"`
			}
		}
	}](ctx, x, "repoListPullRequests", repo, url.Values{"state": {"open"}})
	if !ok {
		return perm, fmt.Sprintf("cannot read from Gitea which open pull requests of %q the branch %q bases or heads, which Gitea marks merged once their base holds their head; refusing", full, branch)
	}
	for _, pr := range pulls {
		head, base := fmt.Sprintf("refs/pull/%d/head", pr.Number), tip // based on it: does it then hold the head?
		if pr.Base.Ref != branch {
			if moved == nil || pr.Head.Ref != branch || pr.Head.Repo == nil || !strings.EqualFold(pr.Head.Repo.FullName, full) {
				continue
			}
			head, base = tip, "refs/heads/"+pr.Base.Ref // headed by it: does its base hold the new head?
		}
		outside, ok := []pushed{}, base != ""
		if ok { // the head's commits the base would not hold; unread, it may hold them all
			outside, ok = x.listCommits(ctx, "repoGetAllCommits", repo, "sha", head, "not", base, "limit", "1")
		}
		if !ok || len(outside) == 0 {
			_, why := permitted(p, perm)
			return perm, fmt.Sprintf("%q detects manual merges (autodetect_manual_merge), and after this write to %q the base %q of the pull request %s!%d would hold its head (or Gitea did not say): "+
				"Gitea marks it merged by you and closes it, as do: manually-merged does; %s", full, branch, pr.Base.Ref, full, pr.Number, why)
		}
	}
	if moved != nil {
		return x.parentMarksMerged(ctx, p, repo, *moved, branch, tip, perm)
	}
	return "", ""
}

// rebasedOnto returns, for an update of a pull request by rebase
// (repoUpdatePullRequest style=rebase), what marksMerged reads as its head
// branch moved to the base's tip (the parent named: the base's repository
// where head, the head's, is another), nil otherwise: git rebase drops the
// head's commits whose change the base already holds (services/pull/
// merge_prepare.go rebaseTrackingOnToBase) and, where it holds every one,
// leaves the head at the base's tip, which Gitea does not say beforehand.
func rebasedOnto(opID string, args map[string]any, params map[string]string, head string) *string {
	if opID != "repoUpdatePullRequest" || args["style"] != "rebase" {
		return nil
	}
	if base := params["owner"] + "/" + params["repo"]; !strings.EqualFold(base, head) {
		return &base
	}
	return new(string)
}

// parentMarksMerged is marksMerged for the pull requests branch of repo, a
// fork of parent ("" none), heads there: Gitea pushes the moved head to the
// parent and checks them too (services/pull/pull.go AddTestPullRequestTask,
// which finds them by their head), marking merged, where the parent detects
// manual merges, each whose base holds tip. A commit the parent lacks (a
// 404) its base cannot hold.
func (x *executor) parentMarksMerged(ctx context.Context, p *profile, repo map[string]string, parentName, branch, tip, perm string) (string, string) {
	if parentName == "" {
		return "", ""
	}
	full := repo["owner"] + "/" + repo["repo"]
	owner, name, _ := strings.Cut(parentName, "/")
	parent, c := map[string]string{"owner": owner, "repo": name}, struct{ SHA string }{} // c: tip's full id, read of the fork
	var up struct {
		Detects *bool `json:"autodetect_manual_merge"`
	}
	if !x.live(ctx, "repoGet", parent, &up) || up.Detects == nil {
		return perm, fmt.Sprintf("cannot read from Gitea whether %q, the repository %q forks, detects manual merges, which marks merged the pull requests %q heads there once their base holds their head; refusing", parentName, full, branch)
	} else if !*up.Detects {
		return "", ""
	}
	pulls, ok := allPages[struct {
		Number     int64
		Base, Head struct {
			Ref  string
			Repo *struct {
				FullName string `json:"full_name"`
			}
		}
	}](ctx, x, "repoListPullRequests", parent, url.Values{"state": {"open"}})
	if !ok {
		return perm, fmt.Sprintf("cannot read from Gitea which open pull requests of %q, the repository %q forks, the branch %q heads, which Gitea marks merged once their base holds their head; refusing", parentName, full, branch)
	}
	for _, pr := range pulls {
		if pr.Head.Ref != branch || pr.Head.Repo != nil && !strings.EqualFold(pr.Head.Repo.FullName, full) {
			continue // a head repository Gitea does not name may be the fork
		}
		if c.SHA == "" && (!x.live(ctx, "repoGetSingleCommit", map[string]string{"owner": repo["owner"], "repo": repo["repo"], "sha": tip}, &c) || c.SHA == "") {
			return perm, fmt.Sprintf("cannot read from Gitea the commit %q of %q, which the pull request %s!%d would then show; refusing", tip, full, parentName, pr.Number)
		}
		outside, held := []pushed{}, true
		switch x.get(ctx, "repoGetSingleCommit", map[string]string{"owner": owner, "repo": name, "sha": c.SHA}, nil) {
		case http.StatusNotFound: // the parent lacks it: its base cannot hold it
			held = false
		case http.StatusOK:
			outside, ok = x.listCommits(ctx, "repoGetAllCommits", parent, "sha", c.SHA, "not", "refs/heads/"+pr.Base.Ref, "limit", "1")
			held = !ok || len(outside) == 0
		}
		if held {
			_, why := permitted(p, perm)
			return perm, fmt.Sprintf("%q detects manual merges (autodetect_manual_merge), and after this write to %q of %q, which heads the pull request %s!%d, its base %q would hold its head (or Gitea did not say): "+
				"Gitea marks it merged and closes it, as do: manually-merged does; %s", parentName, branch, full, parentName, pr.Number, pr.Base.Ref, why)
		}
	}
	return "", ""
}

// threadTexts are the writes of text into an issue's or pull request's
// thread, with the read that tells whether it is a pull request's ("" for a
// review, always one).
var threadTexts = map[string]string{"issueCreateComment": "issueGetIssue", "issueEditComment": "issueGetComment",
	"issueEditCommentDeprecated": "issueGetComment", "repoCreatePullReview": "", "repoSubmitPullReview": ""}

// threadCloses returns the permission a text written into a pull request's
// thread (a comment, a review's body or line comments) that names an issue
// needs and the profile lacks, and why, or "": Gitea records a closing or
// reopening keyword there with its action for a writer or the issue's
// poster (models/issues/issue_xref.go verifyReferencedIssue), and the merge
// closes every issue the pull request references so and reopens every
// closed one (services/pull/merge.go handleCloseCrossReferences, after
// ResolveCrossReferences), as it does those of a commit's message. Closing
// is gitea.issue.close's, reopening gitea.issue.edit's; Gitea's keywords
// are configured, so either may be meant. An issue's thread closes nothing.
// What cannot be read is refused.
func (x *executor) threadCloses(ctx context.Context, p *profile, opID string, body map[string]any, params map[string]string) (string, string) {
	read, ok := threadTexts[opID]
	perm := "gitea.issue.close"
	if p.grants(perm) {
		perm = "gitea.issue.edit"
	}
	if !ok || p.grants(perm) {
		return "", ""
	}
	texts := []any{body["body"]}
	if cs, _ := body["comments"].([]any); opID == "repoCreatePullReview" {
		for _, c := range cs {
			c, _ := c.(map[string]any)
			texts = append(texts, c["body"])
		}
	}
	if !slices.ContainsFunc(texts, namesIssue) {
		return "", ""
	}
	var on struct {
		PullRequest any    `json:"pull_request"`     // an issue's
		PRURL       string `json:"pull_request_url"` // a comment's
	}
	switch {
	case read != "" && !x.live(ctx, read, params, &on):
		return perm, fmt.Sprintf("cannot read from Gitea whether %s writes into a pull request's thread, where a closing keyword before the issue its text names closes it when the pull request is merged; refusing", opID)
	case read != "" && on.PullRequest == nil && on.PRURL == "":
		return "", ""
	}
	_, why := p.allows(perm)
	return perm, fmt.Sprintf("%s writes into a pull request's thread a text naming an issue, and Gitea closes (or reopens) it after a closing (or reopening) keyword when the pull request is merged; %s; "+
		"or leave the issue out of the text", opID, why)
}
