package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The checks that read Gitea's live state before a call (executor.check: the
// pull request's author before an approval or merge, whether an issue is a
// pull request before editing it) and the workflow gates (merge and
// reconcile), run offline against the fake Gitea: what each branch sends and
// what it refuses. The end-to-end tests run the same paths against the real
// Gitea.

const (
	repoPath  = "/repos/alice/demo"
	prPath    = "/repos/alice/demo/pulls/1"
	issuePath = "/repos/alice/demo/issues/1"
	headSHA   = "1111111111111111111111111111111111111111"
	otherSHA  = "2222222222222222222222222222222222222222"
	baseSHA   = "3333333333333333333333333333333333333333"
	pullRef   = repoPath + "/git/refs/pull/1/head" // the fake answers it with the scripted head (TestShownHead)
)

// fakePR is a pull request as Gitea answers it; mergeable nil is unknown.
func fakePR(author, state, head string, mergeable any) map[string]any {
	return map[string]any{"number": 1, "state": state, "merged": false, "mergeable": mergeable,
		"user": map[string]any{"login": author}, "head": map[string]any{"sha": head}, "base": map[string]any{"ref": "main", "sha": baseSHA}}
}

// liveGot is what a live-check or gate test compares: the outcome, the
// denial (kind, required permission and reason) or the gates that blocked,
// and every request sent to Gitea.
type liveGot struct {
	IsError bool
	Kind    string   // error.kind
	Perm    string   // permission_report.required_permission
	Reason  string   // permission_report.reason
	Blocked []string // gates that did not pass
	Sent    []string // "METHOD /path" of every request to Gitea but GET /user and GET pullRef
	NoWho   bool     // no GET /user was sent (who the token is)
}

// liveCase is one call against a scripted fake Gitea.
type liveCase struct {
	name    string
	profile string
	script  func(f *scriptedGitea)
	tool    string
	args    map[string]any
	want    liveGot
}

// runLiveCases runs each case on its own fake Gitea and server, with the
// settings kv (name, value pairs) beside the case's profile.
func runLiveCases(t *testing.T, cases []liveCase, kv ...string) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newScriptedGitea(t)
			tc.script(f)
			s := f.server(t, append([]string{"GITEA_MCP_PROFILE", tc.profile}, kv...)...)
			out, isErr := fakeCall(t, t.Context(), s, tc.tool, tc.args)
			got := liveGot{IsError: isErr, Kind: str0(get(out, "error.kind")),
				Perm: str0(get(out, "error.permission_report.required_permission")), Reason: str0(get(out, "error.permission_report.reason"))}
			if gates, ok := get(out, "data.gates").([]any); ok {
				for _, g := range gates {
					if g := g.(map[string]any); g["passed"] != true {
						got.Blocked = append(got.Blocked, g["gate"].(string))
					}
				}
			}
			if got.Kind == "not_done" && got.IsError && len(got.Blocked) > 0 { // a gate refusal: Blocked names the gates
				got.Kind = ""
			}
			got.NoWho = true
			for _, r := range f.requests() {
				if r.Method+" "+r.Path == "GET /user" {
					got.NoWho = false
				} else if r.Method+" "+r.Path != "GET "+pullRef {
					got.Sent = append(got.Sent, r.Method+" "+r.Path)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s\nresult: %v", diff, out)
			}
		})
	}
}

// str0 is fmt.Sprint of v, "" for nil.
func str0(v any) string {
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

// TestLiveChecks covers every branch of executor.check that reads Gitea.
func TestLiveChecks(t *testing.T) {
	t.Parallel()
	approve := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "event": "APPROVED", "commit_id": headSHA}
	submit := func(commit string) map[string]any {
		return map[string]any{"owner": "alice", "repo": "demo", "index": 1, "review_id": 7, "event": "APPROVED", "commit_id": commit}
	}
	mergeWith := func(kv ...any) map[string]any {
		return map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": with(map[string]any{"do": "merge"}, kv...)}}
	}
	merge := mergeWith("head_commit_id", headSHA)
	createApproval := func(commit string) map[string]any {
		return map[string]any{"operation": "repoCreatePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": with(map[string]any{"event": "APPROVED"}, "commit_id", commit)}}
	}
	startPending := func(commit string) map[string]any {
		return map[string]any{"operation": "repoCreatePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": with(map[string]any{"body": "reading"}, "commit_id", commit)}}
	}
	submitApproval := map[string]any{"operation": "repoSubmitPullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "id": 7,
		"body": map[string]any{"event": "APPROVED"}}}
	redo := func(field string) string {
		return "read head_sha with gitea_check_pr_eligibility, review that commit and pass it as " + field + "; nothing was sent"
	}
	unpinned := func(field string) string {
		return "an approval or a merge names the head commit reviewed, else Gitea takes whatever head the pull request has when the request arrives: " + redo(field)
	}
	submitted := "a submitted review names no commit: Gitea approves whatever head the pull request has when the submit arrives (a commit pushed since the review included) " +
		"and records it as current; approve with repoCreatePullReview, event APPROVED and commit_id the head reviewed, which submits your pending review with its comments; nothing was sent"
	deleteReview := map[string]any{"operation": "repoDeletePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "id": 7}}
	review := func(author string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath+"/reviews/7", map[string]any{"id": 7, "user": map[string]any{"login": author}}).on("DELETE", prPath+"/reviews/7", 204).
				answer("GET", prPath+"/reviews", fakeWith(200, `[{"id":7,"user":{"login":"`+author+`"},"state":"COMMENT"}]`, "X-Total-Count", "1"))
		}
	}
	stale := func(field string) string {
		return fmt.Sprintf("%s %q is not the pull request's head %s (pushed since the review?): %s", field, otherSHA, headSHA, redo(field))
	}
	scheduled := "merge_when_checks_succeed: true schedules the merge, and Gitea ignores head_commit_id for a scheduled merge: it merges whatever head the pull request has " +
		"when its checks pass, commits pushed after the review included; merge without merge_when_checks_succeed, naming the head as head_commit_id; nothing was sent"
	editIssue := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "issueEditIssue", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": body}}
	}
	closeIssue := editIssue(map[string]any{"state": "closed"})
	mergeDeleting := func(del bool) map[string]any {
		return map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": map[string]any{"do": "merge", "head_commit_id": headSHA, "delete_branch_after_merge": del}}}
	}
	createFile := func(branch string) map[string]any {
		return map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
			"body": with(map[string]any{"content": "aGk="}, "new_branch", branch)}}
	}
	pr := func(author string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR(author, "open", headSHA, true)).
				on("POST", prPath+"/reviews", 200, `{"id":7}`).on("POST", prPath+"/merge", 200).
				json(repoPath, map[string]any{"default_delete_branch_after_merge": false, "default_branch": "main"})
		}
	}
	pending := func(commit string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			pr("alice")(f)
			f.json(prPath+"/reviews/7", map[string]any{"id": 7, "state": "PENDING", "commit_id": commit}).on("POST", prPath+"/reviews/7", 200, `{"id":7}`)
		}
	}
	issue := func(isPR bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			v := map[string]any{"number": 1, "state": "open"}
			if isPR {
				v["pull_request"] = map[string]any{"merged": false}
			}
			f.user("bob").json(issuePath, v).on("PATCH", issuePath, 201, `{"number":1}`)
		}
	}
	denied := func(perm, reason string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: perm, Reason: reason, Sent: sent}
	}
	const getPR, getIssue, getRepo = "GET " + prPath, "GET " + issuePath, "GET " + repoPath
	runLiveCases(t, []liveCase{
		{"approve another's pull request", "gitea-reviewer", pr("alice"), "gitea_review_pr", approve,
			liveGot{Sent: []string{getPR, "POST " + prPath + "/reviews"}}},
		{"approve without the commit reviewed", "gitea-reviewer", pr("alice"), "gitea_review_pr", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "event": "APPROVED"},
			denied(permApprove, unpinned("commit_id"), getPR)},
		{"approve a head since moved", "gitea-reviewer", pr("alice"), "gitea_review_pr", with(approve, "commit_id", otherSHA),
			denied(permApprove, stale("commit_id"), getPR)},
		{"approve through call_operation without the commit reviewed", "gitea-reviewer", pr("alice"), "gitea_call_operation", createApproval(""),
			denied(permApprove, unpinned("commit_id"), getPR)},
		{"approve through call_operation a head since moved", "gitea-reviewer", pr("alice"), "gitea_call_operation", createApproval(otherSHA),
			denied(permApprove, stale("commit_id"), getPR)},
		{"approve through call_operation the live head", "gitea-reviewer", pr("alice"), "gitea_call_operation", createApproval(headSHA),
			liveGot{Sent: []string{getPR, "POST " + prPath + "/reviews"}}},
		{"approve with the head unreadable", "gitea-reviewer", func(f *scriptedGitea) { f.user("bob").json(prPath, fakePR("alice", "open", "", true)) },
			"gitea_call_operation", createApproval(headSHA), denied(permApprove, fmt.Sprintf("commit_id %q is not the pull request's head  (pushed since the review?): %s", headSHA, redo("commit_id")), getPR)},
		{"approve through api_request without the commit reviewed", "gitea-reviewer", pr("alice"), "gitea_api_request",
			map[string]any{"method": "POST", "path": prPath + "/reviews", "body": map[string]any{"event": "APPROVED"}}, denied(permApprove, unpinned("commit_id"), getPR)},
		{"merge through api_request without the commit reviewed", "gitea-merger", pr("alice"), "gitea_api_request",
			map[string]any{"method": "POST", "path": prPath + "/merge", "body": map[string]any{"do": "merge", "delete_branch_after_merge": false}}, denied(permMerge, unpinned("head_commit_id"), getPR)},
		{"merge through api_request the live head", "gitea-merger", pr("alice"), "gitea_api_request",
			map[string]any{"method": "POST", "path": prPath + "/merge", "body": map[string]any{"do": "merge", "head_commit_id": headSHA, "delete_branch_after_merge": false}},
			liveGot{Sent: []string{getPR, "POST " + prPath + "/merge"}}},
		{"start a pending review through call_operation without the commit reviewed", "gitea-reviewer", pr("alice"), "gitea_call_operation", startPending(""),
			liveGot{Sent: []string{"POST " + prPath + "/reviews"}}},
		{"start a pending review through gitea_review_pr", "gitea-reviewer", pr("alice"), "gitea_review_pr",
			map[string]any{"owner": "alice", "repo": "demo", "index": 1, "event": "PENDING"}, liveGot{Sent: []string{"POST " + prPath + "/reviews"}}},
		{"submit through call_operation an approval", "gitea-reviewer", pending(headSHA), "gitea_call_operation", submitApproval,
			denied(permApprove, submitted, getPR)},
		{"submit through api_request an approval", "gitea-reviewer", pending(headSHA), "gitea_api_request",
			map[string]any{"method": "POST", "path": prPath + "/reviews/7", "body": map[string]any{"event": "APPROVED"}}, denied(permApprove, submitted, getPR)},
		{"submit a comment reads no review", "gitea-reviewer", pending(otherSHA), "gitea_call_operation", map[string]any{"operation": "repoSubmitPullReview",
			"arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "id": 7, "body": map[string]any{"event": "COMMENT", "body": "nit"}}},
			liveGot{Sent: []string{"POST " + prPath + "/reviews/7"}}},
		{"submit an approval of the live head", "gitea-reviewer", pending(headSHA), "gitea_submit_pr_review", submit(headSHA),
			liveGot{Sent: []string{getPR, "POST " + prPath + "/reviews"}}},
		{"submit an approval of a head since moved", "gitea-reviewer", pending(headSHA), "gitea_submit_pr_review", submit(otherSHA),
			denied(permApprove, stale("commit_id"), getPR)},
		{"submit an approval without the commit reviewed", "gitea-reviewer", pending(headSHA), "gitea_submit_pr_review", submit(""),
			denied(permApprove, unpinned("commit_id"), getPR)},
		{"submit a comment through gitea_submit_pr_review", "gitea-reviewer", pending(otherSHA), "gitea_submit_pr_review", with(submit(""), "event", "COMMENT"),
			liveGot{Sent: []string{"POST " + prPath + "/reviews/7"}}},
		{"delete one's own review", "gitea-reviewer", review("bob"), "gitea_call_operation", deleteReview,
			liveGot{Sent: []string{"GET " + prPath + "/reviews/7", "GET " + prPath + "/reviews", "DELETE " + prPath + "/reviews/7"}}},
		{"delete another's review", "gitea-reviewer", review("carol"), "gitea_call_operation", deleteReview,
			denied("gitea.repo.admin", `the review is "carol"'s, not yours: deleting it undoes it as dismissing does; `+reasonOf(t, "gitea-reviewer", "gitea.repo.admin"), "GET "+prPath+"/reviews/7")},
		{"delete another's review as an owner", "gitea-owner", review("carol"), "gitea_call_operation", deleteReview,
			liveGot{Sent: []string{"GET " + prPath + "/reviews/7", "GET " + prPath + "/reviews", "DELETE " + prPath + "/reviews/7"}}},
		{"delete a review unreadable", "gitea-reviewer", pr("alice"), "gitea_call_operation", deleteReview,
			denied("gitea.pr.review", "cannot read the review from Gitea to tell whose it is; refusing", "GET "+prPath+"/reviews/7")},
		{"a comment review names no commit", "gitea-reviewer", pr("alice"), "gitea_review_pr",
			map[string]any{"owner": "alice", "repo": "demo", "index": 1, "event": "COMMENT", "body": "nit"},
			liveGot{Sent: []string{"POST " + prPath + "/reviews"}}},
		{"submit an approval, the pull request unreadable", "gitea-reviewer", func(f *scriptedGitea) { f.user("bob") }, "gitea_submit_pr_review", submit(headSHA),
			denied(permApprove, "cannot read the pull request (its author and head) from Gitea; refusing", getPR)},
		{"approve one's own pull request", "gitea-reviewer", pr("bob"), "gitea_review_pr", approve,
			denied(permApprove, `"bob" authored this pull request and may not approve it; use a profile with another identity`, getPR)},
		{"approve one's own pull request, author in other case", "gitea-reviewer", pr("BOB"), "gitea_review_pr", approve,
			denied(permApprove, `"bob" authored this pull request and may not approve it; use a profile with another identity`, getPR)},
		{"approve a pull request without author", "gitea-reviewer", pr(""), "gitea_review_pr", approve,
			denied(permApprove, "cannot compare the pull request author with the authenticated identity; refusing to approve", getPR)},
		{"approve with the author unreadable", "gitea-reviewer", func(f *scriptedGitea) { f.user("bob").on("GET", prPath, 500, `{"message":"boom"}`) },
			"gitea_review_pr", approve, denied(permApprove, "cannot read the pull request (its author and head) from Gitea; refusing", getPR)},
		{"approve with the identity unverifiable", "gitea-reviewer", func(f *scriptedGitea) { f.json(prPath, fakePR("alice", "open", headSHA, true)) },
			"gitea_review_pr", approve, denied(permApprove, "authenticated identity unknown; verify it with gitea_whoami before mutating")},
		{"approve without the permission reads nothing", "gitea-merger", pr("alice"), "gitea_review_pr", approve,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permApprove, Reason: reasonOf(t, "gitea-merger", permApprove), NoWho: true}},
		{"merge another's pull request", "gitea-merger", pr("alice"), "gitea_call_operation", merge,
			liveGot{Sent: []string{getPR, getRepo, "POST " + prPath + "/merge"}}},
		{"merge keeping the head branch", "gitea-merger", pr("alice"), "gitea_call_operation", mergeDeleting(false),
			liveGot{Sent: []string{getPR, "POST " + prPath + "/merge"}}},
		{"merge without the commit reviewed", "gitea-merger", pr("alice"), "gitea_call_operation", mergeWith("delete_branch_after_merge", false),
			denied(permMerge, unpinned("head_commit_id"), getPR)},
		{"merge a head since moved", "gitea-merger", pr("alice"), "gitea_call_operation", mergeWith("head_commit_id", otherSHA, "delete_branch_after_merge", false),
			denied(permMerge, stale("head_commit_id"), getPR)},
		{"mark merged manually without the commit reviewed", "gitea-owner", pr("alice"), "gitea_call_operation", mergeWith("do", "manually-merged", "merge_commit_id", otherSHA),
			denied(permMerge, unpinned("head_commit_id"), getPR)},
		{"scheduled merge pinned to a head", "gitea-merger", pr("alice"), "gitea_call_operation",
			mergeWith("head_commit_id", headSHA, "merge_when_checks_succeed", true, "delete_branch_after_merge", false), denied(permMerge, scheduled, getPR)},
		{"scheduled merge without a pin", "gitea-merger", pr("alice"), "gitea_call_operation",
			mergeWith("merge_when_checks_succeed", true, "delete_branch_after_merge", false), denied(permMerge, scheduled, getPR)},
		{"merge deleting the head branch by default", "gitea-merger", func(f *scriptedGitea) {
			pr("alice")(f)
			f.json(repoPath, map[string]any{"default_delete_branch_after_merge": true})
		}, "gitea_call_operation", merge, denied("gitea.branch.delete", `merging in "alice/demo" deletes the head branch (the repository's default_delete_branch_after_merge); `+
			reasonOf(t, "gitea-merger", "gitea.branch.delete")+"; set delete_branch_after_merge to false", getPR, getRepo)},
		{"merge with the deletion default missing", "gitea-merger", func(f *scriptedGitea) {
			pr("alice")(f)
			f.json(repoPath, map[string]any{"full_name": "alice/demo"})
		}, "gitea_call_operation", merge, denied("gitea.branch.delete", `cannot read from Gitea whether merging in "alice/demo" deletes the head branch; refusing (set delete_branch_after_merge)`, getPR, getRepo)},
		{"merge with the deletion default unreadable", "gitea-merger", func(f *scriptedGitea) {
			pr("alice")(f)
			f.on("GET", repoPath, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", merge, denied("gitea.branch.delete", `cannot read from Gitea whether merging in "alice/demo" deletes the head branch; refusing (set delete_branch_after_merge)`, getPR, getRepo)},
		{"merge deleting a head of an unknown repository", "gitea-owner", pr("alice"), "gitea_call_operation", mergeDeleting(true),
			denied(permMerge, "cannot read the pull request's head repository from Gitea; refusing to write to its head branch", getPR)},
		{"commit to the default branch", "gitea-author", func(f *scriptedGitea) { f.user("bob").json(repoPath, map[string]any{"default_branch": "main"}) },
			"gitea_call_operation", createFile(""), denied(permMerge, `repoCreateFile lands on "main", the default branch of "alice/demo": that is landing code without review, which also needs gitea.pr.merge (`+
				reasonOf(t, "gitea-author", permMerge)+`) or allow_default_branch_writes in the profile; write to a new branch (new_branch) and open a pull request`, getRepo)},
		{"commit to a new branch", "gitea-author", func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main"}).on("POST", repoPath+"/contents/a.md", 201, `{}`)
		}, "gitea_call_operation", createFile("feature"), liveGot{Sent: []string{getRepo, "POST " + repoPath + "/contents/a.md"}}},
		{"commit whose message names an issue", "gitea-author", func(f *scriptedGitea) { f.user("bob") }, "gitea_call_operation",
			map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
				"body": map[string]any{"content": "aGk=", "new_branch": "feature", "message": "fixes #1"}}},
			denied("gitea.issue.close", "repoCreateFile: message is the commit's message, and Gitea closes the issues it names after a closing keyword once the commit reaches the default branch (closes #N, closes owner/name#N, or an issue's address); "+
				reasonOf(t, "gitea-author", "gitea.issue.close")+"; or leave the issue out of the message and name it in the pull request's description, where a closing keyword closes it when the pull request is merged")},
		{"commit with the default branch unreadable", "gitea-author", func(f *scriptedGitea) { f.user("bob") },
			"gitea_call_operation", createFile("feature"), denied(permMerge, `cannot read the default branch of "alice/demo" from Gitea; refusing to write to "feature"`, getRepo)},
		{"merge one's own pull request", "gitea-merger", pr("bob"), "gitea_call_operation", merge,
			denied(permMerge, `"bob" authored this pull request and may not merge it; use a profile with another identity`, getPR)},
		{"merge with the author unreadable", "gitea-merger", func(f *scriptedGitea) { f.user("bob").on("GET", prPath, 404, `{"message":"gone"}`) },
			"gitea_call_operation", merge, denied(permMerge, "cannot read the pull request (its author and head) from Gitea; refusing", getPR)},
		{"close an issue", "gitea-issue-manager", issue(false), "gitea_call_operation", closeIssue,
			liveGot{Sent: []string{getIssue, "PATCH " + issuePath}}},
		{"close a pull request through the issue API", "gitea-issue-manager", issue(true), "gitea_call_operation", closeIssue,
			denied("gitea.pr.close", issuePRReason("1", reasonOf(t, "gitea-issue-manager", "gitea.pr.close")), getIssue)},
		{"edit a pull request through the issue API", "gitea-issue-manager", issue(true), "gitea_call_operation", editIssue(map[string]any{"title": "t"}),
			denied("gitea.pr.create", issuePRReason("1", reasonOf(t, "gitea-issue-manager", "gitea.pr.create")), getIssue)},
		{"close a pull request through the issue API, allowed", "prgs-reconciler", issue(true), "gitea_call_operation", closeIssue,
			liveGot{Sent: []string{getIssue, "PATCH " + issuePath}}},
		{"edit with the issue unreadable", "gitea-issue-manager", func(f *scriptedGitea) { f.user("bob").on("GET", issuePath, 500, `{"message":"boom"}`) },
			"gitea_call_operation", closeIssue,
			denied("gitea.issue.close", "cannot read the issue to tell whether it is a pull request; refusing to write to it", getIssue)},
		{"close and retitle a pull request", "prgs-reconciler", pr("alice"), "gitea_edit_pr", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "state": "closed", "title": "t"},
			denied("gitea.pr.create", "repoEditPullRequest: state: closed with another field edits the pull request as well: Gitea applies every field before it closes it, and keeps them when the close fails; "+
				reasonOf(t, "prgs-reconciler", "gitea.pr.create"))},
		{"mutation without a profile reads nothing", "", pr("alice"), "gitea_call_operation", merge,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permMerge, Reason: "no active profile; gitea.pr.merge needs one (set GITEA_MCP_PROFILE)", NoWho: true}},
		{"read without a profile", "", pr("alice"), "gitea_call_operation", map[string]any{"operation": "repoGetPullRequest",
			"arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1}}, liveGot{Sent: []string{getPR}}},
	})
}

