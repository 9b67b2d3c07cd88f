package main

// The per-call policy decision (README, "Execution profiles"): which
// canonical operation one call needs (permRules, argRules, each with its
// examples), what else its body would do (effectRules), which repositories it
// reaches (the allowlist), and decide, which puts them together with the
// active profile through permitted (profile.go), the one rule every policy
// question asks.
// It is pure: it never calls Gitea (the executor brings the live reads) and
// fails closed: an operation no rule maps, or a body it cannot judge, is
// denied with the reason.

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// opInfo identifies one operation of Gitea's OpenAPI document.
type opInfo struct {
	ID     string // operationId, e.g. repoMergePullRequest
	Method string // upper-case HTTP method
	Route  string // route template under /api/v1, e.g. /repos/{owner}/{repo}/pulls/{index}/merge
}

// permRule maps operations to the canonical operation they require. The first
// matching rule wins: a rule that matches an operation a later rule also
// matches says why it comes first (precedes), and TestPermRulesOrder proves
// every such overlap in the document is stated. A rule matches when its
// method (if set) matches and the operationId is in ids or the route contains
// one of routes ("^" anchors a fragment at the start); a rule with neither
// matches every route.
type permRule struct {
	perm     string
	method   string
	ids      []string
	routes   []string
	examples []string // operationIds this rule must map (TestPermRules)
	precedes string   // why it sits before the later rules it shadows, naming each (TestPermRulesOrder)
}

