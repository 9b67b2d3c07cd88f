package main

// gitea_find_operations: a ranked word search over the operations the active
// profile may call. It only reads the operation table; it never calls Gitea
// and never shows an operation the profile does not permit.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// findOperations serves gitea_find_operations: a ranked word search over the
// operations this server may call. Each match is its operation, method, path,
// summary and a one-line parameter synopsis; the input schema comes only with
// schema: true or for a single match (limit 1, or an exact operationId).
func findOperations(_ context.Context, s *server, _ *session, args map[string]any) map[string]any {
	query, _ := args["query"].(string)
	limit := 3 // the query set is measured at 3 (TestFindRecall)
	if n, ok := args["limit"].(json.Number); ok {
		if v, err := n.Int64(); err == nil {
			limit = int(v)
		}
	}
	withSchema, _ := args["schema"].(bool)
	hits := s.rank(query)
	if len(hits) > 0 && hits[0].score >= exactScore {
		limit = 1
	}
	out := []map[string]any{}
	for _, h := range hits[:min(limit, len(hits))] {
		schema, err := h.op.inputSchema()
		if err != nil {
			continue
		}
		m := map[string]any{"operation": h.op.ID, "method": h.op.Method, "path": h.op.Route, "summary": h.op.Summary}
		if p := synopsis(schema); p != "" {
			m["parameters"] = p
		}
		if withSchema || limit == 1 {
			m["inputSchema"] = schema
		}
		out = append(out, m)
	}
	return jsonResult(map[string]any{"matches": out, "total_matches": len(hits)}, false)
}

// hit is one operation ranked for a query.
type hit struct {
	op    *operation
	score int
}

// exactScore is the score of a query that is an operationId.
const exactScore = 1_000_000

// rank returns the operations this server may call that match query, best
// first; ties go to the operation whose id has fewer words the query lacks,
// then to the shorter path.
func (s *server) rank(query string) []hit {
	words := findTerms(query)
	var hits []hit
	prof, _ := s.exec.active(context.Background())
	for _, op := range s.cat.ops {
		if _, ok := s.cat.operation(op.ID); !ok || !prof.shows(op) {
			continue
		}
		if score := matchScore(op, query, words); score > 0 {
			hits = append(hits, hit{op, score})
		}
	}
	sort.SliceStable(hits, func(i, j int) bool {
		if hits[i].score != hits[j].score {
			return hits[i].score > hits[j].score
		}
		return len(hits[i].op.Route) < len(hits[j].op.Route)
	})
	return hits
}

// synopsis is an input schema in one line: required names, then optional
// ones with "?", a body's members in braces, e.g.
// "owner, repo, body{base, head, title?}, page?". A body of more than
// maxSynopsisMembers members names its required ones and counts the others
// ("body{branch_name, +30 optional}"); schema: true shows them.
func synopsis(s *Schema) string {
	var req, opt []string
	for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
		p := s.Properties[name]
		if len(p.Properties) > 0 {
			name += "{" + synopsis(&Schema{Properties: p.Properties, Required: p.Required}) + "}"
		}
		if slices.Contains(s.Required, strings.SplitN(name, "{", 2)[0]) {
			req = append(req, name)
		} else {
			opt = append(opt, name+"?")
		}
	}
	if len(req)+len(opt) > maxSynopsisMembers && len(opt) > 0 {
		opt = []string{fmt.Sprintf("+%d optional", len(opt))}
	}
	return strings.Join(append(req, opt...), ", ")
}

// maxSynopsisMembers is how many members a synopsis names at one level.
const maxSynopsisMembers = 20

