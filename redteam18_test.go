package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// TestDeleteRestoresApproval: deleting an official review makes Gitea count
// the reviewer's latest remaining review, an approval left undismissed by a
// review submitted from a pending one included, so a deletion that restores
// an approval needs what approving needs: gitea.pr.approve, and the
// approval given at the live head (TestE2ERedteam18DeleteRestoresApproval on
// Gitea). A dismissed approval, an unofficial review deleted, a later
// rejection or request, or another's approval restore nothing; unreadable
// reviews, a list without the review, or an unreadable head are a refusal.
func TestDeleteRestoresApproval(t *testing.T) {
	t.Parallel()
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles": [{"profile_name": "blocker",
		"allowed_operations": ["gitea.read", "gitea.pr.review", "gitea.pr.request_changes"]}]}`), 0o600)
	const reviews, one = prPath + "/reviews", prPath + "/reviews/7"
	del := map[string]any{"operation": "repoDeletePullReview", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "id": 7}}
	rv := func(id int, login, state, commit string, official, dismissed bool) map[string]any {
		return map[string]any{"id": id, "user": map[string]any{"login": login}, "state": state, "commit_id": commit, "official": official, "dismissed": dismissed}
	}
	rejection := rv(7, "carol", "REQUEST_CHANGES", headSHA, true, false)
	listed := func(rs ...map[string]any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(rs)
			f.user("carol").json(one, map[string]any{"id": 7, "user": map[string]any{"login": "carol"}}).
				answer("GET", reviews, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(rs)))).json(prPath, fakePR("bob", "open", headSHA, true)).on("DELETE", one, 204)
		}
	}
	_, noApprove := (&profile{Name: "blocker"}).allows(permApprove)
	undo := func(at string) string {
		return `deleting this official review makes Gitea count "carol"'s earlier approval, of ` + at + `, again (it marks their latest remaining review official)`
	}
	deleted := liveGot{Sent: []string{"GET " + one, "GET " + reviews, "DELETE " + one}}
	runLiveCases(t, []liveCase{
		{"an approval restored, without gitea.pr.approve", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, false), rejection), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permApprove, Reason: undo(headSHA) + ": that approves; " + noApprove, Sent: []string{"GET " + one, "GET " + reviews}}},
		{"an approval of another head restored", "gitea-reviewer", listed(rv(5, "carol", "APPROVED", otherSHA, false, false), rejection), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permApprove, Reason: undo(otherSHA) + ", not of the pull request's head " + headSHA +
				": that approves a head it was not given at; approve the head with repoCreatePullReview (event APPROVED, commit_id) instead; nothing was sent", Sent: []string{"GET " + one, "GET " + reviews, "GET " + prPath}}},
		{"an approval of the head restored", "gitea-reviewer", listed(rv(5, "carol", "APPROVED", headSHA, false, false), rejection), "gitea_call_operation", del,
			liveGot{Sent: []string{"GET " + one, "GET " + reviews, "GET " + prPath, "DELETE " + one}}},
		{"an approval restored, the head unreadable", "gitea-reviewer", func(f *scriptedGitea) {
			listed(rv(5, "carol", "APPROVED", headSHA, false, false), rejection)(f)
			f.on("GET", prPath, 500, `{"message":"boom"}`)
		}, "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permApprove, Reason: "cannot read the pull request's head from Gitea; refusing", Sent: []string{"GET " + one, "GET " + reviews, "GET " + prPath}}},
		{"a dismissed approval", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, true), rejection), "gitea_call_operation", del, deleted},
		{"an unofficial review deleted", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, false), rv(7, "carol", "REQUEST_CHANGES", headSHA, false, false)), "gitea_call_operation", del, deleted},
		{"a request after the approval", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, false), rejection, rv(9, "carol", "REQUEST_REVIEW", "", false, false)), "gitea_call_operation", del, deleted},
		{"a comment after the approval", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, false), rejection, rv(9, "carol", "COMMENT", headSHA, false, false)), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permApprove, Reason: undo(headSHA) + ": that approves; " + noApprove, Sent: []string{"GET " + one, "GET " + reviews}}},
		{"another's approval", "blocker", listed(rv(5, "dave", "APPROVED", headSHA, false, false), rejection), "gitea_call_operation", del, deleted},
		{"the review not listed", "blocker", listed(rv(5, "carol", "APPROVED", headSHA, false, false)), "gitea_call_operation", del,
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.review", Reason: "cannot read the pull request's reviews from Gitea to tell whether deleting this one makes an earlier approval count again; refusing", Sent: []string{"GET " + one, "GET " + reviews}}},
	}, "GITEA_MCP_CONFIG", config)
}