// permRules covers every operation of Gitea 1.26.0's OpenAPI document (TestPermRulesCoverDocument).
// An operation no rule matches requires nothing that can be granted: it is denied.
var permRules = []permRule{
	{perm: "gitea.read", method: "GET", examples: []string{"repoGetPullRequest", "userGetCurrent", "adminGetAllOrgs"},
		precedes: "every GET is a read whatever its route: before every rule below, which judge writes"},
	{perm: "gitea.query", ids: []string{"renderMarkdown", "renderMarkdownRaw", "renderMarkup", "repoGetFileContentsPost"},
		examples: []string{"renderMarkup", "repoGetFileContentsPost"}},
	{perm: "gitea.admin.system", routes: []string{"/hooks/git/"}, examples: []string{"repoEditGitHook", "repoDeleteGitHook"},
		precedes: "repository git hooks are scripts Gitea runs on the server: before gitea.webhook.write, whose /hooks would take them"},
	{perm: "gitea.admin.user", routes: []string{"^/admin/users"}, examples: []string{"adminCreateUser", "adminCreatePublicKey", "adminCreateRepo", "adminRenameUser"},
		precedes: "an administrator's acts on users (their keys, organizations, badges) are user administration: before gitea.admin.system's ^/admin/ and gitea.repo.admin's /keys/"},
	{perm: "gitea.admin.system", routes: []string{"^/admin/"},
		examples: []string{"adminCronRun", "adminCreateHook", "adminCreateRunnerRegistrationToken", "adminAdoptRepository", "deleteAdminRunner"},
		precedes: "the rest of /admin is site administration, instance runners, their registration tokens and system webhooks included: before gitea.token.create, gitea.webhook.write and gitea.actions.write"},
	{perm: "gitea.token.create", routes: []string{"/registration-token"},
		ids:      []string{"userCreateToken", "userCreateOAuth2Application", "userUpdateOAuth2Application", "userCurrentPostKey", "repoCreateKey"},
		examples: []string{"userCreateToken", "repoCreateRunnerRegistrationToken", "orgCreateRunnerRegistrationToken", "userUpdateOAuth2Application", "repoCreateKey"},
		precedes: "minting a credential is one grant wherever it is minted: before gitea.actions.write (runner registration tokens), gitea.user.settings (OAuth2 applications, a user's runner token) and gitea.org.admin (an organization's runner token)"},
	{perm: "gitea.webhook.write", routes: []string{"/hooks"}, examples: []string{"repoCreateHook", "repoTestHook", "orgEditHook", "userDeleteHook"},
		precedes: "webhooks are one grant whoever owns them: before gitea.user.settings (^/user/) and gitea.org.admin (^/orgs)"},
	{perm: "gitea.actions.write", routes: []string{"/actions/"},
		examples: []string{"updateRepoSecret", "ActionsDispatchWorkflow", "rerunWorkflowJob", "deleteArtifact", "createOrgVariable", "deleteUserRunner"},
		precedes: "Actions secrets, variables and runners are one grant whoever owns them: before gitea.user.settings (^/user/) and gitea.org.admin (^/orgs)"},
	{perm: "gitea.pr.merge", routes: []string{"/pulls/{index}/merge"}, examples: []string{"repoMergePullRequest", "repoCancelScheduledAutoMerge"}},
	{perm: "gitea.pr.create", ids: []string{"repoCreatePullRequest"}, routes: []string{"/requested_reviewers"},
		examples: []string{"repoCreatePullRequest", "repoCreatePullReviewRequests", "repoDeletePullReviewRequests"}},
	{perm: "gitea.pr.comment", routes: []string{"/pulls/comments/"}, examples: []string{"repoResolvePullReviewComment", "repoUnresolvePullReviewComment"},
		precedes: "resolving a review comment is part of reviewing: before gitea.issue.comment's /comments"},
	{perm: "gitea.pr.review", ids: []string{"repoDeletePullReview"}, examples: []string{"repoDeletePullReview"}},
	{perm: "gitea.branch.push", ids: []string{"repoUpdatePullRequest", "repoUpdateBranch", "repoMergeUpstream"},
		examples: []string{"repoUpdatePullRequest", "repoUpdateBranch", "repoMergeUpstream"}},
	{perm: "gitea.issue.create", ids: []string{"issueCreateIssue"}, examples: []string{"issueCreateIssue"}},
	{perm: "gitea.issue.delete", ids: []string{"issueDelete"}, examples: []string{"issueDelete"}},
	{perm: "gitea.issue.comment", routes: []string{"/comments", "/reactions"},
		examples: []string{"issueCreateComment", "issueEditComment", "issueDeleteCommentDeprecated", "issueCreateIssueCommentAttachment", "issuePostCommentReaction", "issuePostIssueReaction"},
		precedes: "comments and reactions on an issue are not edits of it: before gitea.issue.edit's /issues/{index}/"},
	{perm: "gitea.issue.label", routes: []string{"/issues/{index}/labels"}, examples: []string{"issueAddLabel", "issueReplaceLabels", "issueClearLabels", "issueRemoveLabel"},
		precedes: "an issue's labels are labelling, not editing: before gitea.issue.edit's /issues/{index}/"},
	{perm: "gitea.issue.manage", routes: []string{"^/repos/{owner}/{repo}/labels", "^/repos/{owner}/{repo}/milestones"},
		examples: []string{"issueCreateLabel", "issueDeleteLabel", "issueCreateMilestone", "issueEditMilestone"}},
	{perm: "gitea.issue.edit", routes: []string{"/issues/{index}/"},
		examples: []string{"issueEditIssueDeadline", "issueCreateIssueAttachment", "issueCreateIssueDependencies", "issueLockIssue", "pinIssue", "issueAddSubscription", "issueAddTime", "issueStartStopWatch"},
		precedes: "a subscription to one issue belongs with the issue: before gitea.user.settings' /subscription"},
	{perm: "gitea.branch.create", ids: []string{"repoCreateBranch"}, examples: []string{"repoCreateBranch"}},
	{perm: "gitea.branch.delete", ids: []string{"repoDeleteBranch", "repoRenameBranch"}, examples: []string{"repoDeleteBranch", "repoRenameBranch"}},
	{perm: "gitea.repo.commit", ids: []string{"repoCreateFile", "repoUpdateFile", "repoDeleteFile", "repoChangeFiles", "repoApplyDiffPatch"},
		examples: []string{"repoCreateFile", "repoUpdateFile", "repoDeleteFile", "repoChangeFiles", "repoApplyDiffPatch"}},
	{perm: "gitea.release.write", routes: []string{"/releases", "/tags"},
		examples: []string{"repoCreateRelease", "repoDeleteReleaseByTag", "repoEditReleaseAttachment", "repoCreateTag", "repoDeleteTag"}},
	{perm: "gitea.repo.status", routes: []string{"/statuses/"}, examples: []string{"repoCreateStatus"}},
	{perm: "gitea.wiki.write", routes: []string{"/wiki/"}, examples: []string{"repoCreateWikiPage", "repoEditWikiPage", "repoDeleteWikiPage"}},
	{perm: "gitea.repo.create", ids: []string{"createCurrentUserRepo", "createOrgRepo", "createOrgRepoDeprecated", "repoMigrate", "generateRepo", "createFork"},
		examples: []string{"createCurrentUserRepo", "createOrgRepo", "createOrgRepoDeprecated", "repoMigrate", "generateRepo", "createFork"},
		precedes: "creating a repository is one grant whoever owns it: before gitea.user.settings (^/user/) and gitea.org.admin (^/orgs)"},
	{perm: "gitea.package.write", routes: []string{"^/packages/"}, examples: []string{"deletePackage", "linkPackage", "unlinkPackage"}},
	{perm: "gitea.user.settings", routes: []string{"^/user/", "/notifications", "/subscription"}, ids: []string{"userDeleteAccessToken"},
		examples: []string{"updateUserSettings", "userAddEmail", "userCurrentDeleteKey", "userCurrentPutStar", "userDeleteOAuth2Application", "notifyReadList", "notifyReadRepoList", "userCurrentPutSubscription", "userDeleteAccessToken"},
		precedes: "the caller's own keys and avatar are account settings: before gitea.repo.admin's /keys/ and /avatar"},
	{perm: "gitea.org.admin", routes: []string{"^/orgs", "^/teams/"},
		examples: []string{"orgCreate", "orgDelete", "orgEditLabel", "orgCreateTeam", "orgAddTeamMember", "orgAddTeamRepository", "organizationBlockUser"},
		precedes: "a team's members and repositories are organization administration: before gitea.repo.admin's /teams/"},
	{perm: "gitea.repo.admin", routes: []string{"/branch_protections", "/tag_protections", "/collaborators/", "/topics", "/push_mirrors", "/teams/", "/transfer", "/keys/", "/avatar", "/dismissals", "/undismissals"},
		ids:      []string{"repoEdit", "repoDelete", "repoMirrorSync"},
		examples: []string{"repoEdit", "repoDelete", "repoMirrorSync", "repoTransfer", "acceptRepoTransfer", "repoCreateBranchProtection", "repoAddCollaborator", "repoUpdateTopics", "repoAddPushMirror", "repoAddTeam", "repoDeleteKey", "repoUpdateAvatar", "repoDismissPullReview", "repoUnDismissPullReview"}},
}

// matches reports whether rule r applies to op.
func (r *permRule) matches(op opInfo) bool {
	if r.method != "" && r.method != op.Method {
		return false
	}
	if len(r.ids) == 0 && len(r.routes) == 0 {
		return true
	}
	if slices.Contains(r.ids, op.ID) {
		return true
	}
	for _, frag := range r.routes {
		if anchored, ok := strings.CutPrefix(frag, "^"); ok && strings.HasPrefix(op.Route, anchored) ||
			!ok && strings.Contains(op.Route, frag) {
			return true
		}
	}
	return false
}

// argRule picks the permission of an operation from one request body field.
// values maps each accepted value ("" = absent or null) to the permission it
// requires; any other value, or a value that is not a string, is denied.
type argRule struct {
	ids      []string
	field    string
	values   map[string]string
	examples []argExample // checked by TestArgRules
}

// argExample is one request body and the permission it must require ("" = denied).
type argExample struct {
	args map[string]any
	want string
}