// TestLiveIssueIsPR: an issue number that is a pull request's, written to
// through the issue API, needs what the pull request needs: closing it
// gitea.pr.close, and with another field gitea.pr.create too; deleting it
// gitea.repo.admin.
func TestLiveIssueIsPR(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "closer",
		"allowed_operations": ["gitea.read", "gitea.issue.close", "gitea.issue.edit", "gitea.issue.delete", "gitea.pr.close"]}]}`), 0o600)
	issue := func(isPR bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			v := map[string]any{"number": 1, "state": "open"}
			if isPR {
				v["pull_request"] = map[string]any{"merged": false}
			}
			f.user("bob").json(issuePath, v).on("PATCH", issuePath, 201, `{"number":1}`).on("DELETE", issuePath, 204)
		}
	}
	call := func(op string, body map[string]any) map[string]any {
		args := map[string]any{"owner": "alice", "repo": "demo", "index": 1}
		if body != nil {
			args["body"] = body
		}
		return map[string]any{"operation": op, "arguments": args}
	}
	closeRetitle := call("issueEditIssue", map[string]any{"state": "closed", "title": "t"})
	_, noCreate := (&profile{Name: "closer"}).allows("gitea.pr.create")
	_, noAdmin := (&profile{Name: "closer"}).allows("gitea.repo.admin")
	noCreate, noAdmin = issuePRReason("1", noCreate), issuePRReason("1", noAdmin)
	const getIssue = "GET " + issuePath
	runLiveCases(t, []liveCase{
		{"close a pull request", "closer", issue(true), "gitea_call_operation", call("issueEditIssue", map[string]any{"state": "closed"}),
			liveGot{Sent: []string{getIssue, "PATCH " + issuePath}}},
		{"close and retitle a pull request", "closer", issue(true), "gitea_call_operation", closeRetitle,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Reason: noCreate, Sent: []string{getIssue}}},
		{"close and retitle an issue", "closer", issue(false), "gitea_call_operation", closeRetitle,
			liveGot{Sent: []string{getIssue, "PATCH " + issuePath}}},
		{"delete a pull request", "closer", issue(true), "gitea_call_operation", call("issueDelete", nil),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Reason: noAdmin, Sent: []string{getIssue}}},
		{"delete an issue", "closer", issue(false), "gitea_call_operation", call("issueDelete", nil),
			liveGot{Sent: []string{getIssue, "DELETE " + issuePath}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestLiveBlockedIsPR: a block (issueCreateIssueBlocking,
// issueRemoveIssueBlocking) is written into the issue its body names, Gitea's
// target, which may be a pull request whose dependencies hold back its merge:
// that needs gitea.pr.create, as editing its dependencies by its own number does.
func TestLiveBlockedIsPR(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "issues-and-pulls",
		"allowed_operations": ["gitea.read", "gitea.issue.edit", "gitea.pr.create"]}]}`), 0o600)
	issues := func(bodyIsPR bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			named := map[string]any{"number": 6, "state": "open"}
			if bodyIsPR {
				named["pull_request"] = map[string]any{"merged": false}
			}
			f.user("carol").json("/repos/alice/demo/issues/4", map[string]any{"number": 4, "state": "open"}).json("/repos/alice/demo/issues/6", named).
				on("POST", "/repos/alice/demo/issues/4/blocks", 201, `{"number":4}`).on("DELETE", "/repos/alice/demo/issues/4/blocks", 201, `{"number":4}`)
		}
	}
	block := func(op string) map[string]any {
		return map[string]any{"operation": op, "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": "4",
			"body": map[string]any{"owner": "alice", "repo": "demo", "index": 6}}}
	}
	const getPath, getNamed = "GET /repos/alice/demo/issues/4", "GET /repos/alice/demo/issues/6"
	_, noCreate := (&profile{Name: "gitea-issue-manager"}).allows("gitea.pr.create")
	runLiveCases(t, []liveCase{
		{"unblock a pull request", "gitea-issue-manager", issues(true), "gitea_call_operation", block("issueRemoveIssueBlocking"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Sent: []string{getPath, getNamed},
				Reason: "issueRemoveIssueBlocking writes the block into alice/demo#6, a pull request, whose dependencies hold back its merge; " + noCreate}},
		{"block a pull request", "gitea-issue-manager", issues(true), "gitea_call_operation", block("issueCreateIssueBlocking"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Sent: []string{getPath, getNamed},
				Reason: "issueCreateIssueBlocking writes the block into alice/demo#6, a pull request, whose dependencies hold back its merge; " + noCreate}},
		{"unblock an issue", "gitea-issue-manager", issues(false), "gitea_call_operation", block("issueRemoveIssueBlocking"),
			liveGot{Sent: []string{getPath, getNamed, "DELETE /repos/alice/demo/issues/4/blocks"}}},
		{"unblock a pull request, allowed", "issues-and-pulls", issues(true), "gitea_call_operation", block("issueRemoveIssueBlocking"),
			liveGot{Sent: []string{getPath, getNamed, "DELETE /repos/alice/demo/issues/4/blocks"}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestAcceptTransferRecipient: under repositories, accepting a transfer
// moves the repository to the pending transfer's recipient, read live, which
// must be within them, as repoTransfer's new_owner must.
func TestAcceptTransferRecipient(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo", "carol/demo"],
		"allowed_operations": ["gitea.read", "gitea.repo.admin"]}]}`), 0o600)
	to := func(recipient string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "repo_transfer": map[string]any{"recipient": map[string]any{"login": recipient}}}).
				on("POST", repoPath+"/transfer/accept", 202, `{}`)
		}
	}
	accept := map[string]any{"operation": "acceptRepoTransfer", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}
	const getRepo, post = "GET " + repoPath, "POST " + repoPath + "/transfer/accept"
	runLiveCases(t, []liveCase{
		{"to a recipient outside", "demo-admin", to("bob"), "gitea_call_operation", accept,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo},
				Reason: `acceptRepoTransfer transfers "alice/demo" to "bob/demo", outside the repositories of demo-admin`}},
		{"to a recipient within", "demo-admin", to("carol"), "gitea_call_operation", accept,
			liveGot{Sent: []string{getRepo, post}}},
		{"the transfer unreadable", "demo-admin", func(f *scriptedGitea) {
			f.user("bob").on("GET", repoPath, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", accept,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo},
				Reason: `cannot read from Gitea to whom "alice/demo" is being transferred; refusing`}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestDeleteForkBranch: under repositories, deleting or renaming a fork's
// branch is refused when the branch heads an open pull request of a parent
// outside them (every page read), which Gitea closes or retargets; a parent
// within them, or no such pull request, is no refusal.
func TestDeleteForkBranch(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "fork-brancher", "repositories": ["bob/demo", "carol/*"],
		"allowed_operations": ["gitea.read", "gitea.branch.delete", "gitea.pr.close", "gitea.pr.create", "gitea.repo.admin"]}]}`), 0o600)
	const fork, pulls = "/repos/bob/demo", "/repos/alice/demo/pulls"
	pull := func(n int, repo, ref string) map[string]any {
		return map[string]any{"number": n, "head": map[string]any{"ref": ref, "repo": map[string]any{"full_name": repo}}}
	}
	forkOf := func(parent string, pages ...[]any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(fork, map[string]any{"default_branch": "main", "parent": map[string]any{"full_name": parent}}).
				on("DELETE", fork+"/branches/feat", 204).on("PATCH", fork+"/branches/feat", 204)
			var as []fakeAnswer
			for _, page := range pages {
				b, _ := json.Marshal(page)
				as = append(as, fakeWith(200, string(b), "X-Total-Count", "51"))
			}
			f.answer("GET", pulls, as...)
		}
	}
	page1 := make([]any, 50)
	for i := range page1 {
		page1[i] = pull(i+1, "carol/demo", "feat")
	}
	del := map[string]any{"operation": "repoDeleteBranch", "arguments": map[string]any{"owner": "bob", "repo": "demo", "branch": "feat"}}
	rename := map[string]any{"operation": "repoRenameBranch", "arguments": map[string]any{"owner": "bob", "repo": "demo", "branch": "feat", "body": map[string]any{"name": "feat2"}}}
	const getFork, getPulls, deleted = "GET " + fork, "GET " + pulls, "DELETE " + fork + "/branches/feat"
	runLiveCases(t, []liveCase{
		{"heading a pull request of the parent, on its second page", "fork-brancher", forkOf("alice/demo", page1, []any{pull(51, "bob/demo", "feat")}), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.branch.delete", Sent: []string{getFork, getPulls, getPulls},
				Reason: `deleting the branch "feat" of "bob/demo" closes the pull request alice/demo!51 it heads, outside the repositories of fork-brancher`}},
		{"heading none", "fork-brancher", forkOf("alice/demo", page1, []any{pull(51, "bob/demo", "other")}), "gitea_call_operation", del,
			liveGot{Sent: []string{getFork, getPulls, getPulls, deleted}}},
		{"the parent's pull requests unreadable", "fork-brancher", func(f *scriptedGitea) {
			forkOf("alice/demo")(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.branch.delete", Sent: []string{getFork, getPulls},
				Reason: `cannot read from Gitea which pull requests of "alice/demo", the repository "bob/demo" forks, the branch "feat" heads, which deleting it closes; refusing`}},
		{"a parent within the repositories", "fork-brancher", forkOf("carol/demo"), "gitea_call_operation", del,
			liveGot{Sent: []string{getFork, deleted}}},
		{"renamed, heading a pull request of the parent", "fork-brancher", forkOf("alice/demo", page1, []any{pull(51, "bob/demo", "feat")}), "gitea_call_operation", rename,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.branch.delete", Sent: []string{getFork, getPulls, getPulls},
				Reason: `renaming the branch "feat" of "bob/demo" retargets the pull request alice/demo!51 it heads, outside the repositories of fork-brancher`}},
		{"renamed, heading none", "fork-brancher", forkOf("alice/demo", page1, []any{pull(51, "bob/demo", "other")}), "gitea_call_operation", rename,
			liveGot{Sent: []string{getFork, getPulls, getPulls, "PATCH " + fork + "/branches/feat"}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestDeleteBranchPulls: deleting a branch closes the open pull requests it
// heads, a fork's in its parent too, and retargets (or closes) those based on
// it: without gitea.pr.close, and for a base gitea.pr.create, it is refused
// when Gitea lists such a pull request (read live), and sent when it lists
// none; a profile granting both reads nothing.
func TestDeleteBranchPulls(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "pruner", "allowed_operations": ["gitea.read", "gitea.branch.delete"]},
		{"profile_name": "closer", "allowed_operations": ["gitea.read", "gitea.branch.delete", "gitea.pr.close"]},
		{"profile_name": "retargeter", "allowed_operations": ["gitea.read", "gitea.branch.delete", "gitea.pr.close", "gitea.pr.create"]},
		{"profile_name": "editor", "allowed_operations": ["gitea.read", "gitea.branch.delete", "gitea.pr.close", "gitea.pr.create", "gitea.repo.admin"]}]}`), 0o600)
	const pulls, parentPulls = repoPath + "/pulls", "/repos/carol/demo/pulls"
	pull := func(head, base string) map[string]any {
		return map[string]any{"number": 7, "head": map[string]any{"ref": head, "repo": map[string]any{"full_name": "alice/demo"}}, "base": map[string]any{"ref": base}}
	}
	repo := func(parent any, here, there []any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(here)
			b2, _ := json.Marshal(there)
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "parent": parent}).on("DELETE", repoPath+"/branches/feat", 204).
				answer("GET", pulls, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(here)))).
				answer("GET", parentPulls, fakeWith(200, string(b2), "X-Total-Count", strconv.Itoa(len(there))))
		}
	}
	del := map[string]any{"operation": "repoDeleteBranch", "arguments": map[string]any{"owner": "alice", "repo": "demo", "branch": "feat"}}
	const getRepo, getPulls, getParent, deleted = "GET " + repoPath, "GET " + pulls, "GET " + parentPulls, "DELETE " + repoPath + "/branches/feat"
	const getReviews = "GET " + pulls + "/7/reviews"
	approval := map[string]any{"user": map[string]any{"login": "carol"}, "state": "APPROVED", "official": true}
	reviewed := func(script func(f *scriptedGitea), r map[string]any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			script(f)
			b, _ := json.Marshal([]any{r})
			f.answer("GET", pulls+"/7/reviews", fakeWith(200, string(b), "X-Total-Count", "1"))
		}
	}
	none := []any{pull("other", "main")}
	runLiveCases(t, []liveCase{
		{"heading a pull request", "pruner", repo(nil, []any{pull("feat", "main")}, nil), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.close", Sent: []string{getRepo, getPulls},
				Reason: `deleting the branch "feat" of "alice/demo" closes the pull request alice/demo!7 it heads; gitea.pr.close is not in the allowed operations of pruner; use a profile that allows it, such as prgs-reconciler`}},
		{"the base of a pull request", "closer", repo(nil, []any{pull("top", "feat")}, nil), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Sent: []string{getRepo, getPulls},
				Reason: `deleting the branch "feat" of "alice/demo" retargets the pull request alice/demo!7 based on it to the default branch; gitea.pr.create is not in the allowed operations of closer; use a profile that allows it, such as gitea-author`}},
		{"a fork's branch heading a pull request of its parent", "pruner", repo(map[string]any{"full_name": "carol/demo"}, none, []any{pull("feat", "main")}), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.close", Sent: []string{getRepo, getPulls, getParent},
				Reason: `deleting the branch "feat" of "alice/demo" closes the pull request carol/demo!7 it heads; gitea.pr.close is not in the allowed operations of pruner; use a profile that allows it, such as prgs-reconciler`}},
		{"heading and basing none", "pruner", repo(map[string]any{"full_name": "carol/demo"}, none, none), "gitea_call_operation", del,
			liveGot{Sent: []string{getRepo, getPulls, getParent, deleted}}},
		{"the pull requests unreadable", "pruner", func(f *scriptedGitea) {
			repo(nil, nil, nil)(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.close", Sent: []string{getRepo, getPulls},
				Reason: `cannot read from Gitea which open pull requests of "alice/demo" the branch "feat" heads or bases, which its deletion closes or retargets; refusing`}},
		{"closing and retargeting granted", "editor", repo(nil, []any{pull("feat", "main")}, nil), "gitea_call_operation", del,
			liveGot{Sent: []string{deleted}}},
		// Gitea keeps the approvals of a pull request it retargets: they would count for the default branch.
		{"the base of an approved pull request", "retargeter", reviewed(repo(nil, []any{pull("top", "feat")}, nil), approval), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo, getPulls, getReviews},
				Reason: `deleting the branch "feat" retargets the pull request alice/demo!7 based on it to the default branch, and Gitea keeps "carol"'s approval, which branch protection then counts for a base it was not given for; ` +
					`gitea.repo.admin is not in the allowed operations of retargeter; use a profile that allows it, such as gitea-owner; ask for a new review on the new base instead`}},
		{"the base of a pull request approved and dismissed", "retargeter", reviewed(repo(nil, []any{pull("top", "feat")}, nil), with(approval, "dismissed", true)), "gitea_call_operation", del,
			liveGot{Sent: []string{getRepo, getPulls, getReviews, deleted}}},
		{"the base of a pull request whose reviews are unreadable", "retargeter", repo(nil, []any{pull("top", "feat")}, nil), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo, getPulls, getReviews},
				Reason: `cannot read from Gitea the reviews of the pull request (deleting the branch "feat" retargets the pull request alice/demo!7 based on it to the default branch, and Gitea keeps its approvals); refusing`}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestRetargetApproved: Gitea keeps the approvals of a pull request whose