// TestUnrequestRestoresApproval: removing a review request makes Gitea mark
// the reviewer's latest remaining review official once they are an official
// reviewer, whatever the request was, so removing one whose reviewer's
// latest review before it is an approval neither official nor dismissed
// needs gitea.repo.admin, as undismissing a review does
// (TestE2ERedteam18UnrequestRestoresApproval on Gitea). A dismissed or
// official approval, a rejection in between, a request older than the
// approval, no request at all or another reviewer's approval restore
// nothing.
func TestUnrequestRestoresApproval(t *testing.T) {
	t.Parallel()
	const reviews, requests = prPath + "/reviews", prPath + "/requested_reviewers"
	drop := func(names ...any) map[string]any {
		return map[string]any{"operation": "repoDeletePullReviewRequests", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"reviewers": names}}}
	}
	rv := func(id int, login, state string, official, dismissed bool) map[string]any {
		return map[string]any{"id": id, "user": map[string]any{"login": login}, "state": state, "official": official, "dismissed": dismissed}
	}
	listed := func(rs ...map[string]any) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal(rs)
			f.user("bob").answer("GET", reviews, fakeWith(200, string(b), "X-Total-Count", strconv.Itoa(len(rs)))).on("DELETE", requests, 204)
		}
	}
	request := rv(5, "carol", "REQUEST_REVIEW", false, false)
	restored := liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Reason: `removing the review asked of "carol" makes Gitea mark their latest remaining review official once they are an official reviewer, ` +
		`and that is an approval branch protection did not count: that counts it as undismissing a review does; ` + reasonOf(t, "gitea-author", "gitea.repo.admin") + "; or let them review", Sent: []string{"GET " + reviews}}
	dropped := liveGot{Sent: []string{"GET " + reviews, "DELETE " + requests}}
	runLiveCases(t, []liveCase{
		{"an unofficial approval", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), request), "gitea_call_operation", drop("Carol"), restored},
		{"an unofficial approval, listed after the request", "gitea-author", listed(request, rv(3, "carol", "APPROVED", false, false)), "gitea_call_operation", drop("carol"), restored},
		{"an unofficial approval, by e-mail", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), request), "gitea_call_operation", drop("dave", "c@example.com"), restored},
		{"an unofficial approval, under gitea-owner", "gitea-owner", listed(rv(3, "carol", "APPROVED", false, false), request), "gitea_call_operation", drop("carol"), dropped},
		{"a dismissed approval", "gitea-author", listed(rv(3, "carol", "APPROVED", false, true), request), "gitea_call_operation", drop("carol"), dropped},
		{"an official approval", "gitea-author", listed(rv(3, "carol", "APPROVED", true, false), request), "gitea_call_operation", drop("carol"), dropped},
		{"a rejection in between", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), rv(4, "carol", "REQUEST_CHANGES", false, false), request), "gitea_call_operation", drop("carol"), dropped},
		{"a comment in between", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), rv(4, "carol", "COMMENT", false, false), request), "gitea_call_operation", drop("carol"), restored},
		{"a request older than the approval", "gitea-author", listed(rv(3, "carol", "REQUEST_REVIEW", false, false), rv(5, "carol", "APPROVED", false, false)), "gitea_call_operation", drop("carol"), dropped},
		{"no request, an approval after another", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), rv(5, "carol", "APPROVED", true, false)), "gitea_call_operation", drop("carol"), dropped},
		{"another reviewer's approval", "gitea-author", listed(rv(3, "dave", "APPROVED", false, false), request), "gitea_call_operation", drop("carol"), dropped},
		{"another reviewer named", "gitea-author", listed(rv(3, "carol", "APPROVED", false, false), request), "gitea_call_operation", drop("dave"), dropped},
	})
}