// argRules run before permRules for the operations they name.
var argRules = []argRule{
	{ids: []string{"repoEditPullRequest"}, field: "state",
		values: map[string]string{"closed": "gitea.pr.close", "open": "gitea.pr.create", "": "gitea.pr.create"},
		examples: []argExample{
			{map[string]any{"state": "closed"}, "gitea.pr.close"},
			{map[string]any{"body": map[string]any{"state": "closed"}}, "gitea.pr.close"},
			{map[string]any{"title": "t", "body": "closed"}, "gitea.pr.create"},
			{map[string]any{"state": "open"}, "gitea.pr.create"},
			{map[string]any{"state": nil}, "gitea.pr.create"},
			{map[string]any{"state": "Closed"}, ""},
			{map[string]any{"state": true}, ""},
			{map[string]any{"state": "open", "body": map[string]any{"state": "closed"}}, ""},
		}},
	{ids: []string{"issueEditIssue"}, field: "state",
		values: map[string]string{"closed": "gitea.issue.close", "open": "gitea.issue.edit", "": "gitea.issue.edit"},
		examples: []argExample{
			{map[string]any{"state": "closed"}, "gitea.issue.close"},
			{map[string]any{"title": "t"}, "gitea.issue.edit"},
			{map[string]any{"body": map[string]any{"state": "open"}}, "gitea.issue.edit"},
			{map[string]any{"state": "done"}, ""},
		}},
	{ids: []string{"repoCreatePullReview", "repoSubmitPullReview"}, field: "event",
		values: map[string]string{"APPROVED": "gitea.pr.approve", "REQUEST_CHANGES": "gitea.pr.request_changes",
			"COMMENT": "gitea.pr.comment", "PENDING": "gitea.pr.review", "": "gitea.pr.review"},
		examples: []argExample{
			{map[string]any{"event": "APPROVED"}, "gitea.pr.approve"},
			{map[string]any{"body": map[string]any{"event": "REQUEST_CHANGES"}}, "gitea.pr.request_changes"},
			{map[string]any{"event": "COMMENT", "body": "looks fine"}, "gitea.pr.comment"},
			{map[string]any{"event": "PENDING"}, "gitea.pr.review"},
			{nil, "gitea.pr.review"},
			{map[string]any{"event": "approved"}, ""},
			{map[string]any{"event": "REQUEST_REVIEW"}, ""},
			{map[string]any{"event": 1}, ""},
		}},
}

// effectRule names a request body field whose value widens what a write does:
// when the operation is one of ids and match holds for the field's value (for
// field "", for the arguments whole), the call also needs perm. Fields of the mutating operations' body schemas that
// need no rule, and why:
//   - the operation already needs the strongest canonical operation of its
//     area: every field of repoEdit (private, archived, default_branch, merge
//     styles), repoAddCollaborator's permission, repoTransfer's team_ids,
//     branch and tag protections, push mirrors, deploy keys' read_only (already
//     gitea.repo.admin or gitea.token.create); orgCreateTeam and orgEditTeam's
//     permission, units and includes_all_repositories, orgCreate and orgEdit's
//     visibility (gitea.org.admin, and denied outright under repositories, since
//     their paths name no repository); adminCreateUser's visibility and
//     restricted, adminDeleteUser's purge (gitea.admin.user); access token
//     scopes (gitea.token.create, bounded by the caller's own rights);
//   - metadata of the write itself: commit author, committer, dates, signoff
//     (a commit's message, the Signed-off-by line signoff adds to it, and a
//     merge's own message have rules below: their closing
//     keywords act once they reach a default branch); a new issue's or pull request's own labels, assignees,
//     milestone, reviewers and closed flag; release draft and prerelease;
//   - checked by Gitea again when it acts: merge_when_checks_succeed (the
//     scheduled merge passes branch protection when it happens), the merge
//     styles of do, head_commit_id; issueAddTime's user_name (repository
//     admins only); migrate's clone_addr from the server's disk
//     (allow_import_local);
//   - bodies that name another repository (transfer, fork, generate, migrate,
//     issue dependencies) are judged by repoTargets; a write's landing branch
//     by landsOn; delete_branch_after_merge left out (the repository's default),
//     and repoEdit's private under repositories (Gitea gives the forks a
//     changed visibility), by the executor's live checks.
type effectRule struct {
	ids      []string
	field    string
	match    func(any) bool
	perm     string
	why      string          // what the value does, for a refusal's reason
	instead  string          // what reaches the goal without perm, for a refusal's reason ("" for nothing)
	examples []effectExample // checked by TestEffectRules
}

// effectExample is one request body and whether the rule must match it.
type effectExample struct {
	body  map[string]any
	match bool
}

// isTrue, nonEmpty and namesIssue are effectRule matchers; namesIssue
// matches text naming an issue or pull request as Gitea's references do
// (#N, owner/name#N, !N, an .../issues/N or .../pulls/N address), whatever
// keyword (configurable in Gitea) comes before it.
func isTrue(v any) bool { return v == true }

func nonEmpty(v any) bool { s, ok := v.(string); return ok && s != "" }

func namesIssue(v any) bool { s, ok := v.(string); return ok && issueRef.MatchString(s) }

// editsBesideClose matches arguments that close (state "closed", as bodyField
// reads it) and set another body field: Gitea applies every field before it
// changes the state, and keeps them when the close fails.
func editsBesideClose(v any) bool {
	args, _ := v.(map[string]any)
	body, _ := args["body"].(map[string]any)
	if state, _ := bodyField(args, "state"); state != "closed" {
		return false
	}
	for k := range body {
		if k != "state" {
			return true
		}
	}
	return false
}

// signedOff returns the name and address of the Signed-off-by line (and
// the co-author trailers) Gitea writes into a contents write's message, as
// its makeGitUserSignature takes them from the body: the committer's, else
// the author's ("" where neither names one: the caller's, read live), and
// whether it writes such a line: signoff, or a committer and an author both
// named (Gitea adds Co-authored-by trailers when it signs the commit).
func signedOff(body map[string]any) (name, email string, writes bool) {
	committer, _ := body["committer"].(map[string]any)
	author, _ := body["author"].(map[string]any)
	for _, id := range []map[string]any{committer, author} {
		n, _ := id["name"].(string)
		e, _ := id["email"].(string)
		name, email = cmp.Or(name, n), cmp.Or(email, e)
	}
	return name, email, body["signoff"] == true || committer != nil && author != nil
}