// base is changed, so a profile without gitea.repo.admin may not retarget one
// that an official approval stands on (read live), nor one whose reviews it
// cannot read; a base left as it is reads no review.
func TestRetargetApproved(t *testing.T) {
	t.Parallel()
	approval := map[string]any{"user": map[string]any{"login": "carol"}, "state": "APPROVED", "official": true}
	script := func(reviews ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(reviews)
			f.user("bob").json(prPath, fakePR("bob", "open", headSHA, true)).on("PATCH", prPath, 201, `{"number":1}`).
				answer("GET", prPath+"/reviews", fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(reviews))))
		}
	}
	edit := func(base string) map[string]any {
		return map[string]any{"operation": "repoEditPullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"base": base}}}
	}
	const getPR, getReviews, patched = "GET " + prPath, "GET " + prPath + "/reviews", "PATCH " + prPath
	runLiveCases(t, []liveCase{
		{"approved", "gitea-author", script(approval), "gitea_call_operation", edit("release"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPR, getReviews},
				Reason: `retargeting the pull request from "main" to "release", and Gitea keeps "carol"'s approval, which branch protection then counts for a base it was not given for; ` +
					reasonOf(t, "gitea-author", "gitea.repo.admin") + "; ask for a new review on the new base instead"}},
		{"approved, not officially", "gitea-author", script(with(approval, "official", false)), "gitea_call_operation", edit("release"),
			liveGot{Sent: []string{getPR, getReviews, patched}}},
		{"rejected", "gitea-author", script(with(approval, "state", "REQUEST_CHANGES")), "gitea_call_operation", edit("release"),
			liveGot{Sent: []string{getPR, getReviews, patched}}},
		{"the same base", "gitea-author", script(approval), "gitea_call_operation", edit("main"),
			liveGot{Sent: []string{getPR, patched}}},
		{"reviews unreadable", "gitea-author", func(f *scriptedGitea) {
			script()(f)
			f.on("GET", prPath+"/reviews", 500, `{"message":"boom"}`)
		}, "gitea_call_operation", edit("release"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPR, getReviews},
				Reason: `cannot read from Gitea the reviews of the pull request (retargeting the pull request from "main" to "release", and Gitea keeps its approvals); refusing`}},
		{"granted administration", "gitea-owner", script(approval), "gitea_call_operation", edit("release"),
			liveGot{Sent: []string{patched}}},
	})
}

