package main

// The live effects of a write (README, "Execution profiles"): what Gitea does
// beyond the operation's path, judged by Gitea's live state before anything
// is sent (liveEffects, called by check in executor.go): where a write lands,
// the repositories it reaches (a fork's parent, a migration's source, the
// issues its commits and texts reference), the pull requests a branch's
// deletion closes. Every read goes through the executor's client (client.go);
// what cannot be read is a refusal.

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// liveEffects judges what a write does, read from Gitea's live state, and
// returns the permission and reason of a refusal, or "", "":
//   - landing on a default branch (any branch of an empty repository) also
//     needs gitea.pr.merge, unless the profile sets allow_default_branch_writes;
//   - a merge that deletes its head branch (asked, or by the repository's
//     default) needs gitea.branch.delete;
//   - a rebase merge is refused unless the head is linear and starts at the
//     base's tip;
//   - updating a pull request writes to its head;
//   - deleting a branch that heads an open pull request (here or in the
//     parent) needs gitea.pr.close, and one that bases one gitea.pr.create
//     too: Gitea closes the first and retargets (or closes) the second; a
//     branch moved onto the head of one based on it, or into the base of one
//     it heads, needs gitea.pr.merge and gitea.pr.close where Gitea then
//     marks it merged (marksMerged);
//   - retargeting a pull request an official approval stands on (changing
//     its base, or deleting or renaming the branch it is based on) needs
//     gitea.repo.admin: Gitea keeps the approval for the new base; so does
//     reopening one whose head was pushed while it was closed, which Gitea
//     judged for no approval (reopenCarried);
//   - changing how one signs in as a site administrator (adminEditUser,
//     adminCreatePublicKey, whoever the live account says is one) needs
//     gitea.admin.system, as making one does;
//   - a text naming an issue written into a pull request's thread (a
//     comment, a review) needs gitea.issue.close and gitea.issue.edit: the
//     merge closes it after a closing keyword and reopens it after a
//     reopening one (threadCloses, in executor.go); the commits a write
//     brings onto a branch from elsewhere (picksUp), where one names an
//     issue (issueNamed), need gitea.issue.close: Gitea closes it where the
//     branch is the one the issue's ref names.
//   - a contents write naming a branch with a blank at either end is
//     refused: Gitea writes to the branch without it.
//
// Under repositories, each of these must lie within them: the head
// repository, which the path does not name (and the one allow_maintainer_edit
// opens to the base's writers); a migration's source, or a push
// mirror's remote (each one a sync writes to), on this
// Gitea; the upstream a fork merges from; every issue referenced by a merged
// pull request's title or description, by the commits a write pushes
// (pushedMessages, the caller's name a sign-off writes included) or by the
// stored text whose cross-references an edit or deletion withdraws; the
// caller's running stopwatch, which starting another stops; a deleted
// issue's dependency links (a deleted repository's issues' too, and the
// references their texts made: issuesOutside); a deleted fork's
// parent, whose pull requests the deletion closes; the owner an accepted
// transfer moves the repository to; a fork's parent where a deleted,
// renamed or pushed-to branch (a contents write's, repoUpdateBranch's, a
// merge's base, an updated pull request's head) heads an open pull request;
// every fork that a changed visibility reaches.
func (x *executor) liveEffects(ctx context.Context, p *profile, op *operation, args map[string]any, params map[string]string, pr *livePR) (string, string) {
	body, _ := args["body"].(map[string]any)
	for _, field := range []string{"branch", "new_branch"} {
		// Gitea pushes a contents write to the branch as strings.TrimSpace
		// leaves its name (services/repository/files/temp_repo.go Push), which
		// trims Unicode blanks GitRefName lets through: "main\u00a0" names no
		// branch Gitea finds, so the write lands on main, unjudged.
		if s, _ := body[field].(string); slices.Contains(contentsOps, op.ID) && s != strings.TrimSpace(s) {
			return "", fmt.Sprintf("%s %q begins or ends with a blank, which Gitea trims when it pushes the commit (services/repository/files/temp_repo.go Push): it would write to %q, not to the branch named; name the branch without it", field, s, strings.TrimSpace(s))
		}
	}
	if op.ID == "repoMigrate" && p.repoPats != nil {
		for _, field := range []string{"clone_addr", "lfs_endpoint"} {
			src, _ := body[field].(string)
			if field == "lfs_endpoint" && src == "" { // Gitea then derives it from clone_addr
				continue
			}
			if why := x.remoteOutside(ctx, p, op.ID, field, "reads", src); why != "" {
				return "", why
			}
		}
	}
	if op.ID == "repoAddPushMirror" && p.repoPats != nil {
		// Gitea pushes every ref there, mirrored (forced, and branches the
		// remote has beyond them deleted), at each interval, on a commit with
		// sync_on_commit, and on repoPushMirrorSync (services/mirror/mirror_push.go
		// runPushSync): a migration the other way.
		src, _ := body["remote_address"].(string)
		if why := x.remoteOutside(ctx, p, op.ID, "remote_address", "writes to", src); why != "" {
			return "", why
		}
	}
	if op.ID == "repoPushMirrorSync" && p.repoPats != nil {
		// Gitea pushes to every push mirror of the repository (routers/api/v1/repo/mirror.go PushMirrorSync).
		mirrors, ok := allPages[struct {
			Address string `json:"remote_address"`
		}](ctx, x, "repoListPushMirrors", params, nil)
		if !ok {
			return "", fmt.Sprintf("cannot read from Gitea every push mirror of %q, each of which a sync writes to; refusing", params["owner"]+"/"+params["repo"])
		}
		for _, m := range mirrors {
			if why := x.remoteOutside(ctx, p, op.ID, "remote_address", "writes to", m.Address); why != "" {
				return "", why
			}
		}
	}
	if (op.ID == "adminEditUser" || op.ID == "adminCreatePublicKey") && !p.grants("gitea.admin.system") {
		// Gitea's EditUser sets any user's password, e-mail, login source and
		// login name, and CreatePublicKey adds an SSH key to any user's account
		// (routers/api/v1/admin/user.go), a site administrator's too: whoever
		// then signs in as them administers the site, as admin: true would.
		var u struct {
			IsAdmin *bool `json:"is_admin"` // shown to a site administrator (services/convert/user.go)
		}
		if !x.live(ctx, "userGet", params, &u) || u.IsAdmin == nil {
			return "gitea.admin.system", fmt.Sprintf("cannot read from Gitea whether %q is a site administrator, whose sign-in %s would change; refusing", params["username"], op.ID)
		}
		if *u.IsAdmin {
			_, why := p.allows("gitea.admin.system")
			return "gitea.admin.system", fmt.Sprintf("%q is a site administrator, and %s changes how one signs in as them (password, e-mail, login source, SSH key): whoever does administers the site; %s", params["username"], op.ID, why)
		}
	}
	if perm, why := x.threadCloses(ctx, p, op.ID, body, params); why != "" {
		return perm, why
	}
	repo := params["owner"] + "/" + params["repo"]
	var r struct { // the repository, read of Gitea by readRepo at most once per call
		Parent *struct {
			FullName      string `json:"full_name"`
			DefaultBranch string `json:"default_branch"`
		} `json:"parent"`
		Default       *bool  `json:"default_delete_branch_after_merge"`
		Detects       *bool  `json:"autodetect_manual_merge"`
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
	// Without gitea.issue.close, the commits a write brings onto a branch from
	// elsewhere name no issue, as a contents write's own message may not
	// (judged below, with pushedMessages).
	closes := !p.grants("gitea.issue.close") && (slices.Contains(picksUp, op.ID) || slices.Contains(contentsOps, op.ID) && body["force_push"] == true)
	if op.ID == "repoMergeUpstream" && (p.repoPats != nil || closes) {
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
	if op.ID == "repoDeleteBranch" && !(p.grants("gitea.pr.close") && p.grants("gitea.pr.create") && p.grants("gitea.repo.admin")) {
		// Gitea closes the open pull requests the branch heads, a fork's in its
		// parent too, and retargets those based on it to the default branch
		// (or, as it may be configured, closes them), keeping their approvals.
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
			first := int64(0)
			if len(based) > 0 {
				first = based[0]
			}
			for _, c := range []struct {
				n    int64
				perm string
				what string
			}{{headed, "gitea.pr.close", "closes the pull request %s!%d it heads"}, {first, "gitea.pr.close", "retargets (or closes) the pull request %s!%d based on it"},
				{first, "gitea.pr.create", "retargets the pull request %s!%d based on it to the default branch"}} {
				if ok, why := permitted(p, c.perm); c.n != 0 && !ok {
					return c.perm, fmt.Sprintf("deleting the branch %q of %q "+c.what+"; %s", branch, repo, full, c.n, why)
				}
			}
			for _, n := range based {
				if why := x.approvalCarried(ctx, p, map[string]string{"owner": params["owner"], "repo": params["repo"], "index": strconv.FormatInt(n, 10)},
					fmt.Sprintf("deleting the branch %q retargets the pull request %s!%d based on it to the default branch", branch, full, n)); why != "" {
					return "gitea.repo.admin", why
				}
			}
		}
	}
	if to, _ := body["name"].(string); op.ID == "repoRenameBranch" && !p.grants("gitea.repo.admin") {
		// Gitea renames the base of the open pull requests based on the branch
		// (models/git/branch.go RenameBranch), keeping their approvals, as given.
		_, based, ok := x.openPullsOn(ctx, repo, repo, params["branch"])
		if !ok {
			return "gitea.repo.admin", fmt.Sprintf("cannot read from Gitea which open pull requests of %q are based on the branch %q, which its renaming retargets with their approvals; refusing", repo, params["branch"])
		}
		for _, n := range based {
			if why := x.approvalCarried(ctx, p, map[string]string{"owner": params["owner"], "repo": params["repo"], "index": strconv.FormatInt(n, 10)},
				fmt.Sprintf("renaming the branch %q to %q retargets the pull request %s!%d based on it", params["branch"], to, repo, n)); why != "" {
				return "gitea.repo.admin", why
			}
		}
	}
	if base, _ := body["base"].(string); op.ID == "repoEditPullRequest" && base != "" && !p.grants("gitea.repo.admin") {
		var live livePR
		if !x.live(ctx, "repoGetPullRequest", params, &live) {
			return "gitea.repo.admin", "cannot read from Gitea the pull request's base, whose change keeps its approvals; refusing"
		}
		if live.Base.Ref != base { // as Gitea compares them (routers/api/v1/repo/pull.go EditPullRequest)
			if why := x.approvalCarried(ctx, p, params, fmt.Sprintf("retargeting the pull request from %q to %q", live.Base.Ref, base)); why != "" {
				return "gitea.repo.admin", why
			}
		}
	}
	if op.ID == "repoEditPullRequest" && p.repoPats != nil && body["allow_maintainer_edit"] == true {
		// Every writer of the base repository may then push to the head branch,
		// in the head repository (models/issues/pull_list.go
		// CanMaintainerWriteToBranch, asked by its contents API and pushes).
		var live livePR
		if !x.live(ctx, "repoGetPullRequest", params, &live) || live.Head.Repo == nil {
			return "", "cannot read from Gitea the pull request's head repository, which allow_maintainer_edit opens to the writers of its base; refusing"
		}
		if owner, name, _ := strings.Cut(live.Head.Repo.FullName, "/"); !p.allowsRepo(owner, name) {
			return "", fmt.Sprintf("allow_maintainer_edit lets the writers of %q push to the head branch %q of %q, outside the repositories of %s", repo, live.Head.Ref, live.Head.Repo.FullName, p.Name)
		}
	}
	if state, _ := bodyField(args, "state"); state == "open" && (op.ID == "repoEditPullRequest" || op.ID == "issueEditIssue") && !p.grants("gitea.repo.admin") {
		if why := x.reopenCarried(ctx, p, params); why != "" {
			return "gitea.repo.admin", why
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
		if why := x.issuesOutside(ctx, p, params); why != "" {
			return "", why
		}
	}
	if read, ok := storedTexts[op.ID]; ok && p.repoPats != nil && (read == "issueGetComment" || op.ID == "issueDelete" || body["title"] != nil || body["body"] != nil) {
		// Gitea withdraws the cross-references a rewritten or deleted text
		// made, from the timelines of the issues it references.
		stored, ok := x.storedRefs(ctx, read, params, op.ID == "issueDelete")
		if !ok {
			return "", fmt.Sprintf("cannot read from Gitea the stored text whose cross-references %s withdraws; refusing", op.ID)
		}
		if ref := p.refOutside(stored); ref != "" {
			return "", fmt.Sprintf("%s withdraws the cross-references of the stored text, and it references %q, outside the repositories of %s", op.ID, ref, p.Name)
		}
	}
	if op.ID == "issueDelete" && p.repoPats != nil {
		// Gitea deletes the issue's dependency links (services/issue/issue.go, deleteIssue).
		switch linked, ok := x.linkedOutside(ctx, p, params); {
		case !ok:
			return "", "cannot read from Gitea every issue the issue depends on or blocks, whose link its deletion deletes; refusing"
		case linked != "":
			return "", fmt.Sprintf("deleting the issue deletes its dependency link with %s, outside the repositories of %s", linked, p.Name)
		}
	}
	if op.ID == "issueStartStopWatch" && p.repoPats != nil {
		// Gitea stops the caller's running stopwatch, wherever it runs, and
		// writes its time and a comment there (models/issues/stopwatch.go, CreateIssueStopwatch).
		switch sw, ok := x.stopwatchOutside(ctx, p); {
		case !ok:
			return "", "cannot read from Gitea your running stopwatches, one of which starting another stops; refusing"
		case sw != "":
			return "", fmt.Sprintf("starting a stopwatch stops yours running on %s, writing its time and a comment there, outside the repositories of %s", sw, p.Name)
		}
	}
	branch, lands := landingBranch(op.ID, args, params)
	if op.ID == "repoMergePullRequest" { // the title and description are read only for a merge
		if ref := p.refOutside(pr.Title + "\n" + pr.Body); ref != "" {
			return "", fmt.Sprintf("the pull request's title or description references %q, outside the repositories of %s: Gitea closes it on merge after a closing keyword", ref, p.Name)
		}
	}
	if do, _ := body["do"].(string); op.ID == "repoMergePullRequest" && strings.HasPrefix(do, "rebase") {
		// git rebase replays the head's commits except its merge commits and
		// those whose change the base already has: what lands is the head
		// only where it is linear and starts at the base's tip.
		own, ok := x.allCommits(ctx, "repoGetPullRequestCommits", params, nil)
		ahead, ok2 := x.allCommits(ctx, "repoGetAllCommits", map[string]string{"owner": params["owner"], "repo": params["repo"]},
			url.Values{"sha": {pr.Base.SHA}, "not": {pr.Head.SHA}})
		if i := slices.IndexFunc(own, func(c pushed) bool { return len(c.Parents) != 1 }); !ok || !ok2 || i >= 0 || len(ahead) > 0 || pr.Base.SHA == "" {
			return "", fmt.Sprintf("do: %s replays the pull request's commits onto the base without its merge commits and those whose change the base has, so what lands may not be its head: "+
				"a merge or root commit among them, a base that moved past where the head starts, or commits that could not be read from Gitea; merge or squash it (or rebase the head on the base first)", do)
		}
	}
	writesHead := op.ID == "repoUpdatePullRequest"
	if op.ID == "repoMergePullRequest" && body["do"] != "manually-merged" { // a mark deletes nothing (routers/api/v1/repo/pull.go MergePullRequest)
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
		if op.ID == "repoMergePullRequest" && !p.grants("gitea.repo.admin") {
			// The deleted head branch retargets the open pull requests based on it
			// to the default branch (services/pull/pull.go AdjustPullsCausedByBranchDeleted).
			_, based, ok := x.openPullsOn(ctx, head, head, pr.Head.Ref)
			if !ok {
				return "gitea.repo.admin", fmt.Sprintf("cannot read from Gitea which open pull requests of %q are based on the head branch %q, which its deletion after the merge retargets with their approvals; refusing (or set delete_branch_after_merge to false)", head, pr.Head.Ref)
			}
			owner, name, _ := strings.Cut(head, "/")
			for _, n := range based {
				if why := x.approvalCarried(ctx, p, map[string]string{"owner": owner, "repo": name, "index": strconv.FormatInt(n, 10)},
					fmt.Sprintf("deleting the head branch %q after the merge retargets the pull request %s!%d based on it to the default branch", pr.Head.Ref, head, n)); why != "" {
					return "gitea.repo.admin", why + "; or set delete_branch_after_merge to false"
				}
			}
		}
		if op.ID == "repoUpdatePullRequest" {
			branch, lands, repo = pr.Head.Ref, strings.EqualFold(pr.Head.Ref, pr.Head.Repo.DefaultBranch), head
		}
	}
	if p.repoPats != nil || closes {
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
			perm, where := "", "outside the repositories of "+p.Name
			if p.repoPats == nil {
				perm, where = "gitea.issue.close", "Gitea closes"
			}
			return perm, fmt.Sprintf("cannot read from Gitea the messages of the commits %s puts on a branch, which may reference issues %s; refusing", op.ID, where)
		}
		if ref := p.refOutside(msgs); ref != "" {
			return "", fmt.Sprintf("the commits %s puts on a branch reference %q, outside the repositories of %s: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword", op.ID, ref, p.Name)
		}
		if closes {
			if ref := x.issueNamed(ctx, msgs, repo); ref != "" {
				_, why := p.allows("gitea.issue.close")
				return "gitea.issue.close", fmt.Sprintf("the commits %s puts on a branch name %s, an issue (or one Gitea does not show as a pull request): once pushed, Gitea closes (or reopens) it after a keyword, as the caller, "+
					"where the branch is the one the issue's ref names, the default branch, or any branch the repository allows (services/issue/commit.go UpdateIssuesCommit); %s", op.ID, ref, why)
			}
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
	at, doing, does := params["branch"], "deleting", "closes" // the branch whose pull requests in the parent a write reaches
	switch {
	case op.ID == "repoRenameBranch":
		doing, does = "renaming", "retargets"
	case op.ID == "repoMergePullRequest":
		at, doing, does = pr.Base.Ref, "pushing to", "updates"
	case slices.Contains(contentsOps, op.ID) || op.ID == "repoUpdateBranch":
		at, _ = landingBranch(op.ID, args, params)
		doing, does = "pushing to", "updates"
	case op.ID == "repoUpdatePullRequest": // a push to the head branch, in the head repository (repo)
		at, doing, does = pr.Head.Ref, "pushing to", "updates"
	case op.ID != "repoDeleteBranch":
		doing = ""
	}
	if doing != "" && p.repoPats != nil {
		// Gitea closes the open pull requests a deleted branch heads, a fork's
		// in its parent too; a renamed one renames their head; a push updates
		// them: it pushes their head to the parent, comments the commits
		// pushed there and marks their reviews stale (services/pull/pull.go
		// AddTestPullRequestTask).
		ok := readRepo()
		h := r // the branch's repository: an updated pull request's head may be in another than the path's
		if owner, name, _ := strings.Cut(repo, "/"); ok && !strings.EqualFold(repo, params["owner"]+"/"+params["repo"]) {
			h.Parent = nil
			ok = x.live(ctx, "repoGet", map[string]string{"owner": owner, "repo": name}, &h)
		}
		if !ok {
			return "", fmt.Sprintf("cannot read from Gitea whether %q forks another repository, where the branch may head pull requests %s it %s; refusing", repo, doing, does)
		}
		if at = cmp.Or(at, r.DefaultBranch); h.Parent != nil {
			if owner, name, _ := strings.Cut(h.Parent.FullName, "/"); !p.allowsRepo(owner, name) {
				switch n, _, ok := x.openPullsOn(ctx, h.Parent.FullName, repo, at); {
				case !ok:
					return "", fmt.Sprintf("cannot read from Gitea which pull requests of %q, the repository %q forks, the branch %q heads, which %s it %s; refusing", h.Parent.FullName, repo, at, doing, does)
				case n != 0:
					return "", fmt.Sprintf("%s the branch %q of %q %s the pull request %s!%d it heads, outside the repositories of %s", doing, at, repo, does, h.Parent.FullName, n, p.Name)
				}
			}
		}
	}
	moves, tip, detects, moved := "", "", (*bool)(nil), (*string)(nil) // a branch moved onto history made elsewhere (a parent's: unknown), or to a commit
	switch to, _ := body["new_branch"].(string); {
	case p.grants(permMerge) && p.grants("gitea.pr.close"):
	case op.ID == "repoUpdatePullRequest": // in the head's repository, read by marksMerged where another
		if moves, tip = pr.Head.Ref, pr.Base.SHA; strings.EqualFold(repo, params["owner"]+"/"+params["repo"]) && readRepo() {
			detects = r.Detects
		}
	case op.ID == "repoUpdateBranch" || op.ID == "repoMergeUpstream" || slices.Contains(contentsOps, op.ID) && body["force_push"] == true && to != "":
		if !readRepo() {
			return "", fmt.Sprintf("cannot read from Gitea the default branch of %q and whether it detects manual merges; refusing", repo)
		}
		from, _ := body["branch"].(string)
		moves, tip, detects = cmp.Or(to, from, r.DefaultBranch), "refs/heads/"+cmp.Or(from, r.DefaultBranch), r.Detects
		if op.ID == "repoUpdateBranch" { // moved: a fork's branch may head pull requests of its parent (moved, "" none)
			moves, tip, moved = params["branch"], fmt.Sprint(body["new_commit_id"]), new(string)
			if r.Parent != nil {
				*moved = r.Parent.FullName
			}
		} else if op.ID == "repoMergeUpstream" {
			tip = ""
		}
	}
	if perm, why := x.marksMerged(ctx, p, repo, moves, tip, cmp.Or(moved, rebasedOnto(op.ID, args, params, repo)), detects); why != "" {
		return perm, why
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

// approvalCarried returns why retargeting the pull request of params (doing
// says how) is refused: Gitea keeps its standing official approval, which
// then counts for a base it was not given for, and p may not administer the
// repository (gitea.repo.admin, which may dismiss it); "" when none stands.
func (x *executor) approvalCarried(ctx context.Context, p *profile, params map[string]string, doing string) string {
	who, ok := x.approvedBy(ctx, params)
	if !ok {
		return fmt.Sprintf("cannot read from Gitea the reviews of the pull request (%s, and Gitea keeps its approvals); refusing", doing)
	}
	if ok, why := permitted(p, "gitea.repo.admin"); who != "" && !ok {
		return fmt.Sprintf("%s, and Gitea keeps %q's approval, which branch protection then counts for a base it was not given for; %s; ask for a new review on the new base instead", doing, who, why)
	}
	return ""
}

// reopenCarried returns why reopening the pull request of params is
// refused, "" when nothing is carried (or it is an issue, or open): Gitea
// judges a push to a head branch only for the open pull requests it heads
// (services/pull/pull.go AddTestPullRequestTask, which marks their reviews
// stale and dismisses approvals where branch protection says so), reopening
// judges nothing, and the next push is judged against the commit it
// replaces. Reopened with a head pushed while it was closed (refs/pull/N/head,
// pullRef, at another commit), it keeps for that head the official approval
// that stands, which branch protection counts, and p may not administer
// the repository (gitea.repo.admin, which may dismiss it).
func (x *executor) reopenCarried(ctx context.Context, p *profile, params map[string]string) string {
	var pr livePR
	switch x.get(ctx, "repoGetPullRequest", params, &pr) {
	case http.StatusNotFound: // an issue
		return ""
	case http.StatusOK:
	default:
		return "cannot read from Gitea the pull request's state and head, whose approvals reopening it may carry to a head pushed while it was closed; refusing"
	}
	if pr.State != "closed" {
		return ""
	}
	at, ok := x.pullRef(ctx, params)
	if ok && at == pr.Head.SHA {
		return ""
	}
	who, ok2 := x.approvedBy(ctx, params)
	switch _, why := permitted(p, "gitea.repo.admin"); {
	case !ok || !ok2:
		return "cannot read from Gitea the pull request's reviews and refs/pull/" + params["index"] + "/head, whose approvals reopening it may carry to a head pushed while it was closed; refusing"
	case who != "":
		return fmt.Sprintf("the head %s was pushed while the pull request was closed (Gitea shows it at %s), which Gitea neither marks stale nor dismisses approvals for: "+
			"reopening it carries %q's approval to that head, which branch protection then counts, also once a push that changes nothing makes Gitea show it; %s; ask for a new review once it is open instead", pr.Head.SHA, at, who, why)
	}
	return ""
}

// pullRef returns the commit of the pull request of params at
// refs/pull/N/head, where Gitea shows its commits, files and diff and takes
// in a push to its head branch only while it is open; false when Gitea does
// not show that ref.
func (x *executor) pullRef(ctx context.Context, params map[string]string) (string, bool) {
	type gitRef struct {
		Ref    string `json:"ref"`
		Object struct {
			SHA string `json:"sha"`
		} `json:"object"`
	}
	var refs []gitRef // a list, whatever it holds: Gitea compares the one it found with the name without refs/
	name := "pull/" + params["index"] + "/head"
	if !x.live(ctx, "repoListGitRefs", map[string]string{"owner": params["owner"], "repo": params["repo"], "ref": name}, &refs) {
		return "", false
	}
	i := slices.IndexFunc(refs, func(r gitRef) bool { return r.Ref == "refs/"+name })
	if i < 0 {
		return "", false
	}
	return refs[i].Object.SHA, true
}

// storedTexts maps a write to the read of the stored text whose
// cross-references Gitea withdraws (models/issues/issue_xref.go): an issue's
// or pull request's title and body rewritten (AddCrossReferences, removeOld),
// a comment's body edited or deleted (neuterCrossReferences), an issue
// deleted with its comments (services/issue/issue.go, deleteIssue).
var storedTexts = map[string]string{
	"issueEditIssue": "issueGetIssue", "repoEditPullRequest": "issueGetIssue", "issueDelete": "issueGetIssue",
	"issueEditComment": "issueGetComment", "issueDeleteComment": "issueGetComment",
	"issueEditCommentDeprecated": "issueGetComment", "issueDeleteCommentDeprecated": "issueGetComment",
}

// remoteOutside returns why p's repositories refuse a repository address
// (field of opID, which verb it) or "": one Gitea serves a repository at, or
// its wiki, .../owner/name[.wiki][.git] under any prefix, its LFS objects
// below /info/lfs, on this Gitea or a host that may be it (maybeSelf), or at
// any address naming an owner/name this Gitea has (anything but a 404), since
// it may answer at addresses the server does not know, outside them. An
// address without a host (a path on the server's disk) cannot be judged.
func (x *executor) remoteOutside(ctx context.Context, p *profile, opID, field, verb, src string) string {
	u, err := url.Parse(src)
	if err != nil || u.Host == "" {
		return fmt.Sprintf("%s: %s %q is not a URL with a host, so %s cannot tell which repository it %s", opID, field, src, p.Name, verb)
	}
	// Gitea collapses repeated slashes (modules/web/router.go
	// normalizeRequestPath) and git, through curl, resolves "." and ".."
	// segments before it asks: the path is read cleaned, as they read it.
	segs := strings.Split(strings.Trim(trimFold(path.Clean("/"+u.Path), "/info/lfs"), "/"), "/")
	owner, name := "", trimFold(trimFold(segs[len(segs)-1], ".git"), ".wiki")
	if len(segs) > 1 {
		owner = segs[len(segs)-2]
	}
	if !p.allowsRepo(owner, name) && (x.maybeSelf(ctx, u.Hostname()) || owner != "" && x.get(ctx, "repoGet", map[string]string{"owner": owner, "repo": name}, nil) != http.StatusNotFound) {
		return fmt.Sprintf("%s %s %q, which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of %s", opID, verb, owner+"/"+name, p.Name)
	}
	return ""
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

// picksUp are the writes that move a branch onto commits made elsewhere
// (pushedMessages reads them): Gitea reads those commits for references as
// it reads a push's (services/repository/push.go pushUpdateBranch,
// pushNewBranch).
var picksUp = []string{"repoUpdateBranch", "repoUpdatePullRequest", "repoMergeUpstream", "repoCreateBranch"}

// issueNum finds what a reference names as issueRef does: the owner and name
// before it, if any, and the number.
var issueNum = regexp.MustCompile(`(?:([0-9A-Za-z_.-]+)/([0-9A-Za-z_.-]+))?(?:[#!]|/(?:issues|pulls)/\+?)([0-9]+)`)

// issueNamed returns the first reference in texts that Gitea may resolve to
// an issue, as owner/name#N (a bare one in repository full, where the
// commits land), "" for none: every one Gitea does not show as a pull
// request, which a commit never closes (UpdateIssuesCommit), or as missing
// from a repository whose own issues the caller sees, or without issues
// (getIssueFromRef finds none), at most maxNamed read.
func (x *executor) issueNamed(ctx context.Context, texts []any, full string) string {
	seen := map[string]bool{}
	for _, t := range texts {
		s, _ := t.(string)
		for _, m := range issueNum.FindAllStringSubmatch(breaksJoined(s), -1) {
			owner, name, _ := strings.Cut(full, "/")
			if m[1] != "" {
				owner, name = m[1], m[2]
			}
			ref := owner + "/" + name + "#" + m[3]
			if seen[ref] {
				continue
			}
			if seen[ref] = true; len(seen) > maxNamed {
				return ref
			}
			var is struct {
				Pull *struct{} `json:"pull_request"`
			}
			var r struct {
				Tracker   *struct{} `json:"internal_tracker"`
				HasIssues *bool     `json:"has_issues"`
			}
			switch x.get(ctx, "issueGetIssue", map[string]string{"owner": owner, "repo": name, "index": m[3]}, &is) {
			case http.StatusOK:
				if is.Pull != nil {
					continue
				}
			case http.StatusNotFound: // no such issue (a fork's, of its parent's merge commit "(#N)"), where the caller sees the repository's own, or it has none
				if seen[owner+"/"+name] || x.live(ctx, "repoGet", map[string]string{"owner": owner, "repo": name}, &r) && (r.Tracker != nil || r.HasIssues != nil && !*r.HasIssues) {
					seen[owner+"/"+name] = true // read once
					continue
				}
			}
			return ref
		}
	}
	return ""
}

// maxNamed bounds the references (and repositories) issueNamed reads: more
// are refused.
const maxNamed = 100

// issuesOutside returns why deleting the repository of params reaches
// outside p's repositories, or "": Gitea deletes its issues and pull requests
// as deleting each one does, with their dependency links
// (services/issue/issue.go DeleteIssuesByRepoID, deleteIssue), and the
// cross-references their texts made in other repositories' issues
// (services/repository/delete.go, Comment{RefRepoID}). Read live, every page:
// the titles and descriptions, the comments, and each one's links.
func (x *executor) issuesOutside(ctx context.Context, p *profile, params map[string]string) string {
	repo := map[string]string{"owner": params["owner"], "repo": params["repo"]}
	type text struct {
		Number int64  `json:"number"`
		Title  string `json:"title"`
		Body   string `json:"body"`
	}
	issues, ok := allPages[text](ctx, x, "issueListIssues", repo, url.Values{"state": {"all"}})
	comments, ok2 := allPages[text](ctx, x, "issueGetRepoComments", repo, nil)
	if !ok || !ok2 {
		return fmt.Sprintf("cannot read from Gitea every issue and comment of %s/%s, whose dependency links and cross-references its deletion deletes; refusing", repo["owner"], repo["repo"])
	}
	var texts []any
	for _, t := range append(issues, comments...) {
		texts = append(texts, t.Title, t.Body)
	}
	if ref := p.refOutside(texts); ref != "" {
		return fmt.Sprintf("deleting %s/%s deletes the cross-references its issues and comments made, and one references %q, outside the repositories of %s", repo["owner"], repo["repo"], ref, p.Name)
	}
	for _, is := range issues {
		switch linked, ok := x.linkedOutside(ctx, p, map[string]string{"owner": repo["owner"], "repo": repo["repo"], "index": strconv.FormatInt(is.Number, 10)}); {
		case !ok:
			return fmt.Sprintf("cannot read from Gitea every issue #%d of %s/%s depends on or blocks, whose link the repository's deletion deletes; refusing", is.Number, repo["owner"], repo["repo"])
		case linked != "":
			return fmt.Sprintf("deleting %s/%s deletes the dependency link of its #%d with %s, outside the repositories of %s", repo["owner"], repo["repo"], is.Number, linked, p.Name)
		}
	}
	return ""
}