// signsOffIssue matches the arguments of a contents write whose Signed-off-by
// line, with the name and address the body gives, names an issue.
func signsOffIssue(v any) bool {
	args, _ := v.(map[string]any)
	body, _ := args["body"].(map[string]any)
	name, email, writes := signedOff(body)
	return writes && namesIssue(name+" <"+email+">")
}

// issueRef finds an issue or pull request reference in text.
var issueRef = regexp.MustCompile(`[#!][0-9]|/(issues|pulls)/\+?[0-9]`)

// contentsOps write files through the contents API.
var contentsOps = []string{"repoCreateFile", "repoUpdateFile", "repoDeleteFile", "repoChangeFiles", "repoApplyDiffPatch"}

// effectRules are checked by decide once the operation's own permission is granted.
var effectRules = []effectRule{
	{ids: []string{"repoEditPullRequest"}, match: editsBesideClose, perm: "gitea.pr.create",
		why: "state: closed with another field edits the pull request as well: Gitea applies every field before it closes it, and keeps them when the close fails",
		examples: []effectExample{{map[string]any{"body": map[string]any{"state": "closed", "title": "t"}}, true},
			{map[string]any{"body": map[string]any{"state": "closed", "assignees": nil}}, true}, {map[string]any{"body": map[string]any{"state": "closed"}}, false}}},
	{ids: []string{"repoEditPullRequest"}, field: "labels", match: func(v any) bool { return v != nil }, perm: "gitea.issue.label", // null: Gitea leaves them
		why:      "labels replaces the pull request's labels, an empty list clearing them (Gitea's EditPullRequest, routers/api/v1/repo/pull.go, calls ReplaceIssueLabels): that is labelling",
		examples: []effectExample{{map[string]any{"labels": []any{}}, true}, {map[string]any{"title": "t", "labels": []any{1}}, true}, {map[string]any{"title": "t", "labels": nil}, false}, {map[string]any{"title": "t"}, false}}},
	{ids: []string{"issueEditIssue"}, match: editsBesideClose, perm: "gitea.issue.edit",
		why: "state: closed with another field edits the issue as well: Gitea applies every field before it closes it, and keeps them when the close fails",
		examples: []effectExample{{map[string]any{"body": map[string]any{"state": "closed", "due_date": "2030-01-01T00:00:00Z"}}, true},
			{map[string]any{"body": map[string]any{"state": "closed"}}, false}}},
	{ids: []string{"repoMergePullRequest"}, field: "force_merge", match: isTrue, perm: "gitea.pr.force_merge",
		why: "force_merge: true merges past branch protection (required approvals and status checks)",
		examples: []effectExample{{map[string]any{"do": "merge", "force_merge": true}, true},
			{map[string]any{"do": "merge", "force_merge": false}, false}, {map[string]any{"do": "merge"}, false}}},
	{ids: []string{"repoMergePullRequest"}, field: "delete_branch_after_merge", match: isTrue, perm: "gitea.branch.delete",
		why: "delete_branch_after_merge: true deletes the head branch",
		examples: []effectExample{{map[string]any{"do": "squash", "delete_branch_after_merge": true}, true},
			{map[string]any{"do": "squash", "delete_branch_after_merge": false}, false}}},
	{ids: []string{"repoMergePullRequest"}, field: "do", match: func(v any) bool { return v == "manually-merged" }, perm: "gitea.pr.close",
		why: "do: manually-merged marks the pull request merged without merging and without any check: it closes it",
		examples: []effectExample{{map[string]any{"do": "manually-merged", "merge_commit_id": "abc"}, true},
			{map[string]any{"do": "rebase"}, false}}},
	{ids: []string{"repoMergePullRequest"}, field: "merge_message_field", match: namesIssue, perm: "gitea.issue.close",
		why:     "merge_message_field is the merger's own commit message, and Gitea closes the issues it names after a closing keyword (closes #N, closes owner/name#N in any repository)",
		instead: "leave merge_message_field out (Gitea writes its own message) or name no issue in it",
		examples: []effectExample{{map[string]any{"do": "merge", "merge_message_field": "Closes #1"}, true},
			{map[string]any{"merge_message_field": "fixes alice/secret#3"}, true}, {map[string]any{"merge_message_field": "see http://gitea/alice/demo/pulls/4"}, true},
			{map[string]any{"merge_message_field": "resolves !7"}, true}, {map[string]any{"merge_message_field": "closes [x](/alice/demo/issues/+7)"}, true}, {map[string]any{"do": "merge", "merge_message_field": "release 1.2"}, false}}},
	{ids: []string{"repoMergePullRequest"}, field: "merge_title_field", match: namesIssue, perm: "gitea.issue.close",
		why:      "merge_title_field is the merger's own commit title, and Gitea closes the issues it names after a closing keyword (fixes #N)",
		instead:  "leave merge_title_field out (Gitea writes its own title) or name no issue in it",
		examples: []effectExample{{map[string]any{"do": "squash", "merge_title_field": "fixes #2"}, true}, {map[string]any{"merge_title_field": "everyday"}, false}}},
	{ids: contentsOps, field: "message", match: namesIssue, perm: "gitea.issue.close",
		why:     "message is the commit's message, and Gitea closes the issues it names after a closing keyword once the commit reaches the default branch (closes #N, closes owner/name#N, or an issue's address)",
		instead: "leave the issue out of the message and name it in the pull request's description, where a closing keyword closes it when the pull request is merged",
		examples: []effectExample{{map[string]any{"new_branch": "topic", "message": "fixes #4"}, true},
			{map[string]any{"message": "closes http://gitea/alice/demo/issues/4"}, true}, {map[string]any{"message": "bump to 1.2"}, false}, {map[string]any{}, false}}},
	{ids: contentsOps, match: signsOffIssue, perm: "gitea.issue.close",
		why: "signoff: true writes the committer's name and address (the author's where it names no committer) into the commit's message as a Signed-off-by line, and Gitea closes the issues it names after a closing keyword as it does the message's",
		examples: []effectExample{{map[string]any{"body": map[string]any{"signoff": true, "committer": map[string]any{"name": "closes #4", "email": "b@example.com"}}}, true},
			{map[string]any{"body": map[string]any{"signoff": true, "author": map[string]any{"name": "Bob", "email": "fixes #4 x"}}}, true},
			{map[string]any{"body": map[string]any{"committer": map[string]any{"name": "closes #4"}, "author": map[string]any{"name": "Bob"}}}, true},
			{map[string]any{"body": map[string]any{"committer": map[string]any{"name": "closes #4"}}}, false},
			{map[string]any{"body": map[string]any{"signoff": true, "committer": map[string]any{"name": "Bob", "email": "b@example.com"}}}, false}}},
	{ids: contentsOps, field: "new_branch", match: nonEmpty, perm: "gitea.branch.create", why: "new_branch creates a branch",
		examples: []effectExample{{map[string]any{"branch": "main", "new_branch": "topic"}, true}, {map[string]any{"branch": "topic"}, false},
			{map[string]any{"new_branch": ""}, false}}},
	{ids: contentsOps, field: "force_push", match: isTrue, perm: "gitea.branch.delete",
		why:      "force_push: true replaces an existing branch, discarding its commits",
		examples: []effectExample{{map[string]any{"new_branch": "topic", "force_push": true}, true}, {map[string]any{"force_push": false}, false}}},
	{ids: []string{"repoUpdateBranch"}, field: "force", match: isTrue, perm: "gitea.branch.delete",
		why:      "force: true moves the branch to a commit that does not descend from it, discarding its commits",
		examples: []effectExample{{map[string]any{"new_commit_id": "abc", "force": true}, true}, {map[string]any{"new_commit_id": "abc"}, false}}},
	{ids: []string{"repoUpdatePullRequest"}, field: "style", match: func(v any) bool { return v == "rebase" }, perm: "gitea.branch.delete",
		why:      "style=rebase rebases the head branch onto the base and force-pushes it, discarding its commits",
		examples: []effectExample{{map[string]any{"style": "rebase"}, true}, {map[string]any{"style": "merge"}, false}, {map[string]any{}, false}}},
	{ids: []string{"adminEditUser"}, field: "admin", match: isTrue, perm: "gitea.admin.system", why: "admin: true makes a site administrator",
		examples: []effectExample{{map[string]any{"admin": true}, true}, {map[string]any{"admin": false, "full_name": "x"}, false}}},
	{ids: []string{"adminEditUser"}, field: "allow_git_hook", match: isTrue, perm: "gitea.admin.system",
		why:      "allow_git_hook: true lets the user write server-side git hooks",
		examples: []effectExample{{map[string]any{"allow_git_hook": true}, true}, {map[string]any{"allow_git_hook": false}, false}}},
	{ids: []string{"adminEditUser"}, field: "allow_import_local", match: isTrue, perm: "gitea.admin.system",
		why:      "allow_import_local: true lets the user import repositories from the server's disk",
		examples: []effectExample{{map[string]any{"allow_import_local": true}, true}, {map[string]any{}, false}}},
	{ids: []string{"userBlockUser"}, match: func(any) bool { return true }, perm: "gitea.repo.admin",
		why:      "blocking a user also removes them as a collaborator of every repository you own and cancels the repository transfers between you (and unassigns them from your issues)",
		examples: []effectExample{{map[string]any{"username": "carol"}, true}, {map[string]any{"username": "carol", "note": "spam"}, true}}},
	{ids: []string{"generateRepo"}, field: "git_hooks", match: isTrue, perm: "gitea.admin.system",
		why:      "git_hooks: true copies the template's server-side git hooks",
		examples: []effectExample{{map[string]any{"owner": "a", "name": "b", "git_hooks": true}, true}, {map[string]any{"owner": "a", "name": "b", "git_content": true}, false}}},
	{ids: []string{"generateRepo"}, field: "webhooks", match: isTrue, perm: "gitea.webhook.write",
		why:      "webhooks: true copies the template's webhooks",
		examples: []effectExample{{map[string]any{"owner": "a", "name": "b", "webhooks": true}, true}, {map[string]any{"owner": "a", "name": "b"}, false}}},
}

