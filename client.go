package main

// The Gitea client (README, "Results"): the one HTTP exchange of the
// executor with Gitea. The token goes only to GITEA_URL, in the
// Authorization header; no redirect is followed; only a GET Gitea answered
// 429 is sent again; an answer is read within its bound (MAX_BINARY_BYTES for
// binary, maxReadBytes otherwise) or not at all; and a transport fault is
// named in words that show neither Gitea's address nor the server's. It
// decides nothing: the executor sends only what the policy allowed, and the
// reads of Gitea's live state the policy needs (get, live, listCommits,
// allCommits, rawText) go through the same exchange.

import (
	"bytes"
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime/multipart"
	"net"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// giteaClient returns the HTTP client for Gitea: GITEA_TIMEOUT bounds each
// request, the CAs of GITEA_CA_FILE (if set) replace the system's, and no
// redirect is followed (redirectMessage says why).
func giteaClient(cfg *config) *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.TLSClientConfig = &tls.Config{RootCAs: cfg.roots}
	t.MaxIdleConnsPerHost = maxInFlight // one host, up to maxInFlight requests at once
	return &http.Client{Timeout: cfg.timeout, Transport: t,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// loadCA reads GITEA_CA_FILE: the PEM certificates of the CAs that sign a
// self-hosted Gitea's certificate.
func loadCA(path string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("GITEA_CA_FILE: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("GITEA_CA_FILE %q: no PEM certificate in it", path)
	}
	return pool, nil
}

// formFile is a file upload sent as multipart/form-data.
type formFile struct {
	field   string
	content []byte
}

// Retries of a GET that Gitea answered 429 Too Many Requests: at most
// maxRetries more attempts, each after the Retry-After Gitea asks for (one
// second when it names none), and none when it asks for longer than
// maxRetryWait or in a form that cannot be read. Writes are never retried.
const (
	maxRetries   = 2
	maxRetryWait = 5 * time.Second
)

// send makes the HTTP request to Gitea and reads the answer within bounds.
func (x *executor) send(ctx context.Context, op *operation, p string, query url.Values, body any) (*sent, error) {
	ex := &sent{method: op.Method, path: p, query: query}
	u := x.cfg.apiBase + p
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	var payload []byte
	contentType := ""
	switch b := body.(type) {
	case nil:
	case formFile:
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		fw, _ := w.CreateFormFile(b.field, b.field)
		fw.Write(b.content)
		w.Close()
		payload, contentType = buf.Bytes(), w.FormDataContentType()
	default:
		if s, ok := b.(string); ok && op.ID == "renderMarkdownRaw" {
			payload, contentType = []byte(s), "text/plain"
			break
		}
		payload, contentType = encode(b), "application/json"
	}
	_, c := x.active(ctx)
	var resp *http.Response
	for {
		req, err := http.NewRequestWithContext(ctx, op.Method, u, bytes.NewReader(payload)) // none: no body
		if err != nil {
			return ex, err
		}
		req.Header.Set("Authorization", "token "+c.token)
		if c.sudo != "" {
			req.Header.Set("Sudo", c.sudo)
		}
		req.Header.Set("Accept", "application/json")
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		if resp, err = x.client.Do(req); err != nil {
			return ex, err
		}
		wait, retry := retryWait(resp, op.Method, ex.retries)
		if !retry {
			break
		}
		resp.Body.Close()
		ex.retries++
		select {
		case <-ctx.Done():
			return ex, ctx.Err()
		case <-time.After(wait): // collected once unreferenced (Go 1.23)
		}
	}
	defer resp.Body.Close()
	ex.status, ex.header = resp.StatusCode, resp.Header
	ex.class = classifyMedia(resp.Header.Get("Content-Type"))
	limit := maxReadBytes
	if ex.class == binaryBody {
		limit = x.cfg.maxBinary // binary: returned whole or not at all
	}
	if resp.ContentLength > int64(limit) {
		return ex, tooLarge(limit)
	}
	var err error
	ex.body, err = io.ReadAll(io.LimitReader(resp.Body, int64(limit)+1))
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return ex, &kindError{"truncated_body", fmt.Errorf("the answer broke off after %d bytes: the connection closed before its end", len(ex.body))}
	}
	if err != nil {
		return ex, err
	}
	if len(ex.body) > limit {
		return ex, tooLarge(limit)
	}
	return ex, nil
}

// retryWait returns how long to wait before sending a GET again that Gitea
// answered 429, and false when it is not sent again.
func retryWait(resp *http.Response, method string, retries int) (time.Duration, bool) {
	if resp.StatusCode != http.StatusTooManyRequests || method != http.MethodGet || retries >= maxRetries {
		return 0, false
	}
	v := resp.Header.Get("Retry-After")
	if v == "" {
		return time.Second, true
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(n) * time.Second, n >= 0 && n <= int(maxRetryWait/time.Second)
	}
	if t, err := http.ParseTime(v); err == nil {
		d := max(time.Until(t), 0)
		return d, d <= maxRetryWait
	}
	return 0, false
}

// tooLarge reports an answer over the read bound for its content type.
func tooLarge(limit int) error {
	return &kindError{"payload_too_large", fmt.Errorf("answer larger than %d bytes, the bound for its content type (MAX_BINARY_BYTES for binary)", limit)}
}

// fault names what went wrong with a request to Gitea, in words that name
// neither its host nor its address.
func (x *executor) fault(err error) (kind, msg string) {
	var ke *kindError
	var dns *net.DNSError
	var ne net.Error
	var ue *url.Error
	switch {
	case errors.As(err, &ke):
		return ke.kind, ke.Error()
	case errors.Is(err, context.Canceled):
		return "cancelled", "the request was cancelled"
	case errors.As(err, &dns):
		return "dns_error", "cannot resolve the host name of GITEA_URL: " + dns.Err
	case errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout():
		return "timeout", fmt.Sprintf("no complete answer from Gitea within GITEA_TIMEOUT (%v)", x.cfg.timeout)
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection_refused", "Gitea refused the connection: is it running at GITEA_URL?"
	}
	if why := tlsFault(err); why != "" {
		return "tls_error", "TLS with Gitea failed: " + why
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		err = oe.Err // without Gitea's address and the server's
	} else if errors.As(err, &ue) {
		err = ue.Err // without the method and URL, which the envelope has
	}
	return "network_error", "the connection to Gitea failed: " + err.Error()
}

// tlsFault says why a TLS handshake failed, or "" for an error that is not
// one.
func tlsFault(err error) string {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var invalid x509.CertificateInvalidError
	var verify *tls.CertificateVerificationError
	var record tls.RecordHeaderError
	var alert tls.AlertError
	switch {
	case errors.As(err, &unknown):
		return "its certificate is signed by an unknown authority (for a private CA, set GITEA_CA_FILE)"
	case errors.As(err, &host):
		return "its certificate is not valid for the host name of GITEA_URL"
	case errors.As(err, &invalid):
		return "its certificate is expired or not valid"
	case errors.As(err, &verify):
		return "its certificate cannot be verified"
	case errors.As(err, &record) || strings.HasSuffix(err.Error(), "server gave HTTP response to HTTPS client"): // net/http's words, not a type
		return "it does not speak TLS (should GITEA_URL start with http://?)"
	case errors.As(err, &alert):
		return "it refused the handshake (" + alert.Error() + ")"
	}
	return ""
}

// kindError is an error with the error.kind it is reported under.
type kindError struct {
	kind string
	err  error
}

func (e *kindError) Error() string { return e.err.Error() }

// route returns operation opID and its path with params, for a policy read.
func (x *executor) route(opID string, params map[string]string) (*operation, string, bool) {
	op, ok := x.cat.byID[opID]
	if !ok {
		return nil, "", false
	}
	p, err := x.routes().expand(op.routeSpec(), params)
	return op, p, err == nil
}

// live reads the current state of an object from Gitea for a policy check,
// with the path parameters of the call being checked. It reports success.
func (x *executor) live(ctx context.Context, opID string, params map[string]string, v any) bool {
	return x.get(ctx, opID, params, v) == http.StatusOK
}

// get reads an object as live does and returns Gitea's status: 0 when it
// cannot tell (nothing sent, no answer, or one v cannot hold).
func (x *executor) get(ctx context.Context, opID string, params map[string]string, v any) int {
	op, p, ok := x.route(opID, params)
	if !ok {
		return 0
	}
	ex, err := x.send(ctx, op, p, nil, nil)
	if err != nil || ex.status == http.StatusOK && v != nil && json.Unmarshal(ex.body, v) != nil {
		return 0
	}
	return ex.status
}

// shownHead reports why what Gitea shows of a pull request (its commits,
// files and diff, read at refs/pull/N/head) is not of its head, which an
// approval (opID repoCreatePullReview) or a merge names, or "": Gitea moves
// that ref on a push only while the pull request is open, and reopening it
// does not, so a head pushed while it was closed would be approved or
// merged unseen.
func (x *executor) shownHead(ctx context.Context, opID string, params map[string]string, head string) string {
	if opID != "repoCreatePullReview" && opID != "repoMergePullRequest" {
		return ""
	}
	name := "pull/" + params["index"] + "/head"
	at, ok := x.pullRef(ctx, params)
	if !ok {
		return "cannot read refs/" + name + " from Gitea, where it shows the pull request's commits, files and diff; refusing"
	}
	if at == head {
		return ""
	}
	return fmt.Sprintf("Gitea shows the pull request's commits, files and diff at %s (refs/%s), not at its head %s (pushed while it was closed, "+
		"or a push Gitea has not yet taken in): what was reviewed is not what would be approved or merged; review again once Gitea shows "+
		"the head (a new push to the head branch updates it); nothing was sent", at, name, head)
}

// rawText reads the file at path on ref of repository repo: "" for none (a
// 404), false when Gitea does not say.
func (x *executor) rawText(ctx context.Context, repo map[string]string, path, ref string) (string, bool) {
	op, p, ok := x.route("repoGetRawFile", map[string]string{"owner": repo["owner"], "repo": repo["repo"], "filepath": path})
	if !ok {
		return "", false
	}
	ex, err := x.send(ctx, op, p, url.Values{"ref": {ref}}, nil)
	if err == nil && ex.status == http.StatusNotFound {
		return "", true
	}
	return string(ex.body), err == nil && ex.status == http.StatusOK
}

// branchOf returns branch if repository full (owner/name) has a branch of
// that name, else def; false when Gitea does not say.
func (x *executor) branchOf(ctx context.Context, full, branch, def string) (string, bool) {
	owner, name, _ := strings.Cut(full, "/")
	var b struct {
		Name string `json:"name"`
	}
	switch x.get(ctx, "repoGetBranch", map[string]string{"owner": owner, "repo": name, "branch": branch}, &b) {
	case http.StatusOK:
		return branch, b.Name == branch
	case http.StatusNotFound:
		return def, def != ""
	}
	return "", false
}

// reviewUndone says how a review request (opID, body) undoes a review that
// branch protection counts, which only official reviews are, or "", and
// whether Gitea listed every review: asked again, a reviewer whose approval
// or rejection stands has its official flag cleared (models/issues/review.go
// AddReviewRequest); removed, an official request no longer holds back the
// merge (block_on_official_review_requests). A reviewer named by e-mail
// cannot be compared: it counts as any.
func (x *executor) reviewUndone(ctx context.Context, opID string, params map[string]string, body map[string]any) (string, bool) {
	names, _ := body["reviewers"].([]any)
	if len(names) == 0 {
		return "", true
	}
	states, undo := []string{"APPROVED", "REQUEST_CHANGES"}, "%q has approved or rejected this pull request, and asking them again for a review makes Gitea's branch protection count that review no more (it counts only official reviews)"
	if opID == "repoDeletePullReviewRequests" {
		states, undo = []string{"REQUEST_REVIEW"}, "the review asked of %q is official, which Gitea's branch protection may count until they review (block_on_official_review_requests), and removing the request counts it no more"
	}
	reviews, ok := allPages[review](ctx, x, "repoListPullReviews", params, nil)
	for _, r := range reviews {
		for _, n := range names {
			s, _ := n.(string)
			if r.Official && !r.Dismissed && slices.Contains(states, r.State) && (strings.Contains(s, "@") || strings.EqualFold(s, r.User.Login)) {
				return fmt.Sprintf(undo, r.User.Login) + ": that undoes it as dismissing a review does", ok
			}
		}
	}
	if who := requestRestores(reviews, names); opID == "repoDeletePullReviewRequests" && who != "" {
		return fmt.Sprintf("removing the review asked of %q makes Gitea mark their latest remaining review official once they are an official reviewer, and that is an approval branch protection did not count: "+
			"that counts it as undismissing a review does", who), ok
	}
	return "", ok
}

// restoredStates are the reviews of which Gitea marks a reviewer's latest
// official again (models/issues/review.go restoreLatestOfficialReview).
var restoredStates = []string{"APPROVED", "REQUEST_CHANGES", "REQUEST_REVIEW"}

// requestRestores returns the login of a reviewer of names (one named by
// e-mail counts as any) whose latest review of restoredStates is a request
// and the latest before it an approval neither official nor dismissed:
// removing the request makes Gitea mark that approval official when they are
// an official reviewer by then (RemoveReviewRequest), whatever the request
// was, and branch protection counts it.
func requestRestores(reviews []review, names []any) string {
	latest := map[string][]review{} // by login, newest first, two at most
	for _, r := range slices.SortedFunc(slices.Values(reviews), func(a, b review) int { return cmp.Compare(b.ID, a.ID) }) {
		if k := strings.ToLower(r.User.Login); slices.Contains(restoredStates, r.State) && len(latest[k]) < 2 {
			latest[k] = append(latest[k], r)
		}
	}
	for _, n := range names {
		s, _ := n.(string)
		for k, rs := range latest {
			if (strings.Contains(s, "@") || strings.EqualFold(s, k)) && len(rs) == 2 && rs[0].State == "REQUEST_REVIEW" && rs[1].State == "APPROVED" && !rs[1].Official && !rs[1].Dismissed {
				return rs[0].User.Login
			}
		}
	}
	return ""
}

// review is what the policy reads of a pull request's review.
type review struct {
	ID        int64   `json:"id"`
	CommitID  string  `json:"commit_id"`
	User      account `json:"user"`
	State     string  `json:"state"`
	Official  bool    `json:"official"`
	Dismissed bool    `json:"dismissed"`
}

// approvedBy returns the login of an official approval of the pull request
// of params that stands, which branch protection counts, "" for none; false
// when Gitea does not list every review. Gitea keeps it when the pull request
// is retargeted (services/pull/pull.go ChangeTargetBranch, also when a
// deleted base retargets it): then it counts for a base it was not given for.
func (x *executor) approvedBy(ctx context.Context, params map[string]string) (string, bool) {
	reviews, ok := allPages[review](ctx, x, "repoListPullReviews", params, nil)
	for _, r := range reviews {
		if r.Official && !r.Dismissed && r.State == "APPROVED" {
			return r.User.Login, ok
		}
	}
	return "", ok
}

// restoredApproval returns the commit of the approval that deleting review
// params["id"], reviewer's, makes count again ("" for none), and whether
// Gitea listed every review and that one. Deleting an official review marks
// the reviewer's latest remaining approval, rejection or review request
// official (models/issues/review.go DeleteReview, restoreLatestOfficialReview),
// and a review submitted from a pending one left their earlier approval
// undismissed (SubmitReview; a review created anew dismisses it): branch
// protection counts that approval again, at the commit it was given.
func (x *executor) restoredApproval(ctx context.Context, params map[string]string, reviewer account) (string, bool) {
	reviews, ok := allPages[review](ctx, x, "repoListPullReviews", params, nil)
	var deleted, latest *review
	for i, r := range reviews {
		switch {
		case strconv.FormatInt(r.ID, 10) == params["id"]:
			deleted = &reviews[i]
		case sameAccount(reviewer, r.User) && slices.Contains(restoredStates, r.State) && (latest == nil || r.ID > latest.ID):
			latest = &reviews[i]
		}
	}
	if deleted == nil || !deleted.Official || latest == nil || latest.State != "APPROVED" || latest.Dismissed {
		return "", ok && deleted != nil
	}
	return latest.CommitID, ok
}

// listCommits reads the commits operation opID answers with in one answer,
// for the path parameters params and query kv (name, value pairs): a
// comparison's commits, all of them, or a repository's latest ten. It
// reports whether Gitea answered with all it counted.
func (x *executor) listCommits(ctx context.Context, opID string, params map[string]string, kv ...string) ([]pushed, bool) {
	op, p, ok := x.route(opID, params)
	if !ok {
		return nil, false
	}
	q := url.Values{"limit": {"10"}, "stat": {"false"}, "files": {"false"}, "verification": {"false"}}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	ex, err := x.send(ctx, op, p, q, nil)
	var list struct {
		Total   *int     `json:"total_commits"`
		Commits []pushed `json:"commits"`
	}
	if err != nil || ex.status != http.StatusOK {
		return nil, false
	}
	if opID == "repoGetAllCommits" {
		err = json.Unmarshal(ex.body, &list.Commits)
	} else if err = json.Unmarshal(ex.body, &list); list.Total == nil || *list.Total != len(list.Commits) {
		return nil, false
	}
	return list.Commits, err == nil
}

// allCommits reads every commit operation opID lists for params and query q
// (a pull request's, which land on its base when it is merged; or a
// repository's, of a ref and not of another), or every review of a pull
// request. It reports whether Gitea answered with all it counted.
func (x *executor) allCommits(ctx context.Context, opID string, params map[string]string, q url.Values) ([]pushed, bool) {
	q = url.Values{"stat": {"false"}, "files": {"false"}, "verification": {"false"}, "sha": q["sha"], "not": q["not"]}
	return allPages[pushed](ctx, x, opID, params, q)
}

// allPages reads every item of the list operation opID answers for params
// and query q, page by page (of 50, Gitea's default maximum, at most
// maxCommitPages). It reports whether Gitea answered with all it counted.
func allPages[T any](ctx context.Context, x *executor, opID string, params map[string]string, q url.Values) ([]T, bool) {
	op, p, ok := x.route(opID, params)
	if !ok {
		return nil, false
	}
	var all []T
	for page := 1; page <= maxCommitPages; page++ {
		pq := url.Values{"page": {strconv.Itoa(page)}, "limit": {"50"}}
		maps.Copy(pq, q)
		ex, err := x.send(ctx, op, p, pq, nil)
		var items []T
		if err != nil || ex.status != http.StatusOK || json.Unmarshal(ex.body, &items) != nil {
			return nil, false
		}
		all = append(all, items...)
		total, err := strconv.Atoi(ex.header.Get("X-Total-Count"))
		switch {
		case err != nil:
			return nil, false
		case len(all) >= total:
			return all, true
		case len(items) == 0:
			return nil, false // fewer than Gitea counted
		}
	}
	return nil, false
}

// openPullsOn returns the number of an open pull request of repository full
// (owner/name) whose head is branch of repository head, 0 for none, and, when
// full is head, those of every one whose base is branch, reading every page;
// false when Gitea does not say.
func (x *executor) openPullsOn(ctx context.Context, full, head, branch string) (headed int64, based []int64, ok bool) {
	owner, name, _ := strings.Cut(full, "/")
	type side struct {
		Ref  string `json:"ref"`
		Repo *struct {
			FullName string `json:"full_name"`
		} `json:"repo"`
	}
	pulls, ok := allPages[struct {
		Number int64 `json:"number"`
		Head   side  `json:"head"`
		Base   side  `json:"base"`
	}](ctx, x, "repoListPullRequests", map[string]string{"owner": owner, "repo": name}, url.Values{"state": {"open"}})
	for _, pr := range pulls {
		if headed == 0 && pr.Head.Ref == branch && (pr.Head.Repo == nil || strings.EqualFold(pr.Head.Repo.FullName, head)) {
			headed = pr.Number // a head repository Gitea does not name may be it
		}
		if pr.Base.Ref == branch && strings.EqualFold(full, head) {
			based = append(based, pr.Number)
		}
	}
	return headed, based, ok
}

// forkOutside returns the first fork of repository full (owner/name), which
// has count forks, or of its forks in turn, that p's repositories leave out,
// "" for none; false when Gitea does not list them all (it lists only those
// the caller may see, and counts every one).
func (x *executor) forkOutside(ctx context.Context, p *profile, full string, count int) (string, bool) {
	type repo struct {
		FullName   string `json:"full_name"`
		ForksCount int    `json:"forks_count"`
	}
	for queue := []repo{{full, count}}; len(queue) > 0; queue = queue[1:] {
		if queue[0].ForksCount == 0 {
			continue
		}
		owner, name, _ := strings.Cut(queue[0].FullName, "/")
		forks, ok := allPages[repo](ctx, x, "listForks", map[string]string{"owner": owner, "repo": name}, nil)
		if !ok || len(forks) < queue[0].ForksCount {
			return "", false
		}
		for _, f := range forks {
			if o, n, _ := strings.Cut(f.FullName, "/"); !p.allowsRepo(o, n) {
				return f.FullName, true
			}
		}
		queue = append(queue, forks...)
	}
	return "", true
}

// maxCommitPages bounds the pages of commits allCommits reads (of 50,
// Gitea's default maximum): a write pushing more is refused.
const maxCommitPages = 20

// pushedMessages reads the texts Gitea reads for issue references in the
// commits a write of op puts on a branch, as the caller's push, each commit
// named as Gitea resolves it: a merge's commits, the message Gitea writes
// for the merge commit when the call gives none (from the branch names, and
// the repository's template for the style, read on the default branch def,
// which a rebase amends its last commit with) and their authors' names, which
// a squash writes as trailers, with the pull request's author's (and its
// approvers', where the template writes ReviewedBy); those a branch moved
// to a commit gains (the commit resolved as the update resolves it); those
// a fork takes from its
// parent (upstream, the comparison with the branch Gitea syncs from); those
// a pull request's head takes from its base, with the merge commit's message
// from the branch names, and its own, which a rebase pushes again; for a
// branch created from a ref, which Gitea reads back to the first commit on
// another branch, the ten latest not on the default branch, unless the ref
// is a branch's tip; and for a contents write forced onto an existing branch,
// what it gains. It reports whether Gitea answered with all of them; a write
// that pushes no commit of another's has none.
func (x *executor) pushedMessages(ctx context.Context, op *operation, args map[string]any, params map[string]string, pr *livePR, upstream, def string) ([]any, bool) {
	body, _ := args["body"].(map[string]any)
	field := func(k string) string { s, _ := body[k].(string); return s }
	repo := map[string]string{"owner": params["owner"], "repo": params["repo"]}
	names := []any{pr.Head.Ref, pr.Base.Ref} // in the messages Gitea writes for a merge commit
	switch {
	case op.ID == "repoMergePullRequest":
		own, ok := x.allCommits(ctx, "repoGetPullRequestCommits", params, nil)
		tpl, ok2 := x.rawText(ctx, repo, ".gitea/default_merge_message/"+strings.ToUpper(cmp.Or(field("do"), "merge"))+"_TEMPLATE.md", def)
		msgs, _ := texts(own, true)
		msgs = append(append(msgs, names...), pr.User.written()...) // a squash's Co-authored-by trailer names the author
		// The template's Reviewed-by lines name the approvers.
		if strings.Contains(tpl, "ReviewedBy") {
			reviewers, ok3 := texts(x.allCommits(ctx, "repoListPullReviews", params, nil))
			msgs, ok2 = append(msgs, reviewers...), ok2 && ok3
		}
		return append(msgs, templateTexts(tpl, params, pr, own)...), ok && ok2
	case op.ID == "repoUpdateBranch":
		return texts(x.allCommits(ctx, "repoGetAllCommits", repo, url.Values{"sha": {field("new_commit_id")}, "not": {"refs/heads/" + params["branch"]}}))
	case op.ID == "repoMergeUpstream":
		list, ok := x.listCommits(ctx, "repoCompareDiff", map[string]string{"owner": repo["owner"], "repo": repo["repo"], "basehead": upstream})
		return texts(list, ok)
	case op.ID == "repoUpdatePullRequest":
		if pr.Head.Repo == nil {
			return nil, false
		}
		headOwner, headRepo, _ := strings.Cut(pr.Head.Repo.FullName, "/")
		base, ok := x.listCommits(ctx, "repoCompareDiff", map[string]string{"owner": headOwner, "repo": headRepo, "basehead": pr.Head.Ref + "..." + repo["owner"] + "/" + repo["repo"] + ":" + pr.Base.Ref})
		msgs, _ := texts(base, true)
		msgs = append(msgs, names...)
		if args["style"] == "rebase" {
			own, ok2 := texts(x.allCommits(ctx, "repoGetPullRequestCommits", params, nil))
			msgs, ok = append(msgs, own...), ok && ok2
		}
		return msgs, ok
	case op.ID == "repoCreateBranch" && field("old_ref_name") != "": // old_branch_name and none start on a branch: nothing read
		ref := field("old_ref_name")
		list, ok := x.listCommits(ctx, "repoGetAllCommits", repo, "sha", ref, "not", "refs/heads/"+def)
		var tip struct {
			Commit struct {
				ID string `json:"id"`
			} `json:"commit"`
		}
		if ok && len(list) > 0 && x.live(ctx, "repoGetBranch", map[string]string{"owner": repo["owner"], "repo": repo["repo"], "branch": ref}, &tip) && tip.Commit.ID == list[0].SHA {
			return nil, true // the tip of the branch of that name: it is on another branch
		}
		return texts(list, ok)
	case slices.Contains(contentsOps, op.ID) && body["force_push"] == true && field("new_branch") != "":
		switch x.get(ctx, "repoGetBranch", map[string]string{"owner": repo["owner"], "repo": repo["repo"], "branch": field("new_branch")}, nil) {
		case http.StatusNotFound: // a new branch started on a branch
			return nil, true
		case http.StatusOK: // an update of the branch: it gains what the branch written from has
			return texts(x.allCommits(ctx, "repoGetAllCommits", repo, url.Values{"sha": {"refs/heads/" + cmp.Or(field("branch"), def)}, "not": {"refs/heads/" + field("new_branch")}}))
		}
		return nil, false
	}
	return nil, true
}

// templateTexts returns what Gitea reads of a merge template tpl, raw and
// as services/pull/merge.go expands it with the pull request's live values:
// its first line and the rest apart (os.Expand, an unknown variable empty),
// read whole and cut at Gitea's default 5 KiB (DefaultMergeMessageSize), a
// cut that can end a variable's braces; a rebase expands it with the title
// and body of the commit it amends (CommitTitle, CommitBody), each of
// commits taken for that one, as a rebase drops merge commits. Raw, the
// text inside braces a smaller cut leaves open is judged too. ReviewedBy
// is left empty: its lines start "Reviewed-by: " and end with an e-mail,
// so no reference joins across them, and the names are judged apart.
func templateTexts(tpl string, params map[string]string, pr *livePR, commits []pushed) []any {
	headOwner, headName := "", ""
	if pr.Head.Repo != nil {
		headOwner, headName, _ = strings.Cut(pr.Head.Repo.FullName, "/")
	}
	vars := map[string]string{"BaseRepoOwnerName": params["owner"], "BaseRepoName": params["repo"], "BaseBranch": pr.Base.Ref,
		"HeadRepoOwnerName": headOwner, "HeadRepoName": headName, "HeadBranch": pr.Head.Ref, "PullRequestTitle": pr.Title,
		"PullRequestDescription": pr.Body, "PullRequestPosterName": pr.User.Login, "PullRequestIndex": params["index"],
		"PullRequestReference": "#" + params["index"], "ReviewedOn": "Reviewed-on: /" + params["owner"] + "/" + params["repo"] + "/pulls/" + params["index"]}
	expand := func(s string) string {
		line, rest, _ := strings.Cut(strings.TrimSpace(s), "\n")
		return os.Expand(line, func(k string) string { return vars[k] }) + "\n" + os.Expand(strings.TrimSpace(rest), func(k string) string { return vars[k] })
	}
	cut := tpl[:min(len(tpl), 5<<10)]
	out := []any{tpl, expand(tpl), expand(cut)}
	for _, c := range commits {
		if !strings.Contains(cut, "Commit") {
			break
		}
		title, body, _ := strings.Cut(c.Commit.Message, "\n")
		vars["CommitTitle"], vars["CommitBody"] = strings.TrimSpace(title), strings.TrimSpace(body)
		out = append(out, expand(cut))
	}
	return out
}

// pushed is what the policy reads of a commit Gitea pushes: its SHA, its
// message, and its author's and committer's names, which a squash merge
// writes into its message as trailers; or of a review, its reviewer's full
// name, which a merge template's Reviewed-by lines write.
type pushed struct {
	SHA    string `json:"sha"`
	Commit struct {
		Message           string `json:"message"`
		Author, Committer struct {
			Name string `json:"name"`
		}
	} `json:"commit"`
	User    account `json:"user"`
	Parents []struct {
		SHA string `json:"sha"`
	} `json:"parents"`
}

// texts returns the texts of commits (or reviews) that Gitea reads for
// references, and ok, which it passes on.
func texts(commits []pushed, ok bool) ([]any, bool) {
	var out []any
	for _, c := range commits {
		out = append(append(out, c.Commit.Message, c.Commit.Author.Name, c.Commit.Committer.Name), c.User.written()...)
	}
	return out, ok
}

// storedRefs returns the stored texts whose cross-references Gitea withdraws
// when it rewrites or deletes them: the title and body (a comment's body)
// that read answers for params and, with comments, the body of every comment
// of the issue; false when Gitea does not say.
func (x *executor) storedRefs(ctx context.Context, read string, params map[string]string, comments bool) ([]any, bool) {
	type text struct {
		Title string `json:"title"`
		Body  string `json:"body"`
	}
	var v text
	if !x.live(ctx, read, params, &v) {
		return nil, false
	}
	all := []any{v.Title, v.Body}
	if comments {
		cs, ok := allPages[text](ctx, x, "issueGetComments", params, nil)
		if !ok {
			return nil, false
		}
		for _, c := range cs {
			all = append(all, c.Body)
		}
	}
	return all, true
}

// stopwatchOutside returns the issue (owner/name#index) of a running
// stopwatch of the caller outside p's repositories, "" for none; false when
// Gitea does not list them all.
func (x *executor) stopwatchOutside(ctx context.Context, p *profile) (string, bool) {
	sws, ok := allPages[struct {
		Owner string `json:"repo_owner_name"`
		Name  string `json:"repo_name"`
		Index int64  `json:"issue_index"`
	}](ctx, x, "userGetStopWatches", nil, nil)
	for _, sw := range sws {
		if !p.allowsRepo(sw.Owner, sw.Name) {
			return fmt.Sprintf("%s/%s#%d", sw.Owner, sw.Name, sw.Index), ok
		}
	}
	return "", ok
}

// linkedOutside returns the first issue (owner/name#index) that the issue
// of params depends on or blocks outside p's repositories, "" for none;
// false when Gitea does not list them all. One Gitea hides (a dependency
// of a repository the caller cannot read) counts as outside; a blocked one
// it leaves out of the list is not seen. Gitea counts no blocked issues: they
// are read as one page larger than any list read whole, which Gitea pages
// before it leaves hidden ones out, so with hidden ones a page short of full
// may still not end the list (README, "Threat model").
func (x *executor) linkedOutside(ctx context.Context, p *profile, params map[string]string) (string, bool) {
	type linked struct {
		Number int64 `json:"number"`
		Repo   *struct {
			FullName string `json:"full_name"`
		} `json:"repository"`
	}
	deps, ok := allPages[linked](ctx, x, "issueListIssueDependencies", params, nil)
	const most = maxCommitPages * 50
	var blocks []linked
	op, path, ok2 := x.route("issueListBlocks", params)
	if ok2 {
		ex, err := x.send(ctx, op, path, url.Values{"page": {"1"}, "limit": {strconv.Itoa(most)}}, nil)
		ok2 = err == nil && ex.status == http.StatusOK && json.Unmarshal(ex.body, &blocks) == nil && len(blocks) < most
	}
	if !ok || !ok2 {
		return "", false
	}
	for _, l := range append(deps, blocks...) {
		if l.Repo == nil || l.Repo.FullName == "" {
			return "an issue Gitea hides", true
		}
		if owner, name, _ := strings.Cut(l.Repo.FullName, "/"); !p.allowsRepo(owner, name) {
			return fmt.Sprintf("%s#%d", l.Repo.FullName, l.Number), true
		}
	}
	return "", true
}