// TestMergeDeleteStacked: a merge that deletes its head branch, which
// retargets the open pull requests based on it to the default branch with
// their approvals, is refused while one stands officially approved, unless
// the profile may administer the repository.
func TestMergeDeleteStacked(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "lander", "allowed_operations": ["gitea.read", "gitea.pr.merge", "gitea.branch.delete"]},
		{"profile_name": "keeper", "allowed_operations": ["gitea.read", "gitea.pr.merge", "gitea.branch.delete", "gitea.repo.admin"]},
		{"profile_name": "marker", "allowed_operations": ["gitea.read", "gitea.pr.merge", "gitea.pr.close"]}]}`), 0o600)
	const pulls = repoPath + "/pulls"
	approval := map[string]any{"user": map[string]any{"login": "carol"}, "state": "APPROVED", "official": true}
	script := func(stacked []any, reviews ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(stacked)
			r, _ := json.Marshal(reviews)
			f.user("bob").json(prPath, with(fakePR("alice", "open", headSHA, true), "head", map[string]any{"sha": headSHA, "ref": "feat", "repo": map[string]any{"full_name": "alice/demo"}})).
				on("POST", prPath+"/merge", 200).answer("GET", pulls, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(stacked)))).
				answer("GET", pulls+"/7/reviews", fakeWith(200, string(r), "X-Total-Count", strconv.Itoa(len(reviews))))
		}
	}
	stacked := []any{map[string]any{"number": 7, "head": map[string]any{"ref": "top"}, "base": map[string]any{"ref": "feat"}}}
	merge := func(del bool) map[string]any {
		return map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": map[string]any{"do": "merge", "head_commit_id": headSHA, "delete_branch_after_merge": del}}}
	}
	const getPR, getPulls, getReviews, merged = "GET " + prPath, "GET " + pulls, "GET " + pulls + "/7/reviews", "POST " + prPath + "/merge"
	runLiveCases(t, []liveCase{
		{"a stacked pull request approved", "lander", script(stacked, approval), "gitea_call_operation", merge(true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPR, getPulls, getReviews},
				Reason: `deleting the head branch "feat" after the merge retargets the pull request alice/demo!7 based on it to the default branch, and Gitea keeps "carol"'s approval, which branch protection then counts for a base it was not given for; ` +
					`gitea.repo.admin is not in the allowed operations of lander; use a profile that allows it, such as gitea-owner; ask for a new review on the new base instead; or set delete_branch_after_merge to false`}},
		{"a stacked pull request approved, not officially", "lander", script(stacked, with(approval, "official", false)), "gitea_call_operation", merge(true),
			liveGot{Sent: []string{getPR, getPulls, getReviews, merged}}},
		{"none stacked", "lander", script(nil), "gitea_call_operation", merge(true),
			liveGot{Sent: []string{getPR, getPulls, merged}}},
		{"the pull requests unreadable", "lander", func(f *scriptedGitea) {
			script(nil)(f)
			f.on("GET", pulls, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", merge(true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getPR, getPulls},
				Reason: `cannot read from Gitea which open pull requests of "alice/demo" are based on the head branch "feat", which its deletion after the merge retargets with their approvals; refusing (or set delete_branch_after_merge to false)`}},
		{"the head branch kept", "lander", script(stacked, approval), "gitea_call_operation", merge(false),
			liveGot{Sent: []string{getPR, merged}}},
		{"granted administration", "keeper", script(stacked, approval), "gitea_call_operation", merge(true),
			liveGot{Sent: []string{getPR, merged}}},
		{"marked merged manually, which deletes nothing", "marker", func(f *scriptedGitea) {
			script(stacked, approval)(f)
			f.json(repoPath, map[string]any{"default_delete_branch_after_merge": true})
		}, "gitea_call_operation", map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
			"body": map[string]any{"do": "manually-merged", "head_commit_id": headSHA, "merge_commit_id": otherSHA}}},
			liveGot{Sent: []string{getPR, merged}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestVisibilityForks: under repositories, a visibility change, which Gitea
// gives the repository's forks and theirs, is refused while a fork lies
// outside them or Gitea lists fewer forks than it counts; an unchanged
// visibility reads no fork.
func TestVisibilityForks(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo", "carol/*"],
		"allowed_operations": ["gitea.read", "gitea.repo.admin"]}]}`), 0o600)
	const forks, carolForks = repoPath + "/forks", "/repos/carol/demo/forks"
	list := func(repos ...map[string]any) fakeAnswer {
		b, _ := json.Marshal(repos)
		return fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(repos)))
	}
	fork := func(full string, n int) map[string]any { return map[string]any{"full_name": full, "forks_count": n} }
	script := func(count int, here, there fakeAnswer) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("alice").json(repoPath, map[string]any{"private": true, "forks_count": count}).on("PATCH", repoPath, 200, `{}`).
				answer("GET", forks, here).answer("GET", carolForks, there)
		}
	}
	edit := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "repoEdit", "arguments": map[string]any{"owner": "alice", "repo": "demo", "body": body}}
	}
	public := edit(map[string]any{"private": false})
	const getRepo, getForks, getCarol, patched = "GET " + repoPath, "GET " + forks, "GET " + carolForks, "PATCH " + repoPath
	runLiveCases(t, []liveCase{
		{"made public with a fork outside", "demo-admin", script(1, list(fork("bob/demo", 0)), list()), "gitea_call_operation", public,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo, getForks},
				Reason: `changing the visibility of "alice/demo" changes that of a fork of it (or of its forks) outside the repositories of demo-admin`}},
		{"a fork within with a fork outside", "demo-admin", script(1, list(fork("carol/demo", 1)), list(fork("bob/demo", 0))), "gitea_call_operation", public,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo, getForks, getCarol},
				Reason: `changing the visibility of "alice/demo" changes that of a fork of it (or of its forks) outside the repositories of demo-admin`}},
		{"every fork within", "demo-admin", script(1, list(fork("carol/demo", 0)), list()), "gitea_call_operation", public,
			liveGot{Sent: []string{getRepo, getForks, patched}}},
		{"fewer forks listed than counted", "demo-admin", script(2, list(fork("carol/demo", 0)), list()), "gitea_call_operation", public,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Sent: []string{getRepo, getForks},
				Reason: `cannot read from Gitea every fork of "alice/demo", which takes the visibility it changes (Gitea lists only the forks you may see); refusing`}},
		{"the visibility unchanged", "demo-admin", script(1, list(fork("bob/demo", 0)), list()), "gitea_call_operation", edit(map[string]any{"private": true}),
			liveGot{Sent: []string{getRepo, patched}}},
		{"no visibility", "demo-admin", script(1, list(fork("bob/demo", 0)), list()), "gitea_call_operation", edit(map[string]any{"description": "d"}),
			liveGot{Sent: []string{patched}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestTeamRepoOrg: under repositories, the repository of
// /teams/{id}/repos/{org}/{repo} is judged in the team's organization, read
// live, where Gitea finds it whatever {org} names; reads included.
func TestTeamRepoOrg(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "acme-admin", "repositories": ["acme/*"],
		"allowed_operations": ["gitea.read", "gitea.org.admin"]}, {"profile_name": "org-admin", "allowed_operations": ["gitea.read", "gitea.org.admin"]}]}`), 0o600)
	const team, repo = "/teams/5", "/teams/5/repos/acme/app"
	of := func(org string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("alice").json(team, map[string]any{"id": 5, "organization": map[string]any{"username": org}}).on("PUT", repo, 204).json(repo, map[string]any{})
		}
	}
	call := func(method string) map[string]any { return map[string]any{"method": method, "path": repo} }
	const getTeam, put, get = "GET " + team, "PUT " + repo, "GET " + repo
	outside := `team 5 is of "other", where Gitea finds the repository whatever the path names: "other/app" is outside the repositories of acme-admin`
	runLiveCases(t, []liveCase{
		{"a team of the organization named", "acme-admin", of("acme"), "gitea_api_request", call("PUT"), liveGot{Sent: []string{getTeam, put}}},
		{"a team of another organization", "acme-admin", of("other"), "gitea_api_request", call("PUT"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.org.admin", Sent: []string{getTeam}, Reason: outside}},
		{"read through a team of another organization", "acme-admin", of("other"), "gitea_api_request", call("GET"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.read", Sent: []string{getTeam}, Reason: outside, NoWho: true}},
		{"the team unreadable", "acme-admin", func(f *scriptedGitea) { f.user("alice").on("GET", team, 404, `{"message":"not found"}`) }, "gitea_api_request", call("PUT"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.org.admin", Sent: []string{getTeam},
				Reason: `cannot read from Gitea the organization of team 5, where Gitea finds the repository "app"; refusing`}},
		{"no repositories", "org-admin", of("other"), "gitea_api_request", call("PUT"), liveGot{Sent: []string{put}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestSignoffName: under repositories, a contents write with signoff is
// judged by the Signed-off-by line Gitea appends, which names the caller's
// full name, read live, where the body names no committer.
func TestSignoffName(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-author", "repositories": ["alice/demo"],
		"allowed_operations": ["gitea.read", "gitea.repo.commit", "gitea.branch.create"]}]}`), 0o600)
	write := func(kv ...any) map[string]any {
		return map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
			"body": with(map[string]any{"content": "aGk=", "new_branch": "topic"}, kv...)}}
	}
	me := func(name string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.json("/user", map[string]any{"login": "bob", "full_name": name}).json(repoPath, map[string]any{"default_branch": "main"}).
				on("POST", repoPath+"/contents/a.md", 201, `{}`)
		}
	}
	const getRepo, post = "GET " + repoPath, "POST " + repoPath + "/contents/a.md"
	runLiveCases(t, []liveCase{
		{"signed off by a clean name", "demo-author", me("Bob"), "gitea_call_operation", write("signoff", true),
			liveGot{Sent: []string{getRepo, post}}},
		{"signed off by a name naming another repository's issue", "demo-author", me("Bob fixes bob/secret#1"), "gitea_call_operation", write("signoff", true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit",
				Reason: `the commits repoCreateFile puts on a branch reference "bob/secret", outside the repositories of demo-author: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword`}},
		{"signed off by a name that joins a reference as Gitea writes it", "demo-author", me("Bob fixes bob/secret#>1"), "gitea_call_operation", write("signoff", true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit",
				Reason: `the commits repoCreateFile puts on a branch reference "bob/secret", outside the repositories of demo-author: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword`}},
		{"no sign-off", "demo-author", me("Bob fixes bob/secret#1"), "gitea_call_operation", write(),
			liveGot{Sent: []string{getRepo, post}}},
		{"signed off, the name unreadable", "demo-author", func(f *scriptedGitea) {
			me("Bob")(f)
			f.answer("GET", "/user", fakeWith(200, `{"login":"bob"}`), fakeWith(500, `{"message":"boom"}`))
		}, "gitea_call_operation", write("signoff", true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit",
				Reason: "cannot read from Gitea the messages of the commits repoCreateFile puts on a branch, which may reference issues outside the repositories of demo-author; refusing"}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestSignoffCloses: a contents write with signoff appends a Signed-off-by
// line to its message, which Gitea reads for closing keywords as it reads
// the message: one naming an issue needs gitea.issue.close, the body's
// committer (else author) judged as given, the caller's full name read live.
func TestSignoffCloses(t *testing.T) {
	t.Parallel()
	write := func(kv ...any) map[string]any {
		return map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
			"body": with(map[string]any{"content": "aGk=", "message": "plain", "new_branch": "topic"}, kv...)}}
	}
	me := func(name string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.json("/user", map[string]any{"login": "bob", "full_name": name}).json(repoPath, map[string]any{"default_branch": "main"}).
				on("POST", repoPath+"/contents/a.md", 201, `{}`)
		}
	}
	const getRepo, post = "GET " + repoPath, "POST " + repoPath + "/contents/a.md"
	const closes = "repoCreateFile: signoff: true writes the committer's name and address (the author's where it names no committer) into the commit's message as a Signed-off-by line, and Gitea closes the issues it names after a closing keyword as it does the message's; gitea.issue.close is not in the allowed operations of gitea-author; use a profile that allows it, such as gitea-issue-manager"
	runLiveCases(t, []liveCase{
		{"signed off by a committer named after a closing keyword", "gitea-author", me("Bob"), "gitea_call_operation",
			write("signoff", true, "committer", map[string]any{"name": "closes #4", "email": "bob@example.com"}),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close", Reason: closes}},
		{"signed off by an author so named, no committer", "gitea-author", me("Bob"), "gitea_call_operation",
			write("signoff", true, "author", map[string]any{"name": "fixes #4", "email": "bob@example.com"}),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close", Reason: closes}},
		{"signed off by the caller, whose full name closes an issue", "gitea-author", me("fixes #5"), "gitea_call_operation", write("signoff", true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close",
				Reason: `repoCreateFile: signoff: true writes your full name "fixes #5" into the commit's message as a Signed-off-by line, and Gitea closes the issues it names after a closing keyword as it does the message's; gitea.issue.close is not in the allowed operations of gitea-author; use a profile that allows it, such as gitea-issue-manager`}},
		{"signed off by a clean committer", "gitea-author", me("fixes #5"), "gitea_call_operation",
			write("signoff", true, "committer", map[string]any{"name": "Bob", "email": "bob@example.com"}),
			liveGot{Sent: []string{getRepo, post}}},
		{"signed off by the caller, a clean name", "gitea-author", me("Bob"), "gitea_call_operation", write("signoff", true),
			liveGot{Sent: []string{getRepo, post}}},
		{"a committer so named, no sign-off", "gitea-author", me("fixes #5"), "gitea_call_operation",
			write("committer", map[string]any{"name": "closes #4", "email": "bob@example.com"}),
			liveGot{Sent: []string{getRepo, post}}},
		{"signed off, the caller's name unreadable", "gitea-author", func(f *scriptedGitea) {
			me("Bob")(f)
			f.answer("GET", "/user", fakeWith(200, `{"login":"bob"}`), fakeWith(500, `{"message":"boom"}`))
		}, "gitea_call_operation", write("signoff", true),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.issue.close",
				Reason: "cannot read from Gitea the full name repoCreateFile's Signed-off-by line writes into the commit's message; refusing (name a committer)"}},
	})
}

// TestMergeUpstreamReadsRepoOnce: repoMergeUpstream under repositories reads
// the fork once (GET /repos/{owner}/{repo}) for both what it forks and its
// default branch, whichever check refuses or none does.
func TestMergeUpstreamReadsRepoOnce(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "fork-pusher", "repositories": ["alice/demo", "alice/upstream"],
		"allowed_operations": ["gitea.read", "gitea.branch.push"]}]}`), 0o600)
	mergeUpstream := func(branch string) map[string]any {
		return map[string]any{"operation": "repoMergeUpstream", "arguments": map[string]any{"owner": "alice", "repo": "demo",
			"body": with(map[string]any{}, "branch", branch)}}
	}
	// The parent has main and no dev: Gitea syncs dev from the parent's
	// default branch, main (a tag dev in the parent is not what it syncs).
	fork := func(parent string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"autodetect_manual_merge": false, "default_branch": "main", "parent": map[string]any{"full_name": parent, "default_branch": "main"}}).
				on("POST", repoPath+"/merge-upstream", 200, `{"merge_style":"fast-forward"}`).
				json("/repos/"+parent+"/branches/main", map[string]any{"name": "main"}).on("GET", "/repos/"+parent+"/branches/dev", 404, `{"message":"not found"}`).
				json(repoPath+"/compare/dev..."+parent+":main", map[string]any{"total_commits": 1, "commits": []any{map[string]any{"commit": map[string]any{"message": "sync"}}}}).
				json(repoPath+"/compare/main..."+parent+":main", map[string]any{"total_commits": 0, "commits": []any{}})
		}
	}
	const getRepo, merge = "GET " + repoPath, "POST " + repoPath + "/merge-upstream"
	compare := func(b string) []string { // which branch of the parent, then the comparison with it
		return []string{"GET /repos/alice/upstream/branches/" + b, "GET " + repoPath + "/compare/" + b + "...alice/upstream:main"}
	}
	denied := func(perm, reason string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: perm, Reason: reason, Sent: append([]string{getRepo}, sent...)}
	}
	_, noMerge := (&profile{Name: "fork-pusher"}).allows(permMerge)
	landing := `repoMergeUpstream lands on "main", the default branch of "alice/demo": that is landing code without review, which also needs gitea.pr.merge (` +
		noMerge + `) or allow_default_branch_writes in the profile; write to a new branch (new_branch) and open a pull request`
	runLiveCases(t, []liveCase{
		{"into another branch", "fork-pusher", fork("alice/upstream"), "gitea_call_operation", mergeUpstream("dev"),
			liveGot{Sent: append(append([]string{getRepo}, compare("dev")...), merge)}},
		{"into the default branch by name", "fork-pusher", fork("alice/upstream"), "gitea_call_operation", mergeUpstream("main"),
			denied(permMerge, landing, compare("main")...)},
		{"into the default branch unnamed", "fork-pusher", fork("alice/upstream"), "gitea_call_operation", mergeUpstream(""),
			denied(permMerge, landing, compare("main")...)},
		{"from outside the repositories", "fork-pusher", fork("carol/secret"), "gitea_call_operation", mergeUpstream("dev"),
			denied("gitea.branch.push", `repoMergeUpstream merges into "alice/demo" from "carol/secret", the repository it forks, outside the repositories of fork-pusher`)},
		{"from an unreadable fork", "fork-pusher", func(f *scriptedGitea) { f.user("bob").on("GET", repoPath, 500, `{"message":"boom"}`) },
			"gitea_call_operation", mergeUpstream("dev"),
			denied("gitea.branch.push", `cannot read from Gitea which repository "alice/demo" forks; refusing to merge from it`)},
	}, "GITEA_MCP_CONFIG", config)
}

// reasonOf is the reason the built-in profile name gives for perm.
func reasonOf(t *testing.T, name, perm string) string {
	i := slices.IndexFunc(builtinProfiles(), func(p *profile) bool { return p.Name == name })
	if i < 0 {
		t.Fatalf("no built-in profile %q", name)
	}
	p := builtinProfiles()[i]
	if err := p.compile(); err != nil {
		t.Fatal(err)
	}
	ok, why := p.allows(perm)
	if ok {
		t.Fatalf("%s allows %s", name, perm)
	}
	return why
}

// TestMergeGates covers every gate of gitea_merge_pr: nothing is sent to
// merge unless all pass.
func TestMergeGates(t *testing.T) {
	t.Parallel()
	args := func(kv ...any) map[string]any {
		return with(map[string]any{"owner": "alice", "repo": "demo", "index": 1, "head_sha": headSHA, "confirm": "MERGE PR 1"}, kv...)
	}
	open := func(author, head string, mergeable any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR(author, "open", head, mergeable)).on("POST", prPath+"/merge", 200).
				json(repoPath, map[string]any{"default_delete_branch_after_merge": false}).
				json(prPath+"/files", []any{map[string]any{"filename": "b.go"}, map[string]any{"filename": "a.go"}}, []any{})
		}
	}
	const getPR, files, doMerge = "GET " + prPath, "GET " + prPath + "/files", "POST " + prPath + "/merge"
	var pages, names []any // 100 pages of one file each, f0.go to f99.go
	for i := range 100 {
		name := fmt.Sprintf("f%d.go", i)
		pages, names = append(pages, []any{map[string]any{"filename": name}}), append(names, name)
	}
	files1 := func(name string) func(f *scriptedGitea) { // one changed file, named name
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).json(prPath+"/files", []any{map[string]any{"filename": name}}, []any{})
		}
	}
	// The pull request is read by eligibility, by the executor's decision on
	// the merge there (judged, the head branch kept: no repository read), and
	// again by the executor before the merge is sent.
	judged := []string{getPR, getPR}
	merged := liveGot{Sent: append(judged, getPR, doMerge, getPR)}
	refused := func(gates ...string) liveGot {
		return liveGot{IsError: true, Blocked: gates, Sent: judged}
	}
	runLiveCases(t, []liveCase{
		{"all gates pass", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args(), merged},
		{"all gates pass, squash", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("merge_method", "squash"), merged},
		{"index written 1e0, confirm MERGE PR 1", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("index", json.Number("1e0")), merged},
		{"the base checked", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("base", "main"), merged},
		{"retargeted since the check", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("base", "release"), refused("base is still base")},
		{"confirm in other case", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("confirm", "merge pr 1"),
			liveGot{IsError: true, Blocked: []string{"confirm"}, NoWho: true}},
		{"confirm of another pull request", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("confirm", "MERGE PR 2"),
			liveGot{IsError: true, Blocked: []string{"confirm"}, NoWho: true}},
		{"mergeable unknown", "gitea-merger", open("alice", headSHA, nil), "gitea_merge_pr", args(), refused("Gitea reports it mergeable")},
		{"mergeable false", "gitea-merger", open("alice", headSHA, false), "gitea_merge_pr", args(), refused("Gitea reports it mergeable")},
		{"head changed", "gitea-merger", open("alice", otherSHA, true), "gitea_merge_pr", args(), refused("head is still head_sha")},
		{"own pull request", "gitea-merger", open("bob", headSHA, true), "gitea_merge_pr", args(), refused("policy allows gitea.pr.merge", "not the author")},
		{"profile without merge", "gitea-reviewer", open("alice", headSHA, true), "gitea_merge_pr", args(),
			liveGot{IsError: true, Blocked: []string{"policy allows gitea.pr.merge"}, Sent: []string{getPR}}},
		{"identity unverifiable", "gitea-merger", func(f *scriptedGitea) { f.json(prPath, fakePR("alice", "open", headSHA, true)) }, "gitea_merge_pr", args(),
			liveGot{IsError: true, Blocked: []string{"identity verified", "policy allows gitea.pr.merge", "not the author"}, Sent: []string{getPR}}},
		{"closed", "gitea-merger", func(f *scriptedGitea) { f.user("bob").json(prPath, fakePR("alice", "closed", headSHA, true)) }, "gitea_merge_pr", args(),
			refused("pull request open")},
		{"pull request unreadable", "gitea-merger", func(f *scriptedGitea) { f.user("bob").on("GET", prPath, 500, `{"message":"boom"}`) }, "gitea_merge_pr", args(),
			liveGot{IsError: true, Kind: "server_error", Sent: []string{getPR}}},
		{"expected files match", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("expected_changed_files", []any{"a.go", "b.go"}),
			liveGot{Sent: append(judged, files, files, getPR, doMerge, getPR)}},
		{"expected files differ", "gitea-merger", open("alice", headSHA, true), "gitea_merge_pr", args("expected_changed_files", []any{"a.go"}),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: append(judged, files, files)}},
		{"expected files match only without a hidden character", "gitea-merger", files1("a\u200b.go"), "gitea_merge_pr", args("expected_changed_files", []any{"a.go"}),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: append(judged, files, files)}},
		{"expected files match only as redacted", "gitea-merger", files1("x" + fakeToken), "gitea_merge_pr", args("expected_changed_files", []any{"x[REDACTED]"}),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: append(judged, files, files)}},
		// A fault: every page has a file, so the list has no end in the pages read; the gate
		// decided on the first 100 and merged, the files after them unseen. Each page's
		// name is its own, so that only the list's missing end can refuse.
		{"changed files without an end", "gitea-merger", func(f *scriptedGitea) {
			open("alice", headSHA, true)(f)
			f.json(prPath+"/files", pages...)
		}, "gitea_merge_pr", args("expected_changed_files", names),
			liveGot{IsError: true, Blocked: []string{"changed files are exactly expected_changed_files"}, Sent: append(judged, slices.Repeat([]string{files}, 100)...)}},
		{"changed files unreadable", "gitea-merger", func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("GET", prPath+"/files", 500, `{"message":"boom"}`)
		}, "gitea_merge_pr", args("expected_changed_files", []any{"a.go"}), liveGot{IsError: true, Kind: "server_error", Sent: append(judged, files)}},
		{"Gitea refuses the merge", "gitea-merger", func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).on("POST", prPath+"/merge", 405, `{"message":"not mergeable"}`).
				json(repoPath, map[string]any{"default_delete_branch_after_merge": false})
		}, "gitea_merge_pr", args(), liveGot{IsError: true, Blocked: []string{"merge"}, Sent: append(judged, getPR, doMerge)}},
	})
}

// TestEligibilityGates covers gitea_check_pr_eligibility, whose gates the
// merge shares: unknown mergeability is not mergeable.
func TestEligibilityGates(t *testing.T) {
	t.Parallel()
	check := func(action string) map[string]any {
		return map[string]any{"owner": "alice", "repo": "demo", "index": 1, "action": action}
	}
	pr := func(author string, mergeable any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) { f.user("bob").json(prPath, fakePR(author, "open", headSHA, mergeable)) }
	}
	read, sent := []string{"GET " + prPath}, []string{"GET " + prPath, "GET " + prPath} // and again by the decision on the call
	runLiveCases(t, []liveCase{
		{"approve", "gitea-reviewer", pr("alice", nil), "gitea_check_pr_eligibility", check("approve"), liveGot{Sent: sent}},
		{"approve own", "gitea-reviewer", pr("bob", nil), "gitea_check_pr_eligibility", check("approve"), liveGot{Blocked: []string{"policy allows gitea.pr.approve", "not the author"}, Sent: sent}},
		{"merge", "gitea-merger", pr("alice", true), "gitea_check_pr_eligibility", check("merge"), liveGot{Sent: sent}},
		{"merge, mergeable unknown", "gitea-merger", pr("alice", nil), "gitea_check_pr_eligibility", check("merge"),
			liveGot{Blocked: []string{"Gitea reports it mergeable"}, Sent: sent}},
		{"merge without a profile", "", pr("alice", true), "gitea_check_pr_eligibility", check("merge"),
			liveGot{Blocked: []string{"policy allows gitea.pr.merge"}, Sent: read}},
		{"pull request unreadable", "gitea-merger", func(f *scriptedGitea) { f.on("GET", prPath, 404, `{"message":"gone"}`) }, "gitea_check_pr_eligibility", check("merge"),
			liveGot{IsError: true, Kind: "not_found", Sent: read}},
	})
}

// TestReconcileProofIDs: the proof names the head and the base by object id,
// sha and not of the commit listing, never as a comparison's names, which
// Gitea reads as branches or tags first.
func TestReconcileProofIDs(t *testing.T) {
	t.Parallel()
	f := newScriptedGitea(t).user("carol").json(prPath, fakePR("alice", "open", headSHA, true)).
		json("/repos/alice/demo/branches/main", map[string]any{"commit": map[string]any{"id": baseSHA}}).
		answer("GET", "/repos/alice/demo/commits", fakeWith(200, "[]", "X-Total-Count", "0")).
		on("POST", issuePath+"/comments", 201, `{"id":9}`).on("PATCH", prPath, 201, `{"number":1}`)
	s := f.server(t, "GITEA_MCP_PROFILE", "prgs-reconciler")
	if out, isErr := fakeCall(t, t.Context(), s, "gitea_reconcile_already_landed_pr", map[string]any{"owner": "alice", "repo": "demo", "index": 1}); isErr {
		t.Fatalf("not closed: %v", out)
	}
	want := "files=false&limit=1&not=" + baseSHA + "&sha=" + headSHA + "&stat=false&verification=false"
	for _, r := range f.requests() {
		if r.Path == "/repos/alice/demo/commits" && r.Query != want {
			t.Errorf("the proof asked %q, want %q", r.Query, want)
		}
	}
}

// TestReconcileGates covers every gate of gitea_reconcile_already_landed_pr:
// the pull request is closed only after a live proof that its head is in
// the base branch and that the head did not move since the proof.
func TestReconcileGates(t *testing.T) {
	t.Parallel()
	args := map[string]any{"owner": "alice", "repo": "demo", "index": 1}
	const branch, compare = "/repos/alice/demo/branches/main", "/repos/alice/demo/commits"
	outside := func(total int) fakeAnswer { return fakeWith(200, "[]", "X-Total-Count", strconv.Itoa(total)) }
	landed := func(total int, again ...any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("carol").json(prPath, append([]any{fakePR("alice", "open", headSHA, true)}, again...)...).
				json(branch, map[string]any{"commit": map[string]any{"id": baseSHA}}).
				answer("GET", compare, outside(total)).
				on("POST", issuePath+"/comments", 201, `{"id":9}`).on("PATCH", prPath, 201, `{"number":1}`)
		}
	}
	const getPR, getBranch, getCompare = "GET " + prPath, "GET " + branch, "GET " + compare
	proof := []string{getPR, getBranch, getCompare, getPR}
	closed := append(slices.Clone(proof), "POST "+issuePath+"/comments", "PATCH "+prPath, getPR)
	runLiveCases(t, []liveCase{
		{"landed", "prgs-reconciler", landed(0), "gitea_reconcile_already_landed_pr", args, liveGot{Sent: closed}},
		{"head not in base", "prgs-reconciler", landed(2), "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Blocked: []string{"head already in base"}, Sent: proof}},
		{"base read under another name", "prgs-reconciler", func(f *scriptedGitea) { // base "ma<U+200B>in", read as main
			landed(0)(f)
			f.json(prPath, with(fakePR("alice", "open", headSHA, true), "base", map[string]any{"ref": "main", "sha": otherSHA}))
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head already in base", "head unchanged since the proof"}, Sent: proof}},
		{"head moved since the proof", "prgs-reconciler", landed(0, fakePR("alice", "open", otherSHA, true)), "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Blocked: []string{"head unchanged since the proof"}, Sent: proof}},
		// Retargeted between the proof and the close, to a branch at the same commit: the proof was about another branch.
		{"base changed since the proof", "prgs-reconciler", landed(0, with(fakePR("alice", "open", headSHA, true), "base", map[string]any{"ref": "release", "sha": baseSHA})),
			"gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head unchanged since the proof"}, Sent: proof}},
		{"closed since the proof", "prgs-reconciler", landed(0, fakePR("alice", "closed", headSHA, true)), "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Blocked: []string{"head unchanged since the proof"}, Sent: proof}},
		{"not open", "prgs-reconciler", func(f *scriptedGitea) { f.json(prPath, fakePR("alice", "closed", headSHA, true)) }, "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Blocked: []string{"pull request open"}, Sent: []string{getPR}}},
		{"no profile", "", landed(0), "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"reconciler profile"}, NoWho: true}},
		{"not a reconciler profile", "gitea-owner", landed(0), "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"reconciler profile"}, NoWho: true}},
		{"pull request unreadable", "prgs-reconciler", func(f *scriptedGitea) { f.on("GET", prPath, 500, `{"message":"boom"}`) }, "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Kind: "server_error", Sent: []string{getPR}}},
		{"base unreadable", "prgs-reconciler", func(f *scriptedGitea) { f.json(prPath, fakePR("alice", "open", headSHA, true)) }, "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Kind: "not_found", Sent: []string{getPR, getBranch}}},
		{"comparison unanswered", "prgs-reconciler", func(f *scriptedGitea) {
			f.json(prPath, fakePR("alice", "open", headSHA, true)).json(branch, map[string]any{"commit": map[string]any{"id": baseSHA}}).json(compare, []any{})
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head already in base"}, Sent: proof}},
		{"a head not named by its full id", "prgs-reconciler", func(f *scriptedGitea) {
			landed(0)(f)
			f.json(prPath, fakePR("alice", "open", "main", true))
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head already in base"}, Sent: proof}},
		{"base moved since the proof", "prgs-reconciler", landed(0, with(fakePR("alice", "open", headSHA, true), "base", map[string]any{"ref": "main", "sha": otherSHA})),
			"gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head unchanged since the proof"}, Sent: proof}},
		{"comparison fails", "prgs-reconciler", func(f *scriptedGitea) {
			f.json(prPath, fakePR("alice", "open", headSHA, true)).json(branch, map[string]any{"commit": map[string]any{"id": baseSHA}})
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Kind: "not_found", Sent: proof[:3]}},
		{"second read fails", "prgs-reconciler", func(f *scriptedGitea) {
			landed(0)(f)
			f.then("GET", prPath, 500, `{"message":"boom"}`)
		}, "gitea_reconcile_already_landed_pr", args,
			liveGot{IsError: true, Kind: "server_error", Sent: proof}},
		{"comment refused", "prgs-reconciler", func(f *scriptedGitea) {
			landed(0)(f)
			f.on("POST", issuePath+"/comments", 403, `{"message":"locked"}`)
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"proof comment"}, Sent: closed[:5]}},
		{"close refused", "prgs-reconciler", func(f *scriptedGitea) {
			landed(0)(f)
			f.on("PATCH", prPath, 403, `{"message":"no"}`)
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"close"}, Sent: closed[:6]}},
		// Pushed between the last read and the close: closed, and said so.
		{"head moved through the close", "prgs-reconciler", landed(0, fakePR("alice", "open", headSHA, true), fakePR("alice", "closed", otherSHA, true)),
			"gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head unchanged through the close"}, Sent: closed}},
		{"unread after the close", "prgs-reconciler", func(f *scriptedGitea) {
			landed(0, fakePR("alice", "open", headSHA, true))(f)
			f.then("GET", prPath, 500, `{"message":"boom"}`)
		}, "gitea_reconcile_already_landed_pr", args, liveGot{IsError: true, Blocked: []string{"head unchanged through the close"}, Sent: closed}},
	})
}

// TestWriteFileGates covers gitea_write_file's own reads and gates offline:
// the current file's SHA is read when none is given (a missing file is
// created, anything but a file refused, an unreadable one stops the write),
// and the write itself is judged by the executor like any other.
func TestWriteFileGates(t *testing.T) {
	t.Parallel()
	const ext, contents, repo = "/repos/alice/demo/contents-ext/a.txt", "/repos/alice/demo/contents/a.txt", "/repos/alice/demo"
	args := func(kv ...any) map[string]any {
		return with(map[string]any{"owner": "alice", "repo": "demo", "path": "a.txt", "branch": "dev", "text": "hi", "message": "m"}, kv...)
	}
	written := `{"content":{"path":"a.txt","sha":"f1"},"commit":{"sha":"c1"}}`
	base := func(f *scriptedGitea) *scriptedGitea {
		return f.user("alice").json(repo, map[string]any{"default_branch": "main", "full_name": "alice/demo"}).
			on("POST", contents, 201, written).on("PUT", contents, 200, written)
	}
	runLiveCases(t, []liveCase{
		{"new file created", "gitea-author", func(f *scriptedGitea) { base(f) }, "gitea_write_file", args(),
			liveGot{Sent: []string{"GET " + ext, "GET " + repo, "POST " + contents}}},
		{"existing file updated with its SHA", "gitea-author", func(f *scriptedGitea) {
			base(f).json(ext, map[string]any{"file_contents": map[string]any{"sha": "old", "type": "file"}})
		}, "gitea_write_file", args(), liveGot{Sent: []string{"GET " + ext, "GET " + repo, "PUT " + contents}}},
		{"SHA given: no read", "gitea-author", func(f *scriptedGitea) { base(f) }, "gitea_write_file", args("sha", "old"),
			liveGot{Sent: []string{"GET " + repo, "PUT " + contents}}},
		{"not a file", "gitea-author", func(f *scriptedGitea) {
			base(f).json(ext, map[string]any{"file_contents": map[string]any{"sha": "d", "type": "dir"}})
		}, "gitea_write_file", args(), liveGot{IsError: true, Kind: "invalid_arguments", Sent: []string{"GET " + ext}}},
		{"hidden character in the path", "gitea-author", func(f *scriptedGitea) { base(f) }, "gitea_write_file", args("path", "a\u200b.txt"),
			liveGot{IsError: true, Kind: "invalid_arguments", NoWho: true}},
		{"hidden character in the branch", "gitea-author", func(f *scriptedGitea) { base(f) }, "gitea_write_file", args("branch", "dev\u2066"),
			liveGot{IsError: true, Kind: "invalid_arguments", NoWho: true}},
		{"file unreadable", "gitea-author", func(f *scriptedGitea) { base(f).on("GET", ext, 500, `{"message":"boom"}`) }, "gitea_write_file", args(),
			liveGot{IsError: true, Kind: "server_error", Sent: []string{"GET " + ext}}},
		{"profile without commit", "gitea-reviewer", func(f *scriptedGitea) { base(f) }, "gitea_write_file", args(),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.commit", Reason: reasonOf(t, "gitea-reviewer", "gitea.repo.commit"),
				Sent: []string{"GET " + ext}}},
	})
}

// TestEligibilityDecides: gitea_check_pr_eligibility's policy gate is the
// executor's decision on the approval or merge itself, live checks included
// (check), so it says no where the call would be refused for the profile's
// authenticated_username, or for a commit naming an issue outside the
// profile's repositories, and yes where gitea_merge_pr keeps a head branch the
// repository would delete and the profile may not. (A repository outside the
// profile's is refused at the first read.)
func TestEligibilityDecides(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [
		{"profile_name": "dana-merger", "allowed_operations": ["gitea.read", "gitea.pr.approve", "gitea.pr.merge"], "authenticated_username": "dana"},
		{"profile_name": "any-merger", "allowed_operations": ["gitea.read", "gitea.pr.approve", "gitea.pr.merge"], "repositories": ["alice/demo"], "authenticated_username": "bob"}]}`), 0o600)
	commits := func(msg string) fakeAnswer {
		return fakeWith(200, `[{"commit":{"message":"`+msg+`"}}]`, "X-Total-Count", "1")
	}
	for _, tc := range []struct {
		profile, action string
		commits         fakeAnswer
		blocked         []string
		detail          string // of the policy gate
	}{
		{"dana-merger", "merge", commits(""), []string{"policy allows gitea.pr.merge"}, `identity "bob" is not "dana"`},
		{"dana-merger", "approve", commits(""), []string{"policy allows gitea.pr.approve"}, `identity "bob" is not "dana"`},
		{"any-merger", "merge", commits("fix"), nil, "allow"},
		{"any-merger", "merge", commits("fixes carol/secret#1"), []string{"policy allows gitea.pr.merge"}, `the commits repoMergePullRequest puts on a branch reference "carol/secret"`},
		{"any-merger", "approve", commits(""), nil, "allow"},
		{"gitea-merger", "merge", commits(""), nil, "allow"},
	} {
		f := newScriptedGitea(t).user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).answer("GET", prPath+"/commits", tc.commits).
			json(repoPath, map[string]any{"default_delete_branch_after_merge": true, "default_branch": "main"})
		s := f.server(t, "GITEA_MCP_PROFILE", tc.profile, "GITEA_MCP_CONFIG", config)
		out, _ := fakeCall(t, t.Context(), s, "gitea_check_pr_eligibility", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "action": tc.action})
		var blocked []string
		detail := ""
		gates, _ := get(out, "data.gates").([]any)
		if gates == nil {
			t.Fatalf("%s %s: no gates: %v", tc.profile, tc.action, out)
		}
		for _, g := range gates {
			g := g.(map[string]any)
			if g["passed"] != true {
				blocked = append(blocked, g["gate"].(string))
			}
			if strings.HasPrefix(g["gate"].(string), "policy allows") {
				detail = str0(g["detail"])
			}
		}
		if diff := cmp.Diff(tc.blocked, blocked); diff != "" || !strings.Contains(detail, tc.detail) {
			t.Errorf("%s %s: mismatch (-want +got):\n%s\npolicy gate: %q, want it to contain %q", tc.profile, tc.action, diff, detail, tc.detail)
		}
		if w := f.writes(); len(w) > 0 {
			t.Errorf("%s %s: eligibility wrote %v", tc.profile, tc.action, w)
		}
	}
}

// TestMergeCommitMessages: under repositories, a merge first reads the
// messages of the pull request's commits, page by page, since Gitea closes
// the issues they name once they land: one naming a repository outside the
// list is refused, and so is a merge whose commits cannot all be read.
func TestMergeCommitMessages(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-merger", "allowed_operations": ["gitea.read", "gitea.pr.merge"], "repositories": ["alice/demo"]}]}`), 0o600)
	const commits = prPath + "/commits"
	page := func(total string, messages ...string) fakeAnswer {
		var list []map[string]any
		for _, m := range messages {
			list = append(list, map[string]any{"sha": headSHA, "commit": map[string]any{"message": m}})
		}
		body, _ := json.Marshal(list)
		return fakeWith(200, string(body), "X-Total-Count", total)
	}
	fifty := slices.Repeat([]string{"see #1"}, 50)
	unread := "cannot read from Gitea the messages of the commits repoMergePullRequest puts on a branch, which may reference issues outside the repositories of demo-merger; refusing"
	for _, tc := range []struct {
		name   string
		pages  []fakeAnswer
		reason string // "" for merged
		reads  int    // pages read
	}{
		{"within the list", []fakeAnswer{page("2", "fix #1", "see alice/demo#2")}, "", 1},
		{"no commits", []fakeAnswer{page("0")}, "", 1},
		{"outside", []fakeAnswer{page("1", "closes bob/secret#3")}, `the commits repoMergePullRequest puts on a branch reference "bob/secret", outside the repositories of demo-merger: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword`, 1},
		{"outside by address", []fakeAnswer{page("1", "closes http://gitea.example/bob/secret/issues/3")}, `the commits repoMergePullRequest puts on a branch reference "bob/secret"`, 1},
		{"outside on the second page", []fakeAnswer{page("51", fifty...), page("51", "closes bob/secret#3")}, `the commits repoMergePullRequest puts on a branch reference "bob/secret"`, 2},
		{"two pages within", []fakeAnswer{page("51", fifty...), page("51", "last")}, "", 2},
		{"unreadable", []fakeAnswer{fakeWith(500, `{"message":"boom"}`)}, unread, 1},
		{"without a count", []fakeAnswer{page("", "fix")}, unread, 1},
		{"fewer than counted", []fakeAnswer{page("3", "fix"), page("3")}, unread, 2},
		{"more pages than read", []fakeAnswer{page("100000", fifty...)}, unread, maxCommitPages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newScriptedGitea(t).user("carol").json(prPath, fakePR("bob", "open", headSHA, true)).json(repoPath, map[string]any{"default_branch": "main"}).
				answer("GET", commits, tc.pages...).on("POST", prPath+"/merge", 200)
			out, reason, merged := demoMerge(t, f, config, "merge")
			if merged != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("merged %v, reason %q; want %q: %v", merged, reason, tc.reason, out)
			}
			if n := f.count("GET", commits); n != tc.reads {
				t.Errorf("read %d pages of commits, want %d", n, tc.reads)
			}
		})
	}
}

// demoMerge merges pull request 1 of alice/demo, pinned to headSHA and
// keeping its head branch, with style do under the profile demo-merger of
// config on f; it returns the result, its refusal's reason and whether the
// merge was sent.
func demoMerge(t *testing.T, f *scriptedGitea, config, do string) (map[string]any, string, bool) {
	t.Helper()
	s := f.server(t, "GITEA_MCP_PROFILE", "demo-merger", "GITEA_MCP_CONFIG", config)
	out, _ := fakeCall(t, t.Context(), s, "gitea_call_operation", map[string]any{"operation": "repoMergePullRequest",
		"arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"do": do, "head_commit_id": headSHA, "delete_branch_after_merge": false}}})
	return out, str0(get(out, "error.permission_report.reason")), f.count("POST", prPath+"/merge") == 1
}

// TestMergeKeepsHeadBranch: gitea_merge_pr keeps the head branch unless the
// profile may delete it: the executor refuses a merge that deletes it (asked,
// or the repository's default) without gitea.branch.delete, so a merger in a
// repository that deletes by default could never merge with the tool.
func TestMergeKeepsHeadBranch(t *testing.T) {
	t.Parallel()
	for profile, want := range map[string]string{
		"gitea-merger": `{"delete_branch_after_merge":false,"do":"merge","head_commit_id":"` + headSHA + `"}`,
		"gitea-owner":  `{"do":"merge","head_commit_id":"` + headSHA + `"}`,
	} {
		f := newScriptedGitea(t).user("bob").on("POST", prPath+"/merge", 200).
			json(repoPath, map[string]any{"default_delete_branch_after_merge": true, "default_branch": "main", "full_name": "alice/demo"})
		f.json(prPath, map[string]any{"number": 1, "state": "open", "mergeable": true, "user": map[string]any{"login": "alice"},
			"head": map[string]any{"sha": headSHA, "ref": "topic", "repo": map[string]any{"full_name": "alice/demo", "default_branch": "main"}}, "base": map[string]any{"ref": "main"}})
		s := f.server(t, "GITEA_MCP_PROFILE", profile)
		out, isErr := fakeCall(t, t.Context(), s, "gitea_merge_pr", map[string]any{"owner": "alice", "repo": "demo", "index": 1, "head_sha": headSHA, "confirm": "MERGE PR 1"})
		var body string
		for _, r := range f.requests() {
			if r.Method == "POST" {
				body = r.Body
			}
		}
		if isErr || body != want {
			t.Errorf("%s: merged with %s, want %s: %v", profile, body, want, out)
		}
	}
}

// TestPushedCommitsJudged: under repositories, a write that puts commits on
// a branch first reads their messages, each commit named as Gitea resolves
// it, since Gitea reads them for issue references as the caller's push (it
// writes to each issue named and closes it after a closing keyword): a branch
// moved to a commit (those the branch gains: the commit as the update
// resolves it, not on the branch), a branch created from a ref (the latest
// ten not on the default branch; Gitea reads back to the first commit on
// another branch), a pull request's head updated from its base (the base's
// commits and its own, which a rebase pushes again). One naming an issue
// outside the list is refused, and so is a write whose commits cannot be
// read; a commit on a new branch (which starts on a branch) and a branch
// created from a branch read none.
func TestPushedCommitsJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-pusher", "repositories": ["alice/demo"],
		"allowed_operations": ["gitea.read", "gitea.branch.push", "gitea.branch.create", "gitea.branch.delete", "gitea.repo.commit", "gitea.pr.create"]}]}`), 0o600)
	const commits, update = repoPath + "/commits", repoPath + "/compare/topic...alice/demo:main"
	list := func(total int, messages ...string) fakeAnswer {
		var l []any
		for i, m := range messages {
			l = append(l, map[string]any{"sha": fmt.Sprint(i), "commit": map[string]any{"message": m}})
		}
		b, _ := json.Marshal(l)
		return fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(total))
	}
	script := func(commitList ...fakeAnswer) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"autodetect_manual_merge": false, "default_branch": "main"}).
				on("PUT", repoPath+"/branches/dev", 204).on("POST", repoPath+"/branches", 201, `{}`).on("POST", repoPath+"/contents/a.md", 201, `{}`).
				on("POST", prPath+"/update", 200).answer("GET", prPath+"/commits", list(1, "own")).
				json(prPath, map[string]any{"number": 1, "user": map[string]any{"login": "alice"}, "base": map[string]any{"ref": "main"},
					"head": map[string]any{"sha": headSHA, "ref": "topic", "repo": map[string]any{"full_name": "alice/demo", "default_branch": "main"}}}).
				json(update, map[string]any{"total_commits": 1, "commits": []any{map[string]any{"commit": map[string]any{"message": "base"}}}})
			if len(commitList) > 0 {
				f.answer("GET", commits, commitList...)
			}
		}
	}
	call := func(op string, args map[string]any) map[string]any {
		return map[string]any{"operation": op, "arguments": with(map[string]any{"owner": "alice", "repo": "demo"}, "body", args["body"], "branch", args["branch"], "index", args["index"], "filepath", args["filepath"])}
	}
	moveDev := call("repoUpdateBranch", map[string]any{"branch": "dev", "body": map[string]any{"new_commit_id": "heads/topic"}})
	fromRef := call("repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "x", "old_ref_name": "v1"}})
	fromBranch := call("repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "x", "old_branch_name": "dev"}})
	fromTip := call("repoCreateBranch", map[string]any{"body": map[string]any{"new_branch_name": "x", "old_ref_name": "dev"}})
	tip := func(f *scriptedGitea) {
		f.json(repoPath+"/branches/dev", map[string]any{"name": "dev", "commit": map[string]any{"id": "0"}})
	}
	both := func(a, b func(*scriptedGitea)) func(*scriptedGitea) { return func(f *scriptedGitea) { a(f); b(f) } }
	rebasePR := call("repoUpdatePullRequest", map[string]any{"index": 1})
	rebasePR["arguments"].(map[string]any)["style"] = "rebase"
	newFile := call("repoCreateFile", map[string]any{"filepath": "a.md", "body": map[string]any{"content": "aGk=", "branch": "dev", "new_branch": "topic"}})
	updatePR := call("repoUpdatePullRequest", map[string]any{"index": 1})
	forced := call("repoCreateFile", map[string]any{"filepath": "a.md", "body": map[string]any{"content": "aGk=", "branch": "dev", "new_branch": "topic", "force_push": true, "message": "m"}})
	outside := func(op string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: permMap[op], Sent: sent,
			Reason: "the commits " + op + ` puts on a branch reference "carol/secret", outside the repositories of demo-pusher: once pushed, Gitea writes to that issue as the caller, and closes it after a closing keyword`}
	}
	unread := func(op string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: permMap[op], Sent: sent,
			Reason: "cannot read from Gitea the messages of the commits " + op + " puts on a branch, which may reference issues outside the repositories of demo-pusher; refusing"}
	}
	get, getRepo := "GET "+commits, "GET "+repoPath
	runLiveCases(t, []liveCase{
		{"branch moved", "demo-pusher", script(list(1, "fine")), "gitea_call_operation", moveDev,
			liveGot{Sent: []string{get, getRepo, "PUT " + repoPath + "/branches/dev"}}},
		{"branch moved onto a reference outside", "demo-pusher", script(list(2, "fine", "fixes carol/secret#1")), "gitea_call_operation", moveDev,
			outside("repoUpdateBranch", get)},
		{"branch moved, fewer commits than counted", "demo-pusher", script(list(3, "fine"), list(3)), "gitea_call_operation", moveDev, unread("repoUpdateBranch", get, get)},
		{"branch moved, commits unreadable", "demo-pusher", script(), "gitea_call_operation", moveDev, unread("repoUpdateBranch", get)},
		{"new branch from a ref", "demo-pusher", script(list(1, "fine")), "gitea_call_operation", fromRef,
			liveGot{Sent: []string{getRepo, get, "GET " + repoPath + "/branches/v1", "POST " + repoPath + "/branches"}}},
		{"new branch from a ref referencing outside", "demo-pusher", script(list(1, "see carol/secret!2")), "gitea_call_operation", fromRef,
			outside("repoCreateBranch", getRepo, get, "GET "+repoPath+"/branches/v1")},
		{"new branch from a branch's tip named as a ref", "demo-pusher", both(script(list(1, "see carol/secret!2")), tip), "gitea_call_operation", fromTip,
			liveGot{Sent: []string{getRepo, get, "GET " + repoPath + "/branches/dev", "POST " + repoPath + "/branches"}}},
		{"new branch from a branch", "demo-pusher", script(list(1, "see carol/secret!2")), "gitea_call_operation", fromBranch,
			liveGot{Sent: []string{"POST " + repoPath + "/branches"}}},
		{"commit on a new branch", "demo-pusher", script(list(1, "closes carol/secret#1")), "gitea_call_operation", newFile,
			liveGot{Sent: []string{getRepo, "POST " + repoPath + "/contents/a.md"}}},
		{"commit forced onto an existing branch", "demo-pusher", both(script(list(1, "closes carol/secret#1")), func(f *scriptedGitea) {
			f.json(repoPath+"/branches/topic", map[string]any{"name": "topic"})
		}), "gitea_call_operation", forced, outside("repoCreateFile", getRepo, "GET "+repoPath+"/branches/topic", get)},
		{"commit forced onto a new branch", "demo-pusher", script(list(1, "closes carol/secret#1")), "gitea_call_operation", forced,
			liveGot{Sent: []string{getRepo, "GET " + repoPath + "/branches/topic", "POST " + repoPath + "/contents/a.md"}}},
		{"commit forced, the branch unreadable", "demo-pusher", both(script(), func(f *scriptedGitea) {
			f.on("GET", repoPath+"/branches/topic", 500, `{"message":"boom"}`)
		}), "gitea_call_operation", forced, unread("repoCreateFile", getRepo, "GET "+repoPath+"/branches/topic")},
		{"pull request updated", "demo-pusher", script(), "gitea_call_operation", updatePR,
			liveGot{Sent: []string{"GET " + prPath, "GET " + update, "GET " + repoPath, "POST " + prPath + "/update"}}},
		{"pull request updated, the comparison short of its count", "demo-pusher", func(f *scriptedGitea) {
			script()(f)
			f.json(update, map[string]any{"total_commits": 2, "commits": []any{map[string]any{"commit": map[string]any{"message": "base"}}}})
		}, "gitea_call_operation", updatePR, unread("repoUpdatePullRequest", "GET "+prPath, "GET "+update)},
		{"pull request rebased: its own commits pushed again", "demo-pusher", script(), "gitea_call_operation", rebasePR,
			liveGot{Sent: []string{"GET " + prPath, "GET " + update, "GET " + prPath + "/commits", "GET " + repoPath, "POST " + prPath + "/update"}}},
	}, "GITEA_MCP_CONFIG", config)
	// What was asked of Gitea: the commit as the update resolves it, not on
	// the branch; a ref's latest ten not on the default branch.
	f := newScriptedGitea(t)
	script(list(1, "fine"))(f)
	s := f.server(t, "GITEA_MCP_PROFILE", "demo-pusher", "GITEA_MCP_CONFIG", config)
	fakeCall(t, t.Context(), s, "gitea_call_operation", moveDev)
	fakeCall(t, t.Context(), s, "gitea_call_operation", fromRef)
	var queries []string
	for _, r := range f.requests() {
		if r.Path == commits {
			queries = append(queries, r.Query)
		}
	}
	want := []string{"files=false&limit=50&not=refs%2Fheads%2Fdev&page=1&sha=heads%2Ftopic&stat=false&verification=false",
		"files=false&limit=10&not=refs%2Fheads%2Fmain&sha=v1&stat=false&verification=false"}
	if diff := cmp.Diff(want, queries); diff != "" {
		t.Errorf("commit listings: mismatch (-want +got):\n%s", diff)
	}
}

// permMap is the permission each operation TestPushedCommitsJudged calls needs.
var permMap = map[string]string{"repoUpdateBranch": "gitea.branch.push", "repoCreateBranch": "gitea.branch.create", "repoCreateFile": "gitea.repo.commit",
	"repoUpdatePullRequest": "gitea.branch.push"}

// TestMigrationSourceJudged: under repositories, a migration's source whose
// owner/name this Gitea has (anything but a 404), whatever the host, under a
// path prefix and as a wiki too, is judged against the list: this Gitea may
// answer at an address the server does not know. 192.0.2.10 is a
// documentation address, neither this Gitea's nor private, and never reached.
func TestMigrationSourceJudged(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-creator", "repositories": ["alice/demo"], "allowed_operations": ["gitea.read", "gitea.repo.create"]}]}`), 0o600)
	migrate := func(src string) map[string]any {
		return map[string]any{"operation": "repoMigrate", "arguments": map[string]any{"body": map[string]any{"clone_addr": src, "repo_owner": "alice", "repo_name": "demo"}}}
	}
	lfs := func(endpoint string) map[string]any { // the clone from a host that is no Gitea
		return map[string]any{"operation": "repoMigrate", "arguments": map[string]any{"body": map[string]any{"clone_addr": "https://192.0.2.10/project.git",
			"lfs": true, "lfs_endpoint": endpoint, "repo_owner": "alice", "repo_name": "demo"}}}
	}
	script := func(status int) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").on("GET", "/repos/carol/secret", status, `{"id":1}`).on("POST", "/repos/migrate", 201, `{}`)
		}
	}
	const get = "GET /repos/carol/secret"
	denied := liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.create", Sent: []string{get},
		Reason: `repoMigrate reads "carol/secret", which is on this Gitea or may be (a host that cannot be told apart from it, or a name it has), outside the repositories of demo-creator`}
	runLiveCases(t, []liveCase{
		{"a name this Gitea has", "demo-creator", script(200), "gitea_call_operation", migrate("http://192.0.2.10/carol/secret.git"), denied},
		{"under a prefix, its wiki", "demo-creator", script(200), "gitea_call_operation", migrate("https://192.0.2.10/git/carol/secret.wiki.GIT"), denied},
		{"a name it may have", "demo-creator", script(500), "gitea_call_operation", migrate("http://192.0.2.10/carol/secret"), denied},
		{"a name it has not", "demo-creator", script(404), "gitea_call_operation", migrate("http://192.0.2.10/carol/secret.git"),
			liveGot{Sent: []string{get, "POST /repos/migrate"}}},
		{"a path of one segment, no Gitea repository", "demo-creator", script(404), "gitea_call_operation", migrate("https://192.0.2.10/project.git"),
			liveGot{Sent: []string{"POST /repos/migrate"}}},
		{"LFS objects of a name this Gitea has", "demo-creator", script(200), "gitea_call_operation", lfs("http://192.0.2.10/carol/secret.git/info/lfs/"), denied},
		{"LFS objects of a name it has not", "demo-creator", script(404), "gitea_call_operation", lfs("http://192.0.2.10/carol/secret/info/LFS"),
			liveGot{Sent: []string{get, "POST /repos/migrate"}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestMergeWrittenMessage: under repositories, a merge is judged by the
// messages Gitea writes for it too: the default message names the head
// branch, the repository's template for the style on the default branch
// replaces it (a rebase amends its last commit with it), a squash adds the
// commits' authors' names and the pull request author's full name as
// trailers, and a template's ReviewedBy the reviewers' full names.
func TestMergeWrittenMessage(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-merger", "allowed_operations": ["gitea.read", "gitea.pr.merge"], "repositories": ["alice/demo"]}]}`), 0o600)
	const template = repoPath + "/raw/.gitea/default_merge_message/SQUASH_TEMPLATE.md"
	outside := `the commits repoMergePullRequest puts on a branch reference "bob/secret"`
	const reviewedBy = "${PullRequestTitle} ${ReviewedBy}"
	prefix := "Title\n" + strings.Repeat("a", 5<<10-len("Title\n Fixes bob/${secret#3")) + " Fixes bob/${"
	cutOpen := prefix + "secret#3}" // cut at 5 KiB before the closing brace
	unreadable := "cannot read from Gitea the messages of the commits repoMergePullRequest puts on a branch"
	for _, tc := range []struct {
		name, head, author, poster string
		template                   fakeAnswer
		reviews                    fakeAnswer // read only for a template's ReviewedBy
		reason                     string     // "" for merged
	}{
		{"clean", "topic", "bob", "Bob", fakeWith(404, `{"message":"not found"}`), fakeAnswer{}, ""},
		{"a template", "topic", "bob", "Bob", fakeWith(200, "Fixes bob/secret#3\n${PullRequestTitle}", "Content-Type", "text/plain"), fakeAnswer{}, outside},
		{"a template unreadable", "topic", "bob", "Bob", fakeWith(500, `{"message":"boom"}`), fakeAnswer{}, unreadable},
		{"the head branch", "bob/secret#3", "bob", "Bob", fakeWith(404, `{"message":"not found"}`), fakeAnswer{}, outside},
		{"an author", "topic", "Fixes bob/secret#3", "Bob", fakeWith(404, `{"message":"not found"}`), fakeAnswer{}, outside},
		{"the pull request's author", "topic", "bob", "Fixes bob/secret#3", fakeWith(404, `{"message":"not found"}`), fakeAnswer{}, outside},
		// Gitea writes the name without <, > and newlines (gitSafeName): what they hide is judged.
		{"the pull request's author, as Gitea writes it", "topic", "bob", "Fixes bob/secret#<3", fakeWith(404, `{"message":"not found"}`), fakeAnswer{}, outside},
		{"the reviewers, as Gitea writes them", "topic", "bob", "Bob", fakeWith(200, reviewedBy, "Content-Type", "text/plain"),
			fakeWith(200, `[{"id":8,"user":{"login":"dave","full_name":"Fixes bob/secret#\n3"}}]`, "X-Total-Count", "1"), outside},
		{"the reviewers", "topic", "bob", "Bob", fakeWith(200, reviewedBy, "Content-Type", "text/plain"),
			fakeWith(200, `[{"id":7,"user":{"login":"carol","full_name":"Carol"}},{"id":8,"user":{"login":"dave","full_name":"Fixes bob/secret#3"}}]`, "X-Total-Count", "2"), outside},
		{"the reviewers clean", "topic", "bob", "Bob", fakeWith(200, reviewedBy, "Content-Type", "text/plain"),
			fakeWith(200, `[{"id":7,"user":{"login":"carol","full_name":"Carol"}}]`, "X-Total-Count", "1"), ""},
		{"the reviewers unreadable", "topic", "bob", "Bob", fakeWith(200, reviewedBy, "Content-Type", "text/plain"), fakeWith(500, `{"message":"boom"}`), unreadable},
		// Gitea expands the template (os.Expand) before it reads the message: a variable, or ${}, may join a reference.
		{"a template joining a reference across a variable", "topic", "bob", "Bob", fakeWith(200, "Fixes ${HeadBranch}/secret#3", "Content-Type", "text/plain"), fakeAnswer{}, `reference "topic/secret"`},
		{"a template joining a reference across ${}", "topic", "bob", "Bob", fakeWith(200, "Fixes bob/${}secret#3", "Content-Type", "text/plain"), fakeAnswer{}, outside},
		// Gitea expands a template's first line and the rest apart, cut at 5 KiB: a cut inside braces leaves "${" eaten and the rest read.
		{"a template cut inside a variable's braces", "topic", "bob", "Bob", fakeWith(200, cutOpen, "Content-Type", "text/plain"), fakeAnswer{}, outside},
		{"a template across its first line", "topic", "bob", "Bob", fakeWith(200, "Title ${\n${BaseRepoOwnerName}/secret#3 }", "Content-Type", "text/plain"), fakeAnswer{}, `reference "alice/secret"`},
		// Inside braces: read by a Gitea whose DefaultMergeMessageSize cuts the template there.
		{"a reference inside a variable's braces", "topic", "bob", "Bob", fakeWith(200, "Title\n${ Fixes bob/secret#3 }", "Content-Type", "text/plain"), fakeAnswer{}, outside},
		// A rebase expands CommitTitle and CommitBody with the message of the commit it amends.
		{"a template joining a reference across a commit's title", "topic", "bob", "Bob", fakeWith(200, "Fixes bob/${CommitTitle}#3", "Content-Type", "text/plain"), fakeAnswer{}, `reference "bob/clean"`},
		{"a template of variables", "topic", "bob", "Bob", fakeWith(200, "${PullRequestTitle} (${PullRequestReference}) ${BaseRepoOwnerName}/${BaseRepoName}#1", "Content-Type", "text/plain"), fakeAnswer{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			commits, _ := json.Marshal([]any{map[string]any{"sha": headSHA, "commit": map[string]any{"message": "clean",
				"author": map[string]any{"name": tc.author}, "committer": map[string]any{"name": "bob"}}}})
			f := newScriptedGitea(t).user("carol").json(repoPath, map[string]any{"default_branch": "main"}).
				json(prPath, map[string]any{"number": 1, "user": map[string]any{"login": "bob", "full_name": tc.poster}, "base": map[string]any{"ref": "main"},
					"head": map[string]any{"sha": headSHA, "ref": tc.head, "repo": map[string]any{"full_name": "alice/demo", "default_branch": "main"}}}).
				answer("GET", prPath+"/commits", fakeWith(200, string(commits), "X-Total-Count", "1")).answer("GET", template, tc.template).on("POST", prPath+"/merge", 200)
			if tc.reviews.status != 0 {
				f.answer("GET", prPath+"/reviews", tc.reviews)
			}
			out, reason, merged := demoMerge(t, f, config, "squash")
			if merged != (tc.reason == "") || !strings.Contains(reason, tc.reason) {
				t.Errorf("merged %v, reason %q; want %q: %v", merged, reason, tc.reason, out)
			}
			for _, r := range f.requests() {
				if r.Path == template && r.Query != "ref=main" {
					t.Errorf("the template read at %q, want ref=main", r.Query)
				}
			}
		})
	}
}

// TestLiveAllowlistEdits: under repositories, an edit of a title or text, a
// deleted comment or issue (its comments, its dependency links) and a started
// stopwatch (the running one it stops) are judged by what Gitea holds, and
// deleting a fork by the parent whose pull requests it closes.
func TestLiveAllowlistEdits(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "demo-admin", "repositories": ["alice/demo"],
		"allowed_operations": ["gitea.read", "gitea.issue.edit", "gitea.repo.admin", "gitea.issue.delete", "gitea.issue.comment"]}]}`), 0o600)
	issue := func(body string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(issuePath, map[string]any{"number": 1, "body": body}).on("PATCH", issuePath, 201, `{"number":1}`)
		}
	}
	edit := func(body map[string]any) map[string]any {
		return map[string]any{"operation": "issueEditIssue", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": body}}
	}
	repo := func(parent any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"full_name": "alice/demo", "parent": parent}).on("DELETE", repoPath, 204).
				answer("GET", repoPath+"/issues", fakeWith(200, "[]", "X-Total-Count", "0")).answer("GET", repoPath+"/issues/comments", fakeWith(200, "[]", "X-Total-Count", "0"))
		}
	}
	del := map[string]any{"operation": "repoDelete", "arguments": map[string]any{"owner": "alice", "repo": "demo"}}
	const commentPath = repoPath + "/issues/comments/7"
	deleted := func(comments, blocks string) func(f *scriptedGitea) { // an issue to delete, its comments and the issues it blocks
		return func(f *scriptedGitea) {
			issue("notes")(f)
			f.answer("GET", issuePath+"/comments", fakeWith(200, comments, "X-Total-Count", strconv.Itoa(strings.Count(comments, "body"))))
			f.answer("GET", issuePath+"/dependencies", fakeWith(200, "[]", "X-Total-Count", "0")).json(issuePath+"/blocks", json.RawMessage(blocks)).on("DELETE", issuePath, 204)
		}
	}
	delIssue := map[string]any{"operation": "issueDelete", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1}}
	stopwatch := func(running string) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			issue("notes")(f)
			f.answer("GET", "/user/stopwatches", fakeWith(200, running, "X-Total-Count", "1")).on("POST", issuePath+"/stopwatch/start", 201)
		}
	}
	start := map[string]any{"operation": "issueStartStopWatch", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1}}
	const getIssue, patch, getRepo = "GET " + issuePath, "PATCH " + issuePath, "GET " + repoPath
	denied := func(perm, reason string, sent ...string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: perm, Reason: reason, Sent: sent}
	}
	runLiveCases(t, []liveCase{
		{"a new title, the description clean", "demo-admin", issue("notes"), "gitea_call_operation", edit(map[string]any{"title": "t"}),
			liveGot{Sent: []string{getIssue, getIssue, patch}}},
		{"a new title, the description referencing outside", "demo-admin", issue("closes bob/secret#1"), "gitea_call_operation", edit(map[string]any{"title": "t"}),
			denied("gitea.issue.edit", `issueEditIssue withdraws the cross-references of the stored text, and it references "bob/secret", outside the repositories of demo-admin`, getIssue, getIssue)},
		{"a new title and description, the stored description referencing outside", "demo-admin", issue("closes bob/secret#1"), "gitea_call_operation", edit(map[string]any{"title": "t", "body": "new"}),
			denied("gitea.issue.edit", `issueEditIssue withdraws the cross-references of the stored text, and it references "bob/secret", outside the repositories of demo-admin`, getIssue, getIssue)},
		{"a new description, the stored one clean", "demo-admin", issue("notes"), "gitea_call_operation", edit(map[string]any{"body": "new"}),
			liveGot{Sent: []string{getIssue, getIssue, patch}}},
		{"delete a comment referencing outside", "demo-admin", func(f *scriptedGitea) {
			f.user("bob").json(commentPath, map[string]any{"id": 7, "body": "see bob/secret#1", "user": map[string]any{"login": "bob"}}).on("DELETE", commentPath, 204)
		}, "gitea_call_operation", map[string]any{"operation": "issueDeleteComment", "arguments": map[string]any{"owner": "alice", "repo": "demo", "id": 7}},
			denied("gitea.issue.comment", `issueDeleteComment withdraws the cross-references of the stored text, and it references "bob/secret", outside the repositories of demo-admin`, "GET "+commentPath, "GET "+commentPath)},
		{"delete an issue, a comment referencing outside", "demo-admin", deleted(`[{"body":"see bob/secret#1"}]`, `[]`), "gitea_call_operation", delIssue,
			denied("gitea.issue.delete", `issueDelete withdraws the cross-references of the stored text, and it references "bob/secret", outside the repositories of demo-admin`, getIssue, getIssue, "GET "+issuePath+"/comments")},
		{"delete an issue blocking one outside", "demo-admin", deleted(`[]`, `[{"number":3,"repository":{"full_name":"bob/secret"}}]`), "gitea_call_operation", delIssue,
			denied("gitea.issue.delete", `deleting the issue deletes its dependency link with bob/secret#3, outside the repositories of demo-admin`, getIssue, getIssue, "GET "+issuePath+"/comments", "GET "+issuePath+"/dependencies", "GET "+issuePath+"/blocks")},
		{"delete an issue linked within", "demo-admin", deleted(`[]`, `[{"number":3,"repository":{"full_name":"alice/demo"}}]`), "gitea_call_operation", delIssue,
			liveGot{Sent: []string{getIssue, getIssue, "GET " + issuePath + "/comments", "GET " + issuePath + "/dependencies", "GET " + issuePath + "/blocks", "DELETE " + issuePath}}},
		{"start a stopwatch, one running outside", "demo-admin", stopwatch(`[{"repo_owner_name":"bob","repo_name":"secret","issue_index":2}]`), "gitea_call_operation", start,
			denied("gitea.issue.edit", `starting a stopwatch stops yours running on bob/secret#2, writing its time and a comment there, outside the repositories of demo-admin`, getIssue, "GET /user/stopwatches")},
		{"start a stopwatch, one running within", "demo-admin", stopwatch(`[{"repo_owner_name":"alice","repo_name":"demo","issue_index":2}]`), "gitea_call_operation", start,
			liveGot{Sent: []string{getIssue, "GET /user/stopwatches", "POST " + issuePath + "/stopwatch/start"}}},
		{"delete a repository", "demo-admin", repo(nil), "gitea_call_operation", del, liveGot{Sent: []string{getRepo, getRepo + "/issues", getRepo + "/issues/comments", "DELETE " + repoPath}}},
		{"delete a fork of a repository outside", "demo-admin", repo(map[string]any{"full_name": "bob/up"}), "gitea_call_operation", del,
			denied("gitea.repo.admin", `deleting "alice/demo" closes the pull requests it heads in "bob/up", the repository it forks, outside the repositories of demo-admin`, getRepo)},
	}, "GITEA_MCP_CONFIG", config)
}

// TestMergeHints: found by the user-experience test. A merge refused only
// because Gitea still checked the pull request for conflicts (mergeable
// false for a few seconds after another merge moved the base) answered
// "merging needs a merger profile ... this server runs as gitea-merger",
// which sends the model after the wrong cause. The hint now follows the
// gates that failed; the role's hint stays for the identity's and policy's.
func TestMergeHints(t *testing.T) {
	t.Parallel()
	args := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "head_sha": headSHA, "confirm": "MERGE PR 1"}
	const role = "merging needs a merger profile"
	for _, tc := range []struct {
		name, author, head string
		mergeable          any
		want, not          string
	}{
		{"mergeable false", "alice", headSHA, false, "check again with gitea_check_pr_eligibility shortly", role},
		{"head moved", "alice", otherSHA, true, "the head moved since head_sha", role},
		{"own pull request", "bob", headSHA, true, role, "check again"},
		{"shown at an older commit", "alice", headSHA, true, "", role}, // the policy gate's detail says why
		{"a profile without merge", "alice", headSHA, true, "merging needs a merger profile (gitea-merger) whose identity did not author the pull request; this server runs as gitea-reviewer", "check again"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newScriptedGitea(t).user("bob").json(prPath, fakePR(tc.author, "open", tc.head, tc.mergeable))
			if tc.name == "shown at an older commit" {
				f.answer("GET", pullRef, fakeAnswer{status: 200, body: fmt.Sprintf(`[{"ref":"refs/pull/1/head","object":{"sha":%q}}]`, otherSHA)})
			}
			profile := "gitea-merger"
			if tc.name == "a profile without merge" {
				profile = "gitea-reviewer"
			}
			s := f.server(t, "GITEA_MCP_PROFILE", profile)
			check := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "action": "merge"}
			for tool, args := range map[string]map[string]any{"gitea_merge_pr": args, "gitea_check_pr_eligibility": check} {
				if tool == "gitea_check_pr_eligibility" && tc.head != headSHA {
					continue // eligibility reads the head; it is not compared
				}
				out, _ := fakeCall(t, t.Context(), s, tool, args)
				if hint := str0(get(out, "data.hint")); !strings.Contains(hint, tc.want) || strings.Contains(hint, tc.not) {
					t.Errorf("%s: hint %q, want it to hold %q and not %q", tool, hint, tc.want, tc.not)
				}
			}
		})
	}
}

// TestShownHead: an approval or a merge is refused unless Gitea shows the
// pull request (refs/pull/N/head, where it reads its commits, files and
// diff) at the head it names: reopened after a push while closed, Gitea
// shows the old commits (TestE2ERedteam8ReopenedStaleFiles).
func TestShownHead(t *testing.T) {
	t.Parallel()
	approve := map[string]any{"owner": "alice", "repo": "demo", "index": 1, "event": "APPROVED", "commit_id": headSHA}
	merge := map[string]any{"operation": "repoMergePullRequest", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1,
		"body": map[string]any{"do": "merge", "head_commit_id": headSHA, "delete_branch_after_merge": false}}}
	shown := func(answer fakeAnswer) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(prPath, fakePR("alice", "open", headSHA, true)).answer("GET", pullRef, answer).
				on("POST", prPath+"/reviews", 200, `{"id":7}`).on("POST", prPath+"/merge", 200)
		}
	}
	at := func(ref, sha string) fakeAnswer {
		return fakeAnswer{status: 200, body: fmt.Sprintf(`[{"ref":%q,"object":{"sha":%q}}]`, ref, sha)}
	}
	stale := "Gitea shows the pull request's commits, files and diff at " + otherSHA + " (refs/pull/1/head), not at its head " + headSHA +
		" (pushed while it was closed, or a push Gitea has not yet taken in): what was reviewed is not what would be approved or merged; " +
		"review again once Gitea shows the head (a new push to the head branch updates it); nothing was sent"
	unread := "cannot read refs/pull/1/head from Gitea, where it shows the pull request's commits, files and diff; refusing"
	denied := func(perm, reason string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: perm, Reason: reason, Sent: []string{"GET " + prPath}}
	}
	runLiveCases(t, []liveCase{
		{"approve, shown at the head", "gitea-reviewer", shown(at("refs/pull/1/head", headSHA)), "gitea_review_pr", approve,
			liveGot{Sent: []string{"GET " + prPath, "POST " + prPath + "/reviews"}}},
		{"approve, shown at an older commit", "gitea-reviewer", shown(at("refs/pull/1/head", otherSHA)), "gitea_review_pr", approve, denied(permApprove, stale)},
		{"merge, shown at an older commit", "gitea-merger", shown(at("refs/pull/1/head", otherSHA)), "gitea_call_operation", merge, denied(permMerge, stale)},
		{"merge, the ref unreadable", "gitea-merger", shown(fakeAnswer{status: 500, body: `{"message":"boom"}`}), "gitea_call_operation", merge, denied(permMerge, unread)},
		{"merge, only another ref listed", "gitea-merger", shown(at("refs/pull/1/headless", headSHA)), "gitea_call_operation", merge, denied(permMerge, unread)},
	})
}