// effectsOf lists the effectRules by operation id, in table order, so that
// decide reads only those of its operation (BenchmarkDecide).
var effectsOf = byID(effectRules, func(r *effectRule) []string { return r.ids })

// matches reports whether r applies to operation id with args: the field's
// value in the body, or, as bodyField reads it, beside the body, matches.
func (r *effectRule) matches(id string, args map[string]any) bool {
	if !slices.Contains(r.ids, id) {
		return false
	}
	if r.field == "" {
		return r.match(args)
	}
	body, _ := args["body"].(map[string]any)
	v, inBody := body[r.field]
	return inBody && r.match(v) || r.match(args[r.field])
}

// landsOn maps each operation that writes to a branch to where the branch is
// named: the first non-empty body field, or "{param}" a path parameter; none
// (Gitea's default) is the repository's default branch. A write landing on
// the default branch is landing code without review: it also needs
// gitea.pr.merge unless the profile sets allow_default_branch_writes (the
// executor reads the default branch live). repoUpdatePullRequest lands on the
// pull request's head, read live as well.
var landsOn = map[string][]string{
	"repoCreateFile": {"new_branch", "branch"}, "repoUpdateFile": {"new_branch", "branch"}, "repoDeleteFile": {"new_branch", "branch"},
	"repoChangeFiles": {"new_branch", "branch"}, "repoApplyDiffPatch": {"new_branch", "branch"},
	"repoUpdateBranch": {"{branch}"}, "repoMergeUpstream": {"branch"},
}

// landingBranch returns the branch a write of operation id lands on ("" = the
// default branch) and whether it writes to a branch named by its request.
func landingBranch(id string, args map[string]any, params map[string]string) (string, bool) {
	from, ok := landsOn[id]
	if !ok {
		return "", false
	}
	body, _ := args["body"].(map[string]any)
	return strings.TrimPrefix(pick(from, body, params, ""), "refs/heads/"), true
}

// repoTarget says where the body of an operation names a repository it
// creates, moves or links to: owner and name are candidate sources, the first
// non-empty wins: a body field, "{param}" a path parameter, "@" the caller's
// login, "#field" a body field naming the owner by id (set and not 0, it
// cannot be judged: refused). With repositories set, the target must be
// among them.
type repoTarget struct {
	ids         []string
	owner, name []string
	what        string
}

