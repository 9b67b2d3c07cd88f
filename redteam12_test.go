package main

import (
	"encoding/json"
	"testing"
)

// TestEmptyRepoLanding: in a repository with no commit yet, a contents write
// to any branch lands on the default branch, since Gitea makes the branch of
// the first commit the default branch (TestE2ERedteam12EmptyRepoDefault on
// Gitea); once the repository has a commit, only the default branch is.
func TestEmptyRepoLanding(t *testing.T) {
	t.Parallel()
	write := map[string]any{"operation": "repoCreateFile", "arguments": map[string]any{"owner": "alice", "repo": "demo", "filepath": "a.md",
		"body": map[string]any{"content": "aGk=", "new_branch": "topic"}}}
	repo := func(empty bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			f.user("bob").json(repoPath, map[string]any{"default_branch": "main", "empty": empty}).on("POST", repoPath+"/contents/a.md", 201, `{}`)
		}
	}
	runLiveCases(t, []liveCase{
		{"a new branch of an empty repository", "gitea-author", repo(true), "gitea_call_operation", write,
			liveGot{IsError: true, Kind: "permission_denied", Perm: permMerge, Reason: `repoCreateFile lands on "topic", the branch Gitea makes the default branch of the empty repository "alice/demo": that is landing code without review, which also needs gitea.pr.merge (` +
				reasonOf(t, "gitea-author", permMerge) + `) or allow_default_branch_writes in the profile; write to a new branch (new_branch) and open a pull request`, Sent: []string{"GET " + repoPath}}},
		{"a new branch of a repository with commits", "gitea-author", repo(false), "gitea_call_operation", write,
			liveGot{Sent: []string{"GET " + repoPath, "POST " + repoPath + "/contents/a.md"}}},
	})
}

// TestReviewRequestUndoes: asking a reviewer again for a review whose
// approval or rejection stands official, or removing an official review
// request, needs gitea.repo.admin, as dismissing a review does: Gitea clears
// the official flag of the first and drops the second, and branch
// protection counts only official reviews
// (TestE2ERedteam12ReRequestUndoesRejection,
// TestE2ERedteam12RemoveOfficialRequest on Gitea). A reviewer named by
// e-mail cannot be compared and counts as any; a dismissed or unofficial
// review, a comment, or another reviewer is no obstacle, and unreadable
// reviews are a refusal.
func TestReviewRequestUndoes(t *testing.T) {
	t.Parallel()
	const reviews, requests = prPath + "/reviews", prPath + "/requested_reviewers"
	call := func(id string, names ...any) map[string]any {
		return map[string]any{"operation": id, "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"reviewers": names}}}
	}
	ask := func(names ...any) map[string]any { return call("repoCreatePullReviewRequests", names...) }
	drop := func(names ...any) map[string]any { return call("repoDeletePullReviewRequests", names...) }
	listed := func(state string, official, dismissed bool) func(f *scriptedGitea) {
		return func(f *scriptedGitea) {
			b, _ := json.Marshal([]map[string]any{{"user": map[string]any{"login": "carol"}, "state": state, "official": official, "dismissed": dismissed}})
			f.user("bob").answer("GET", reviews, fakeWith(200, string(b), "X-Total-Count", "1")).on("POST", requests, 201, `[]`).on("DELETE", requests, 204)
		}
	}
	why := reasonOf(t, "gitea-author", "gitea.repo.admin")
	undone := func(undo string) liveGot {
		return liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.repo.admin", Reason: undo + ": that undoes it as dismissing a review does; " + why + "; or let them review", Sent: []string{"GET " + reviews}}
	}
	again := undone(`"carol" has approved or rejected this pull request, and asking them again for a review makes Gitea's branch protection count that review no more (it counts only official reviews)`)
	removed := undone(`the review asked of "carol" is official, which Gitea's branch protection may count until they review (block_on_official_review_requests), and removing the request counts it no more`)
	asked, dropped := liveGot{Sent: []string{"GET " + reviews, "POST " + requests}}, liveGot{Sent: []string{"GET " + reviews, "DELETE " + requests}}
	runLiveCases(t, []liveCase{
		{"a rejection", "gitea-author", listed("REQUEST_CHANGES", true, false), "gitea_call_operation", ask("Carol"), again},
		{"an approval, by e-mail", "gitea-author", listed("APPROVED", true, false), "gitea_call_operation", ask("dave", "c@example.com"), again},
		{"a rejection, under gitea-owner", "gitea-owner", listed("REQUEST_CHANGES", true, false), "gitea_call_operation", ask("carol"), asked},
		{"a dismissed rejection", "gitea-author", listed("REQUEST_CHANGES", true, true), "gitea_call_operation", ask("carol"), asked},
		{"an unofficial rejection", "gitea-author", listed("REQUEST_CHANGES", false, false), "gitea_call_operation", ask("carol"), asked},
		{"a comment", "gitea-author", listed("COMMENT", true, false), "gitea_call_operation", ask("carol"), asked},
		{"another reviewer", "gitea-author", listed("REQUEST_CHANGES", true, false), "gitea_call_operation", ask("dave"), asked},
		{"an official request removed", "gitea-author", listed("REQUEST_REVIEW", true, false), "gitea_call_operation", drop("carol"), removed},
		{"an official request asked again", "gitea-author", listed("REQUEST_REVIEW", true, false), "gitea_call_operation", ask("carol"), asked},
		{"an unofficial request removed", "gitea-author", listed("REQUEST_REVIEW", false, false), "gitea_call_operation", drop("carol"), dropped},
		{"a rejection's reviewer removed", "gitea-author", listed("REQUEST_CHANGES", true, false), "gitea_call_operation", drop("carol"), dropped},
		{"reviews unreadable", "gitea-author", func(f *scriptedGitea) { f.user("bob").on("GET", reviews, 500, `{"message":"boom"}`) }, "gitea_call_operation", drop("dave"),
			liveGot{IsError: true, Kind: "permission_denied", Perm: "gitea.pr.create", Reason: "cannot read the pull request's reviews from Gitea to tell whether the request undoes one; refusing", Sent: []string{"GET " + reviews}}},
		{"teams only", "gitea-author", func(f *scriptedGitea) { f.user("bob").on("POST", requests, 201, `[]`) }, "gitea_call_operation",
			map[string]any{"operation": "repoCreatePullReviewRequests", "arguments": map[string]any{"owner": "alice", "repo": "demo", "index": 1, "body": map[string]any{"team_reviewers": []any{"core"}}}},
			liveGot{Sent: []string{"POST " + requests}}},
	})
}