// findSynonyms maps the words and phrases agents use to the words of Gitea's
// operation ids and summaries; a word found here is replaced by its terms
// (keep it by listing it). Phrases are matched first, longest first.
// Examples (TestFindSynonyms): "close issue" -> "edit state issue" finds
// issueEditIssue; "get file contents" -> "get raw file" finds repoGetRawFile;
// "diff of a PR" -> "diff patch pull" finds repoDownloadPullDiffOrPatch; "open
// issues labelled bug" -> "issues list bug" finds issueListIssues, while
// "open a pull request" -> "create pull" finds repoCreatePullRequest.
var findSynonyms = map[string]string{
	// phrases
	"pull request": "pull", "pull requests": "pull", "merge request": "pull", "merge requests": "pull",
	"file contents": "raw file", "file content": "raw file", "who am i": "get current user",
	"open a": "create", "open an": "create", "open new": "create",
	"create repository": "create current user repo", "create a repository": "create current user repo", "new repository": "create current user repo",
	"create repo": "create current user repo", "create a repo": "create current user repo", "new repo": "create current user repo",
	"review comments": "get pull review comments", "list commits": "get commits",
	// nouns
	"pr": "pull", "prs": "pull", "mr": "pull", "pulls": "pull", "file": "raw file", "readme": "raw file",
	"repository": "repo", "repositories": "repo", "repos": "repo", "project": "repo", "projects": "repo",
	"directory": "contents dir", "folder": "contents dir", "dir": "contents dir", "tree": "contents dir",
	"history": "commits", "log": "commits", "my": "current user", "info": "get", "comment on": "create comment", "whoami": "get current user",
	"notifications": "notify", "webhooks": "hooks repo", "webhook": "hook repo", "ci": "workflow runs", "pipelines": "workflow runs",
	"diff": "diff patch", "patch": "diff patch",
	// verbs
	"close": "edit state", "reopen": "edit state", "assign": "edit", "change": "edit", "modify": "edit",
	"update": "edit", "rename": "rename edit", "retitle": "edit", "protect": "create protection",
	"read": "get", "show": "get", "view": "get", "fetch": "get", "see": "get", "retrieve": "get", "download": "get raw", "display": "get",
	"new": "create", "make": "create", "add": "add create", "write": "create", "approve": "create review", "review": "create review",
	"find": "search", "watch": "subscription", "merged": "is merged",
	// filters: a state or label narrows a list
	"open": "list", "closed": "list", "labelled": "list", "labeled": "list", "with": "list",
}

// findStopWords carry no meaning for the search.
var findStopWords = map[string]bool{"a": true, "an": true, "the": true, "of": true, "to": true, "on": true, "in": true,
	"for": true, "from": true, "by": true, "one": true, "someone": true, "all": true, "this": true, "that": true, "me": true}

// findTerms turns a query into search terms: lower-case words, synonyms
// replaced, stop words dropped.
func findTerms(query string) []string {
	words := searchWords(query)
	var out []string
	for i := 0; i < len(words); i++ {
		if i+2 < len(words) {
			if to, ok := findSynonyms[strings.Join(words[i:i+3], " ")]; ok {
				out, i = append(out, strings.Fields(to)...), i+2
				continue
			}
		}
		if i+1 < len(words) {
			if to, ok := findSynonyms[words[i]+" "+words[i+1]]; ok {
				out, i = append(out, strings.Fields(to)...), i+1
				continue
			}
		}
		if to, ok := findSynonyms[words[i]]; ok {
			out = append(out, strings.Fields(to)...)
		} else if !findStopWords[words[i]] {
			out = append(out, words[i])
		}
	}
	return out
}

// stem folds a plural to its singular: issues -> issue, branches -> branch,
// repositories -> repository.
func stem(w string) string {
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes") || strings.HasSuffix(w, "xes"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

// searchWords splits text into lower-case words, also at camelCase humps
// (a capital after a small letter: "issueListIssues", but "PRs" is one word).
func searchWords(text string) []string {
	var words []string
	var cur []rune
	prev := ' '
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	for _, r := range text {
		switch {
		case !unicode.IsLetter(r) && !unicode.IsDigit(r):
			flush()
		case unicode.IsUpper(r) && unicode.IsLower(prev):
			flush()
			cur = append(cur, r)
		default:
			cur = append(cur, r)
		}
		prev = r
	}
	flush()
	return words
}

// matchScore ranks an operation for search terms: an exact operationId wins;
// otherwise each term counts 30 found in the id (one more in the same form),
// 20 in the summary, 10 in a tag or the path, and each id word the terms lack
// costs one.
func matchScore(op *operation, query string, terms []string) int {
	if strings.EqualFold(strings.TrimSpace(query), op.ID) {
		return exactScore
	}
	idWords := searchWords(op.ID)
	summary := searchWords(op.Summary)
	routeWords := searchWords(op.Route)
	has := func(words []string, w string) bool {
		return slices.ContainsFunc(words, func(x string) bool { return stem(x) == stem(w) })
	}
	score := 0
	seen := map[string]bool{}
	for _, w := range terms {
		if seen[w] {
			continue
		}
		seen[w] = true
		switch {
		case has(idWords, w):
			score += 30
			if slices.Contains(idWords, w) {
				score++
			}
		case has(summary, w):
			score += 20
		case slices.ContainsFunc(op.Tags, func(t string) bool { return strings.EqualFold(t, w) }) || has(routeWords, w):
			score += 10
		}
	}
	if score == 0 {
		return 0
	}
	for _, w := range idWords {
		if !slices.ContainsFunc(terms, func(t string) bool { return stem(t) == stem(w) }) {
			score--
		}
	}
	return score
}