// repoTargets are checked by repoDenied (examples in TestRepoTargets).
var repoTargets = []repoTarget{
	{[]string{"repoTransfer"}, []string{"new_owner"}, []string{"{repo}"}, "transfers the repository to"},
	{[]string{"repoEdit"}, []string{"{owner}"}, []string{"name", "{repo}"}, "renames the repository to"},
	{[]string{"createFork"}, []string{"organization", "@"}, []string{"name", "{repo}"}, "forks into"},
	{[]string{"generateRepo"}, []string{"owner"}, []string{"name"}, "generates"},
	{[]string{"repoMigrate"}, []string{"repo_owner", "#uid", "@"}, []string{"repo_name"}, "migrates into"},
	{[]string{"createCurrentUserRepo"}, []string{"@"}, []string{"name"}, "creates"},
	{[]string{"createOrgRepo", "createOrgRepoDeprecated"}, []string{"{org}"}, []string{"name"}, "creates"},
	{[]string{"adminCreateRepo"}, []string{"{username}"}, []string{"name"}, "creates"},
	{[]string{"issueCreateIssueDependencies", "issueRemoveIssueDependencies", "issueCreateIssueBlocking", "issueRemoveIssueBlocking"},
		[]string{"owner"}, []string{"repo"}, "links an issue of"},
}

// targetsOf lists repoTargets by operation id, so that repoDenied looks up
// one map rather than every row (BenchmarkDecide); it judges the first.
var targetsOf = byID(repoTargets, func(t *repoTarget) []string { return t.ids })

// pick returns the first non-empty value of sources (see repoTarget); for a
// "#field" source set, the source itself.
func pick(sources []string, body map[string]any, params map[string]string, login string) string {
	for _, src := range sources {
		v := login
		if p, ok := strings.CutPrefix(src, "{"); ok {
			v = params[strings.TrimSuffix(p, "}")]
		} else if id, ok := strings.CutPrefix(src, "#"); ok {
			if v = ""; body[id] != nil && fmt.Sprint(body[id]) != "0" {
				v = src
			}
		} else if src != "@" {
			v, _ = body[src].(string)
		}
		if v != "" {
			return v
		}
	}
	return ""
}

// repoFree lists the routes that name no single repository yet reveal no
// repository data, with the reason; under repositories every other such route
// is denied (TestRepoFreeRoutes).
var repoFree = map[string]string{
	"getVersion":                   "Gitea's version",
	"userGetCurrent":               "the caller's own account",
	"getUserSettings":              "the caller's own settings",
	"getGeneralAPISettings":        "instance settings",
	"getGeneralAttachmentSettings": "instance settings",
	"getGeneralRepositorySettings": "instance settings (defaults, no repository)",
	"getGeneralUISettings":         "instance settings",
	"getSigningKey":                "the instance's public signing key",
	"getSigningKeySSH":             "the instance's public signing key",
	"listGitignoresTemplates":      "templates shipped with Gitea",
	"getGitignoreTemplateInfo":     "templates shipped with Gitea",
	"listLabelTemplates":           "templates shipped with Gitea",
	"getLabelTemplateInfo":         "templates shipped with Gitea",
	"listLicenseTemplates":         "templates shipped with Gitea",
	"getLicenseTemplateInfo":       "templates shipped with Gitea",
	"renderMarkdownRaw":            "renders the text it is given, with no repository context",
	"userGet":                      "a user's profile: counts, no repository",
	"orgGet":                       "an organization's profile, no repository",
}

// resolvePermission returns the canonical operation op requires with args, or
// "" and the reason it cannot be determined.
func resolvePermission(op opInfo, args map[string]any) (perm, reason string) {
	for i := range argRules {
		r := &argRules[i]
		if !slices.Contains(r.ids, op.ID) {
			continue
		}
		v, ok := bodyField(args, r.field)
		if perm, known := r.values[v]; ok && known {
			return perm, ""
		}
		values := slices.DeleteFunc(slices.Sorted(maps.Keys(r.values)), func(k string) bool { return k == "" })
		return "", fmt.Sprintf("%s: %s must be one of %s, given once as a string; nothing was sent", op.ID, r.field, strings.Join(values, ", "))
	}
	for i := range permRules {
		if permRules[i].matches(op) {
			return permRules[i].perm, ""
		}
	}
	return "", fmt.Sprintf("%s %s (%s) maps to no canonical operation; it is denied", op.Method, op.Route, op.ID)
}

// argPerms lists, for each argRule, the permissions of its values, sorted.
var argPerms = sync.OnceValue(func() [][]string {
	out := make([][]string, len(argRules))
	for i, r := range argRules {
		out[i] = slices.Sorted(maps.Values(r.values))
	}
	return out
})

// callPermissions returns the permissions a call of op may require: every
// value of its argRule, or what permRules map it to ("" for none).
func callPermissions(op opInfo) []string {
	for i, r := range argRules {
		if slices.Contains(r.ids, op.ID) {
			return argPerms()[i]
		}
	}
	perm, _ := resolvePermission(op, nil)
	return []string{perm}
}

// repoParams are the path parameter pairs that name a repository in a route.
var repoParams = []struct{ owner, repo, example string }{
	{"{owner}", "{repo}", "/repos/{owner}/{repo}/pulls/{index}/merge"},
	{"{org}", "{repo}", "/teams/{id}/repos/{org}/{repo}"},
	{"{template_owner}", "{template_repo}", "/repos/{template_owner}/{template_repo}/generate"},
	{"{owner}", "{repo_name}", "/packages/{owner}/{type}/{name}/-/link/{repo_name}"},
}

// repoReveals lists routes that name one repository but answer with others:
// under repositories they are denied.
var repoReveals = map[string]string{
	"listForks":                   "lists the repository's forks, which are other repositories",
	"issueListIssueDependencies":  "lists the issues it depends on, which may be in other repositories",
	"issueListBlocks":             "lists the issues it blocks, which may be in other repositories",
	"issueGetCommentsAndTimeline": "lists cross-references, which quote issues and pull requests of other repositories",
}

