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
	"net"
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
	} `json:"base"`
}

// liveEffects judges what a write does by Gitea's live state: a write landing
// on a default branch (any branch, in an empty repository) also needs
// gitea.pr.merge unless the profile sets allow_default_branch_writes; a
// merge that deletes its head branch (asked, or by the repository's default)
// needs gitea.branch.delete; updating a pull request writes to its head. The head repository, which the path does not
// name, must be within the profile's repositories, as must a migration's
// source on this Gitea and the upstream a fork merges from, and no issue a
// merged pull request's title or description references may lie outside
// them, nor one that the commits a write pushes reference (pushedMessages),
// the caller's name a sign-off writes included, nor one in the stored
// description a new title makes Gitea read again; a deleted fork's parent,
// whose pull requests the deletion closes, must be within them too, and so
// must the owner an accepted transfer moves the repository to, and a fork's
// parent where a deleted or renamed branch heads an open pull request, which
// Gitea closes or retargets, and every fork that a repository's changed
// visibility reaches; deleting a branch that heads an open pull request (here
// or in the parent) needs gitea.pr.close, and one that bases one
// gitea.pr.create too, since Gitea closes the first and retargets (or closes)
// the second.
// It returns the permission and reason of a refusal, or "", "".
func (x *executor) liveEffects(ctx context.Context, p *profile, op *operation, args map[string]any, params map[string]string, pr *livePR) (string, string) {
	body, _ := args["body"].(map[string]any)
	if op.ID == "repoMigrate" && p.repoPats != nil {
		for _, field := range []string{"clone_addr", "lfs_endpoint"} {
			src, _ := body[field].(string)
			if field == "lfs_endpoint" && src == "" { // Gitea then derives it from clone_addr
				continue
			}
			u, err := url.Parse(src)
			if err != nil || u.Host == "" {
				return "", fmt.Sprintf("repoMigrate: %s %q is not a URL with a host, so %s cannot tell which repository it reads", field, src, p.Name)
			}
			// Gitea serves a repository, and its wiki, at .../owner/name[.wiki][.git]
			// under any prefix, its LFS objects below /info/lfs, and this Gitea may
			// answer at addresses the server does not know: a name it has
			// (anything but a 404) is as good as self.
			segs := strings.Split(strings.Trim(trimFold(strings.TrimRight(u.Path, "/"), "/info/lfs"), "/"), "/")
			owner, name := "", trimFold(trimFold(segs[len(segs)-1], ".git"), ".wiki")
			if len(segs) > 1 {
				owner = segs[len(segs)-2]
			}
			if !p.allowsRepo(owner, name) && (x.maybeSelf(ctx, u.Hostname()) || owner != "" && x.get(ctx, "repoGet", map[string]string{"owner": owner, "repo": name}, nil) != http.StatusNotFound) {
				return "", fmt.Sprintf("repoMigrate reads %q, which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of %s", owner+"/"+name, p.Name)
			}
		}
	}
	repo := params["owner"] + "/" + params["repo"]
	var r struct { // the repository, read of Gitea by readRepo at most once per call
		Parent *struct {
			FullName      string `json:"full_name"`
			DefaultBranch string `json:"default_branch"`
		} `json:"parent"`
		Default       *bool  `json:"default_delete_branch_after_merge"`
		DefaultBranch string `json:"default_branch"`
		Empty         bool   `json:"empty"`
		Private       bool   `json:"private"`
		ForksCount    int    `json:"forks_count"`
		Transfer      *struct {
			Recipient account `json:"recipient"`
		} `json:"repo_transfer"`
	}
	read := false
	readRepo := func() bool { read = read || x.live(ctx, "repoGet", params, &r); return read }
	if op.ID == "repoMergeUpstream" && p.repoPats != nil {
		if !readRepo() || r.Parent == nil {
			return "", fmt.Sprintf("cannot read from Gitea which repository %q forks; refusing to merge from it", repo)
		}
		if owner, name, _ := strings.Cut(r.Parent.FullName, "/"); !p.allowsRepo(owner, name) {
			return "", fmt.Sprintf("repoMergeUpstream merges into %q from %q, the repository it forks, outside the repositories of %s", repo, r.Parent.FullName, p.Name)
		}
	}
	if op.ID == "acceptRepoTransfer" && p.repoPats != nil {
		// Accepting moves the repository to the pending transfer's recipient.
		if !readRepo() {
			return "", fmt.Sprintf("cannot read from Gitea to whom %q is being transferred; refusing", repo)
		}
		if r.Transfer != nil && !p.allowsRepo(r.Transfer.Recipient.Login, params["repo"]) {
			return "", fmt.Sprintf("acceptRepoTransfer transfers %q to %q, outside the repositories of %s", repo, r.Transfer.Recipient.Login+"/"+params["repo"], p.Name)
		}
	}
	if (op.ID == "repoDeleteBranch" || op.ID == "repoRenameBranch") && p.repoPats != nil {
		// Gitea closes the open pull requests a deleted branch heads, a fork's
		// in its parent too; a renamed one renames their head.
		doing, does := "deleting", "closes"
		if op.ID == "repoRenameBranch" {
			doing, does = "renaming", "retargets"
		}
		if !readRepo() {
			return "", fmt.Sprintf("cannot read from Gitea whether %q forks another repository, where the branch may head pull requests %s it %s; refusing", repo, doing, does)
		}
		if r.Parent != nil {
			if owner, name, _ := strings.Cut(r.Parent.FullName, "/"); !p.allowsRepo(owner, name) {
				switch n, _, ok := x.openPullsOn(ctx, r.Parent.FullName, repo, params["branch"]); {
				case !ok:
					return "", fmt.Sprintf("cannot read from Gitea which pull requests of %q, the repository %q forks, the branch %q heads, which %s it %s; refusing", r.Parent.FullName, repo, params["branch"], doing, does)
				case n != 0:
					return "", fmt.Sprintf("%s the branch %q of %q %s the pull request %s!%d it heads, outside the repositories of %s", doing, params["branch"], repo, does, r.Parent.FullName, n, p.Name)
				}
			}
		}
	}
	if op.ID == "repoDeleteBranch" && !(p.grants("gitea.pr.close") && p.grants("gitea.pr.create")) {
		// Gitea closes the open pull requests the branch heads, a fork's in its
		// parent too, and retargets those based on it to the default branch
		// (or, as it may be configured, closes them).
		branch, where := params["branch"], []string{repo}
		if !readRepo() {
			return "gitea.pr.close", fmt.Sprintf("cannot read from Gitea whether %q forks another repository, where the branch may head pull requests its deletion closes; refusing", repo)
		}
		if r.Parent != nil {
			where = append(where, r.Parent.FullName)
		}
		for _, full := range where {
			headed, based, ok := x.openPullsOn(ctx, full, repo, branch)
			if !ok {
				return "gitea.pr.close", fmt.Sprintf("cannot read from Gitea which open pull requests of %q the branch %q heads or bases, which its deletion closes or retargets; refusing", full, branch)
			}
			for _, c := range []struct {
				n    int64
				perm string
				what string
			}{{headed, "gitea.pr.close", "closes the pull request %s!%d it heads"}, {based, "gitea.pr.close", "retargets (or closes) the pull request %s!%d based on it"},
				{based, "gitea.pr.create", "retargets the pull request %s!%d based on it to the default branch"}} {
				if ok, why := permitted(p, c.perm); c.n != 0 && !ok {
					return c.perm, fmt.Sprintf("deleting the branch %q of %q "+c.what+"; %s", branch, repo, full, c.n, why)
				}
			}
		}
	}
	if op.ID == "repoEdit" && p.repoPats != nil && body["private"] != nil {
		// Gitea gives the repository's forks, and theirs, a visibility it changes.
		if !readRepo() {
			return "", fmt.Sprintf("cannot read from Gitea whether %q is private, whose forks take a visibility it changes; refusing", repo)
		}
		if body["private"] != r.Private {
			switch fork, ok := x.forkOutside(ctx, p, repo, r.ForksCount); {
			case !ok:
				return "", fmt.Sprintf("cannot read from Gitea every fork of %q, which takes the visibility it changes (Gitea lists only the forks you may see); refusing", repo)
			case fork != "": // not named: listForks, which would name it, is refused under repositories
				return "", fmt.Sprintf("changing the visibility of %q changes that of a fork of it (or of its forks) outside the repositories of %s", repo, p.Name)
			}
		}
	}
	if op.ID == "repoDelete" && p.repoPats != nil {
		// Gitea closes the pull requests a deleted fork heads in its parent.
		if !readRepo() {
			return "", fmt.Sprintf("cannot read from Gitea whether %q forks another repository, whose pull requests its deletion closes; refusing", repo)
		}
		if r.Parent != nil {
			if owner, name, _ := strings.Cut(r.Parent.FullName, "/"); !p.allowsRepo(owner, name) {
				return "", fmt.Sprintf("deleting %q closes the pull requests it heads in %q, the repository it forks, outside the repositories of %s", repo, r.Parent.FullName, p.Name)
			}
		}
	}
	if p.repoPats != nil && (op.ID == "issueEditIssue" || op.ID == "repoEditPullRequest") && body["title"] != nil && body["body"] == nil {
		// A new title makes Gitea read the stored description's references again, as the caller's.
		var issue struct {
			Body string `json:"body"`
		}
		if !x.live(ctx, "issueGetIssue", params, &issue) {
			return "", "cannot read from Gitea the description a new title makes Gitea read again; refusing"
		}
		if ref := p.refOutside(issue.Body); ref != "" {
			return "", fmt.Sprintf("a new title makes Gitea read the description again, as yours, and it references %q, outside the repositories of %s", ref, p.Name)
		}
	}
	branch, lands := landingBranch(op.ID, args, params)
	if op.ID == "repoMergePullRequest" { // the title and description are read only for a merge
		if ref := p.refOutside(pr.Title + "\n" + pr.Body); ref != "" {
			return "", fmt.Sprintf("the pull request's title or description references %q, outside the repositories of %s: Gitea closes it on merge after a closing keyword", ref, p.Name)
		}
	}
	writesHead := op.ID == "repoUpdatePullRequest"
	if op.ID == "repoMergePullRequest" {
		del, set := body["delete_branch_after_merge"]
		if !set || del == nil {
			if !readRepo() || r.Default == nil {
				return "gitea.branch.delete", fmt.Sprintf("cannot read from Gitea whether merging in %q deletes the head branch; refusing (set delete_branch_after_merge)", repo)
			}
			del = *r.Default
		}
		if writesHead = del == true; writesHead {
			if ok, why := permitted(p, "gitea.branch.delete"); !ok {
				return "gitea.branch.delete", fmt.Sprintf("merging in %q deletes the head branch (the repository's default_delete_branch_after_merge); %s; set delete_branch_after_merge to false", repo, why)
			}
		}
	}
	if writesHead {
		if pr.Head.Repo == nil {
			return "", "cannot read the pull request's head repository from Gitea; refusing to write to its head branch"
		}
		head := pr.Head.Repo.FullName
		if owner, name, _ := strings.Cut(head, "/"); !p.allowsRepo(owner, name) {
			return "", fmt.Sprintf("%s writes to the head branch %q of %q, outside the repositories of %s", op.ID, pr.Head.Ref, head, p.Name)
		}
		if op.ID == "repoUpdatePullRequest" {
			branch, lands, repo = pr.Head.Ref, strings.EqualFold(pr.Head.Ref, pr.Head.Repo.DefaultBranch), head
		}
	}
	if p.repoPats != nil {
		upstream, def := "", "" // the comparison of a fork's branch with its parent's; the default branch
		if b, _ := landingBranch(op.ID, args, params); op.ID == "repoMergeUpstream" {
			// Gitea syncs the parent's branch of that name, or its default branch if it has none.
			b = cmp.Or(b, r.DefaultBranch)
			from, ok := x.branchOf(ctx, r.Parent.FullName, b, r.Parent.DefaultBranch)
			if !ok {
				return "", fmt.Sprintf("cannot read from Gitea which branch of %q syncs %q; refusing", r.Parent.FullName, b)
			}
			upstream = b + "..." + r.Parent.FullName + ":" + from
		} else if op.ID == "repoMergePullRequest" || op.ID == "repoCreateBranch" && body["old_ref_name"] != nil ||
			slices.Contains(contentsOps, op.ID) && body["force_push"] == true {
			readRepo()
			def = r.DefaultBranch
		}
		msgs, ok := x.pushedMessages(ctx, op, args, params, pr, upstream, def)
		if name, _, writes := signedOff(body); slices.Contains(contentsOps, op.ID) && writes && name == "" {
			// Gitea signs the message off with the committer's name: the
			// caller's full name where the body names no one (a name
			// the body gives is judged with the body).
			var me account
			ok = ok && x.live(ctx, "userGetCurrent", nil, &me)
			msgs = append(msgs, me.written()...)
		}
		if !ok {
			return "", fmt.Sprintf("cannot read from Gitea the messages of the commits %s puts on a branch, which may reference issues outside the repositories of %s; refusing", op.ID, p.Name)
		}
		if ref := p.refOutside(msgs); ref != "" {
			return "", fmt.Sprintf("the commits %s puts on a branch reference %q, outside the repositories of %s: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword", op.ID, ref, p.Name)
		}
	}
	if slices.Contains(contentsOps, op.ID) && !p.grants("gitea.issue.close") {
		// Where the body names no one, the Signed-off-by line names the
		// caller, by the full name Gitea holds for them.
		if name, _, writes := signedOff(body); writes && name == "" {
			var me account
			if !x.live(ctx, "userGetCurrent", nil, &me) {
				return "gitea.issue.close", fmt.Sprintf("cannot read from Gitea the full name %s's Signed-off-by line writes into the commit's message; refusing (name a committer)", op.ID)
			}
			if slices.ContainsFunc(me.written(), namesIssue) {
				_, why := p.allows("gitea.issue.close")
				return "gitea.issue.close", fmt.Sprintf("%s: signoff: true writes your full name %q into the commit's message as a Signed-off-by line, and Gitea closes the issues it names after a closing keyword as it does the message's; %s", op.ID, me.FullName, why)
			}
		}
	}
	if ok, _ := permitted(p, permMerge); !lands || ok || p.AllowDefaultBranchWrites {
		return "", ""
	}
	what := "the default branch of"
	if branch == "" || op.ID != "repoUpdatePullRequest" {
		if !readRepo() || r.DefaultBranch == "" {
			return permMerge, fmt.Sprintf("cannot read the default branch of %q from Gitea; refusing to write to %q", repo, branch)
		}
		switch {
		case r.Empty: // Gitea makes the branch of an empty repository's first commit its default branch
			branch, what = cmp.Or(branch, r.DefaultBranch), "the branch Gitea makes the default branch of the empty repository"
		case branch != "" && !strings.EqualFold(branch, r.DefaultBranch):
			return "", ""
		default:
			branch = r.DefaultBranch
		}
	}
	_, why := permitted(p, permMerge)
	return permMerge, fmt.Sprintf("%s lands on %q, %s %q: that is landing code without review, which also needs gitea.pr.merge (%s) or allow_default_branch_writes in the profile; write to a new branch (new_branch) and open a pull request", op.ID, branch, what, repo, why)
}

// maybeSelf reports whether host may be this Gitea's host: the same name (in
// any case, with or without a trailing dot), an address Gitea's name resolves
// to, a loopback, private or unspecified address, or a name that does not
// resolve (fail closed).
func (x *executor) maybeSelf(ctx context.Context, host string) bool {
	own := x.cfg.url.Hostname()
	if strings.EqualFold(strings.TrimSuffix(host, "."), strings.TrimSuffix(own, ".")) {
		return true
	}
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	owns, err2 := net.DefaultResolver.LookupIPAddr(ctx, own)
	if err != nil || err2 != nil {
		return true
	}
	for _, ip := range ips {
		if ip.IP.IsLoopback() || ip.IP.IsPrivate() || ip.IP.IsUnspecified() || ip.IP.IsLinkLocalUnicast() ||
			slices.ContainsFunc(owns, func(o net.IPAddr) bool { return o.IP.Equal(ip.IP) }) {
			return true
		}
	}
	return false
}

// trimFold removes suffix from s in any case.
func trimFold(s, suffix string) string {
	if len(s) >= len(suffix) && strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return s[:len(s)-len(suffix)]
	}
	return s
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