// crossRef finds the repositories a text references as Gitea's
// cross-references do: owner/name#N, owner/name!N, and .../owner/name/issues/N
// or .../pulls/N addresses, whose N Gitea reads with strconv.ParseInt, so
// "+N" too (FuzzRefOutsideLink). It is looser than Gitea's (no word boundary).
var crossRef = regexp.MustCompile(`([0-9A-Za-z_.-]+)/([0-9A-Za-z_.-]+)(?:[#!][0-9]|/(?:issues|pulls)/\+?[0-9])`)

// hardBreak is a Markdown hard line break (two spaces or a backslash before
// the newline), which Gitea's reference reader (mdstripper) drops.
var hardBreak = regexp.MustCompile(`(?:[ \t]{2,}|\\)\r?\n`)

// breaksJoined returns s, and after it, where s has lines, s with its hard
// line breaks removed, as Gitea's reference reader joins their lines.
func breaksJoined(s string) string {
	if !strings.Contains(s, "\n") {
		return s
	}
	return s + "\n" + hardBreak.ReplaceAllString(s, "")
}

// refOutside returns the first repository outside p's repositories that a
// string anywhere in the body v references (crossRef), or "". Gitea records a
// reference from a comment, an issue or pull request text or a commit
// message in the issue referenced, and closes it after a closing keyword.
func (p *profile) refOutside(v any) string {
	switch v := v.(type) {
	case string:
		for _, m := range crossRef.FindAllStringSubmatch(breaksJoined(v), -1) {
			if !p.allowsRepo(m[1], m[2]) {
				return m[1] + "/" + m[2]
			}
		}
	case map[string]any:
		return p.refOutside(slices.Collect(maps.Values(v)))
	case []any:
		for _, e := range v {
			if r := p.refOutside(e); r != "" {
				return r
			}
		}
	}
	return ""
}

// compareHead returns the repository the head of a comparison names, read as
// Gitea reads "base...head", "base..head" or a head alone: owner/name for
// "owner/name:ref", the path's own repository for a bare ref or its own
// owner, and "" for "owner:ref" naming another owner (a fork Gitea looks up).
func compareHead(spec, owner, repo string) string {
	_, head, ok := strings.Cut(spec, "...")
	if !ok {
		if _, head, ok = strings.Cut(spec, ".."); !ok {
			head = spec
		}
	}
	headOwner, _, named := strings.Cut(head, ":")
	switch o, r, both := strings.Cut(headOwner, "/"); {
	case !named || both && strings.EqualFold(o, owner) && strings.EqualFold(r, repo) || !both && strings.EqualFold(o, owner):
		return owner + "/" + repo
	case both:
		return o + "/" + r
	}
	return ""
}

// repoDenied returns why p's repositories forbid op, or "": every repository
// its path names, the one its body names (repoTargets), and those its texts
// reference (refOutside) must be within them; a route they can never reach
// (unreachable) is denied.
// identity is the caller's login, the owner a fork or new repository gets by default.
func (p *profile) repoDenied(op opInfo, args map[string]any, pathParams map[string]string, identity string) string {
	if p.repoPats == nil {
		return ""
	}
	for _, rp := range repoParams {
		if !strings.Contains(op.Route, rp.owner) || !strings.Contains(op.Route, rp.repo) {
			continue
		}
		owner, repo := pathParams[strings.Trim(rp.owner, "{}")], pathParams[strings.Trim(rp.repo, "{}")]
		if !p.allowsRepo(owner, repo) {
			return fmt.Sprintf("repository %q is outside the repositories of %s", owner+"/"+repo, p.Name)
		}
	}
	if ref := fetchedRef(args, pathParams); ref != "" {
		return fmt.Sprintf("%s names %q: FETCH_HEAD is the commit Gitea last fetched into the repository from another (a pull request's base), outside the repositories of %s", op.ID, ref, p.Name)
	}
	if op.ID == "repoCompareDiff" || op.ID == "repoCreatePullRequest" {
		spec := pathParams["basehead"]
		if body, _ := args["body"].(map[string]any); op.ID == "repoCreatePullRequest" {
			base, _ := body["base"].(string)
			head, _ := body["head"].(string)
			spec = base + ".." + head // as Gitea joins them
		}
		head := compareHead(spec, pathParams["owner"], pathParams["repo"])
		owner, repo, _ := strings.Cut(head, "/")
		switch {
		case head == "":
			return fmt.Sprintf("%s compares with the head %q, in a fork Gitea finds by its owner; name it owner/name:branch for %s to judge", op.ID, spec, p.Name)
		case !p.allowsRepo(owner, repo):
			return fmt.Sprintf("%s compares with the head %q in %q, outside the repositories of %s", op.ID, spec, head, p.Name)
		}
	}
	if why := p.unreachable(op); why != "" {
		return why
	}
	if ref := p.refOutside(args["body"]); ref != "" {
		return fmt.Sprintf("%s's body names %q, outside the repositories of %s: Gitea records a cross-reference there, and a closing keyword closes it", op.ID, ref, p.Name)
	}
	if ts := targetsOf()[op.ID]; ts != nil {
		t := ts[0]
		body, _ := args["body"].(map[string]any)
		owner := pick(t.owner, body, pathParams, identity)
		if id, ok := strings.CutPrefix(owner, "#"); ok {
			return fmt.Sprintf("%s names its owner by id (%s %v), which %s cannot judge against its repositories; name the owner with %s", op.ID, id, body[id], p.Name, t.owner[0])
		}
		target := owner + "/" + pick(t.name, body, pathParams, identity)
		if owner, repo, _ := strings.Cut(target, "/"); !p.allowsRepo(owner, repo) {
			return fmt.Sprintf("%s %s %q, outside the repositories of %s", op.ID, t.what, target, p.Name)
		}
		return ""
	}
	return ""
}

// unreachable returns why p's repositories refuse every call of op whatever
// its arguments, or "": a route that reveals other repositories
// (repoReveals), or one naming no single repository, in its path or its body
// (repoTargets), unless repoFree lists it.
func (p *profile) unreachable(op opInfo) string {
	if p.repoPats == nil {
		return ""
	}
	if what, ok := repoReveals[op.ID]; ok {
		return fmt.Sprintf("%s is limited to its repositories and %s %s", p.Name, op.ID, what)
	}
	named := false
	for _, rp := range repoParams {
		named = named || strings.Contains(op.Route, rp.owner) && strings.Contains(op.Route, rp.repo)
	}
	if _, free := repoFree[op.ID]; !named && !free && targetsOf()[op.ID] == nil {
		return fmt.Sprintf("%s is limited to its repositories and %s %s (%s) names no single repository: it may reveal or touch others", p.Name, op.Method, op.Route, op.ID)
	}
	return ""
}

// decision is the outcome of the policy check for one tool call; its JSON form
// is the permission_report object of a denied call.
type decision struct {
	Allowed            bool   `json:"-"`
	Tool               string `json:"tool"`
	Operation          string `json:"operation"`
	RequiredPermission string `json:"required_permission"`
	Profile            string `json:"profile"`
	Identity           string `json:"identity"`
	Reason             string `json:"reason"`

	Action string `json:"action,omitempty"` // the workflow action, e.g. close_pr
	Infra  bool   `json:"-"`                // denied by the runtime isolation check
}

// kind is the error.kind of a denied call.
func (d *decision) kind() string {
	if d.Infra {
		return "infra_stop"
	}
	return "permission_denied"
}

// decide applies the policy to one call of tool (operation op) by identity, the
// login verified through Gitea ("" if unknown). Without a profile only reads
// are allowed. Mutations also need a known identity that matches the profile's
// authenticated_username when it sets one. Self-approval and self-merge need
// the PR author and are checked by selfActionDenied.
func decide(p *profile, identity, tool string, op opInfo, args map[string]any, pathParams map[string]string) decision {
	d := decision{Tool: tool, Operation: op.ID, Identity: identity, Profile: profileName(p)}
	d.RequiredPermission, d.Reason = resolvePermission(op, args)
	perm := d.RequiredPermission
	if perm != "" {
		d.Allowed, d.Reason = permitted(p, perm)
	}
	if !d.Allowed || p == nil {
		return d
	}
	args = defaultMessage(op.ID, args, pathParams)
	if perm != permRead && identity == "" {
		d.Allowed, d.Reason = false, "authenticated identity unknown; verify it with gitea_whoami before mutating"
	} else if perm != permRead && p.AuthenticatedUsername != "" && !strings.EqualFold(identity, p.AuthenticatedUsername) {
		d.Allowed, d.Reason = false, fmt.Sprintf("identity %q is not %q, the authenticated_username of %s; check its token", identity, p.AuthenticatedUsername, p.Name)
	} else if why := p.repoDenied(op, args, pathParams, identity); why != "" {
		d.Allowed, d.Reason = false, why
	} else {
		for _, r := range effectsOf()[op.ID] {
			if r.matches(op.ID, args) && !p.grants(r.perm) {
				_, why := p.allows(r.perm)
				d.Allowed, d.RequiredPermission, d.Reason = false, r.perm, op.ID+": "+r.why+"; "+why
				if r.instead != "" {
					d.Reason += "; or " + r.instead
				}
				break
			}
		}
	}
	return d
}

// selfActionDenied reports whether account me may not perform perm on a pull
// request by author: approving or merging one's own pull request
// (sameAccount) is denied, and so is either when the caller or the author is
// unknown.
func selfActionDenied(perm string, me, author account) (bool, string) {
	op, _ := normalizeOperation(perm)
	verb := map[string]string{permApprove: "approve", permMerge: "merge"}[op]
	if verb == "" {
		return false, ""
	}
	if me.Login == "" || author.Login == "" {
		return true, fmt.Sprintf("cannot compare the pull request author with the authenticated identity; refusing to %s", verb)
	}
	if sameAccount(me, author) {
		return true, fmt.Sprintf("%q authored this pull request and may not %s it; use a profile with another identity", me.Login, verb)
	}
	return false, ""
}

// pinDenied reports why an approval or merge (operation opID with args) does
// not pin the pull request's live head, whatever the door, or "": unpinned,
// Gitea approves or merges whatever head it has when the request arrives,
// commits pushed after the review included. An approval names the head as
// commit_id (another commit Gitea records as a stale approval, which still
// counts unless branch protection dismisses stale approvals); a pending
// review is not submitted as one, since a submit names no commit and Gitea
// records the head of the moment as current (the approval created with
// commit_id submits the caller's pending review); a merge names the head as
// head_commit_id, which Gitea drops for a scheduled merge.
func pinDenied(opID string, args map[string]any, head string) string {
	body, _ := args["body"].(map[string]any)
	const redo = "read head_sha with gitea_check_pr_eligibility, review that commit and pass it as %s; nothing was sent"
	field := "commit_id"
	switch {
	case opID == "repoMergePullRequest" && body["merge_when_checks_succeed"] == true:
		return "merge_when_checks_succeed: true schedules the merge, and Gitea ignores head_commit_id for a scheduled merge: it merges whatever head the pull request has when its checks pass, commits pushed after the review included; merge without merge_when_checks_succeed, naming the head as head_commit_id; nothing was sent"
	case opID == "repoMergePullRequest":
		field = "head_commit_id"
	case opID == "repoSubmitPullReview":
		return "a submitted review names no commit: Gitea approves whatever head the pull request has when the submit arrives (a commit pushed since the review included) and records it as current; approve with repoCreatePullReview, event APPROVED and commit_id the head reviewed, which submits your pending review with its comments; nothing was sent"
	case opID != "repoCreatePullReview":
		return ""
	}
	switch pin, _ := body[field].(string); {
	case pin == "":
		return fmt.Sprintf("an approval or a merge names the head commit reviewed, else Gitea takes whatever head the pull request has when the request arrives: "+redo, field)
	case pin != head:
		return fmt.Sprintf("%s %q is not the pull request's head %s (pushed since the review?): "+redo, field, pin, head, field)
	}
	return ""
}
