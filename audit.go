package main

// Audit log (GITEA_AUDIT_LOG): a JSON line per mutation attempt, refused
// wherever it was refused, or allowed (written before it is sent, and then
// a second line when Gitea answered). Each line ends with mac, computed over
// the line without it; the line carries prev, the previous line's mac, so
// each mac seals its line and every line before it.
//
// With GITEA_AUDIT_KEY (or GITEA_AUDIT_KEY_FILE) mac is HMAC-SHA256 under a
// key that moves forward after every line, key' = HMAC(key, "next"), the old
// key forgotten (as systemd-journald's Forward Secure Sealing): a running
// server that is taken over cannot rewrite what it already logged, and only
// the initial key verifies the log. Without a key mac is plain SHA-256: it
// catches accidents, not someone who can rewrite the file and recompute it.
// The server reports the chain's head (line count and last mac) at exit and
// in gitea_get_profile; -verify-audit given that head also sees a dropped tail.
//
// Runtime isolation (README, "Execution profiles") lives here too: the server
// refuses to run from a checkout in the middle of a merge or rebase, or with
// conflict markers in its config or Go sources (infraCheck).

import (
	"bufio"
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// auditGenesis is the prev of the first line.
var auditGenesis = strings.Repeat("0", 64)

// maxAuditLine bounds one line read back by openAudit and verifyAudit.
const maxAuditLine = 1 << 20

// auditEntry is one audit line. It has no field that could hold a token.
type auditEntry struct {
	Time               string `json:"time"` // set by record: RFC 3339, UTC
	Profile            string `json:"profile"`
	AuditLabel         string `json:"audit_label"`
	Login              string `json:"login"`
	Sudo               string `json:"sudo"`
	Tool               string `json:"tool"`
	Action             string `json:"action,omitempty"` // workflow action, e.g. close_pr
	Operation          string `json:"operation"`
	RequiredPermission string `json:"required_permission"`
	Method             string `json:"method"`
	Path               string `json:"path"`     // relative API path; record drops any scheme, host and query
	Decision           string `json:"decision"` // allowed (before it is sent), answered (status: Gitea's) or denied
	Rule               string `json:"rule"`     // who decided: policy, infra_stop, argument validation, a workflow gate
	Reason             string `json:"reason"`
	Status             int    `json:"status"` // Gitea's HTTP status; 0 before the request is sent, or when it is not
	Prev               string `json:"prev"`   // set by record; the line's mac follows it
}

// auditEntryFor fills an audit entry from a policy decision; status is Gitea's (0 if not sent).
// The caller's sudo user is set when the entry is written (audited).
func auditEntryFor(d decision, p *profile, method, path string, status int) auditEntry {
	e := auditEntry{Profile: d.Profile, Login: d.Identity, Tool: d.Tool, Action: d.Action, Operation: d.Operation,
		RequiredPermission: d.RequiredPermission, Method: method, Path: path, Decision: "denied", Rule: "policy", Reason: d.Reason, Status: status}
	if d.Allowed {
		e.Decision = "allowed"
	}
	if d.Infra {
		e.Rule = "infra_stop"
	}
	if p != nil {
		e.AuditLabel = p.AuditLabel
	}
	return e
}

// auditHead is where a chain ends: its line count and last mac.
type auditHead struct {
	Lines int
	MAC   string
}

// String is the head as -audit-head takes it: COUNT:MAC.
func (h auditHead) String() string { return strconv.Itoa(h.Lines) + ":" + h.MAC }

// parseAuditHead reads COUNT:MAC.
func parseAuditHead(s string) (auditHead, error) {
	count, mac, _ := strings.Cut(s, ":")
	n, err := strconv.Atoi(count)
	if _, herr := hex.DecodeString(mac); err != nil || n < 0 || herr != nil || len(mac) != 64 {
		return auditHead{}, fmt.Errorf("audit head %q: want COUNT:MAC, the line count and the 64 hex digits of the last mac", s)
	}
	return auditHead{n, strings.ToLower(mac)}, nil
}

// auditChain is a chain's running state: its head and the key of the next
// line (nil without a key). The key moves forward with every line sealed.
type auditChain struct {
	head auditHead
	key  []byte
	buf  []byte // check's copy of a line's content
}

// newAuditChain starts a chain at the genesis; a key is copied, never kept.
func newAuditChain(key []byte) *auditChain {
	return &auditChain{head: auditHead{MAC: auditGenesis}, key: bytes.Clone(key)}
}

// mac is the mac of one line's content under the chain's current key.
func (c *auditChain) mac(content []byte) string {
	if c.key == nil {
		sum := sha256.Sum256(content)
		return hex.EncodeToString(sum[:])
	}
	m := hmac.New(sha256.New, c.key)
	m.Write(content)
	return hex.EncodeToString(m.Sum(nil))
}

// advance makes mac the chain's head and moves the key forward, overwriting
// the old one: the key of a line sealed is gone.
func (c *auditChain) advance(mac string) {
	c.head = auditHead{c.head.Lines + 1, mac}
	if c.key != nil {
		m := hmac.New(sha256.New, c.key)
		m.Write([]byte("next"))
		clear(c.key)
		c.key = m.Sum(c.key[:0])
	}
}

// auditMACPrefix starts how a sealed line ends; auditMACLen is that ending's length: ,"mac":"<64 hex digits>"}.
const auditMACPrefix, auditMACLen = `,"mac":"`, len(`,"mac":""}`) + 64

// seal returns the line for content (a JSON object whose prev is the head's
// mac) with its mac appended; the chain advances once the line is written.
func (c *auditChain) seal(content []byte) (line []byte, mac string) {
	mac = c.mac(content)
	return append(content[:len(content)-1:len(content)-1], auditMACPrefix+mac+`"}`+"\n"...), mac
}

// check verifies the next line of a log against the chain and advances it;
// the error names the line and what is wrong with it.
func (c *auditChain) check(line []byte) error {
	n := c.head.Lines + 1
	i := len(line) - auditMACLen
	if i < 1 || !bytes.HasPrefix(line[i:], []byte(auditMACPrefix)) || !bytes.HasSuffix(line, []byte(`"}`)) {
		return fmt.Errorf("line %d: does not end with its mac", n)
	}
	mac := line[i+len(auditMACPrefix) : len(line)-2]
	c.buf = append(append(c.buf[:0], line[:i]...), '}')
	if !json.Valid(c.buf) {
		return fmt.Errorf("line %d: not a json object: %v", n, json.Unmarshal(c.buf, new(any)))
	}
	if !hmac.Equal(mac, []byte(c.mac(c.buf))) {
		if c.key != nil {
			return fmt.Errorf("line %d: mac does not match: the line was changed, or the log was not written with this GITEA_AUDIT_KEY", n)
		}
		return fmt.Errorf("line %d: mac does not match the sha-256 of the line: the line was changed (or the log was written with a GITEA_AUDIT_KEY)", n)
	}
	// prev is the last member, as record writes it: ..."prev":"<64 hex digits>"
	const prevKey = `"prev":"`
	j := i - 1 - len(auditGenesis)
	switch {
	case j < len(prevKey)+1 || line[i-1] != '"' || string(line[j-len(prevKey):j]) != prevKey || line[j-len(prevKey)-1] != ',' && line[j-len(prevKey)-1] != '{':
		return fmt.Errorf("line %d: no prev field at its end", n)
	case string(line[j:i-1]) != c.head.MAC && n == 1:
		return fmt.Errorf("line 1: prev is not %d zeros: the log does not start here (lines were removed before it)", len(auditGenesis))
	case string(line[j:i-1]) != c.head.MAC:
		return fmt.Errorf("line %d: prev is not the mac of line %d: lines were removed, inserted or reordered between them", n, n-1)
	}
	c.advance(string(mac))
	return nil
}

// verifyAudit checks a log from its first line with key (nil: a log written
// without one) and returns the head of its valid part; the error names the
// first line that fails. Given the head the server reported (want), it also
// reports a log that ends before that head or differs at it.
func verifyAudit(r io.Reader, key []byte, want *auditHead) (auditHead, error) {
	c := newAuditChain(key)
	defer clear(c.key)
	err := c.walk(r, want)
	return c.head, err
}

// walk checks every line of r, advancing the chain, then the head against want.
func (c *auditChain) walk(r io.Reader, want *auditHead) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxAuditLine)
	sc.Split(splitAuditLines)
	atHead := func() error {
		if want != nil && c.head.Lines == want.Lines && c.head.MAC != want.MAC {
			return fmt.Errorf("line %d: its mac is not the head's %s: the log was rewritten up to that line", want.Lines, want)
		}
		return nil
	}
	if err := atHead(); err != nil {
		return err
	}
	for sc.Scan() {
		if err := c.check(sc.Bytes()); err != nil {
			return err
		}
		if err := atHead(); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("line %d: %w", c.head.Lines+1, err)
	}
	if want != nil && c.head.Lines < want.Lines {
		return fmt.Errorf("the log ends at line %d, but its head was line %d: lines were dropped from the end", c.head.Lines, want.Lines)
	}
	return nil
}

// splitAuditLines is bufio.ScanLines without dropping '\r' and with a final
// line lacking its newline reported as an error.
func splitAuditLines(data []byte, atEOF bool) (int, []byte, error) {
	if i := bytes.IndexByte(data, '\n'); i >= 0 {
		return i + 1, data[:i], nil
	}
	if atEOF && len(data) > 0 {
		return 0, nil, errors.New("incomplete line: no newline at the end")
	}
	return 0, nil, nil
}

// loadAuditKey reads GITEA_AUDIT_KEY or the file GITEA_AUDIT_KEY_FILE names:
// 32 random bytes, hex or base64; nil when neither is set. Errors never echo
// the key.
func loadAuditKey(getenv func(string) string) ([]byte, error) {
	s, file := getenv("GITEA_AUDIT_KEY"), getenv("GITEA_AUDIT_KEY_FILE")
	name := "GITEA_AUDIT_KEY"
	switch {
	case s != "" && file != "":
		return nil, errors.New("GITEA_AUDIT_KEY and GITEA_AUDIT_KEY_FILE are both set; set one")
	case file != "":
		data, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("GITEA_AUDIT_KEY_FILE: %w", err)
		}
		s, name = strings.TrimSpace(string(data)), "GITEA_AUDIT_KEY_FILE"
	case s == "":
		return nil, nil
	}
	key, err := parseOAuthKey(s) // the same form as MCP_OAUTH_KEY
	if err != nil {
		return nil, fmt.Errorf("%s: want 32 random bytes, base64 or hex (openssl rand -base64 32)", name)
	}
	return key, nil
}

// auditLog appends sealed lines to one file. A nil *auditLog records nothing.
// One process writes a file; each line is written with one write and synced.
type auditLog struct {
	mu    sync.Mutex
	f     *os.File
	path  string
	size  int64 // where the last line written ends
	chain *auditChain
	err   error            // sticky: after a failed write the chain cannot continue safely
	now   func() time.Time // clock, replaced in tests
}

// openAudit opens path for appending ("" = no audit log, a nil *auditLog).
// It verifies every line already there with key, which also brings the key
// forward to the next line's; a log that does not verify is refused, since a
// chain cannot continue from a broken or foreign one.
func openAudit(path string, key []byte) (*auditLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	c := newAuditChain(key)
	if err := c.walk(io.NewSectionReader(f, 0, 1<<62), nil); err != nil {
		f.Close()
		clear(c.key)
		return nil, fmt.Errorf("audit log %q does not verify, so it cannot be continued: %w; move it aside (keep it as evidence) and start a new one", path, err)
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		clear(c.key)
		return nil, fmt.Errorf("audit log: %w", err)
	}
	return &auditLog{f: f, path: path, size: st.Size(), chain: c, now: time.Now}, nil
}

// intact returns why the log can no longer be written safely: its path names
// another file or none (deleted or rotated away: the lines would be lost), or
// the file does not end where the last line did (truncated, or written by
// another process: the chain is broken).
func (a *auditLog) intact() error {
	st, err := a.f.Stat()
	if err != nil {
		return err
	}
	at, err := os.Stat(a.path)
	switch {
	case err != nil:
		return fmt.Errorf("%s was removed: %w", a.path, err)
	case !os.SameFile(st, at):
		return fmt.Errorf("%s was replaced by another file", a.path)
	case st.Mode().IsRegular() && st.Size() != a.size:
		return fmt.Errorf("%s is %d bytes, not the %d written: it was truncated or written by another process", a.path, st.Size(), a.size)
	}
	return nil
}

// failed returns the error that stopped the log, or nil.
func (a *auditLog) failed() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.err
}

// head returns the chain's head and whether the log is keyed.
func (a *auditLog) head() (auditHead, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.chain.head, a.chain.key != nil
}

// record appends e, stamped with the time and sealed. After a failed write
// every later record fails too, so the caller can stop mutating.
func (a *auditLog) record(e auditEntry) error {
	if a == nil {
		return nil
	}
	if e.Decision != "allowed" && e.Decision != "denied" && e.Decision != "answered" {
		return fmt.Errorf("audit: decision %q: want allowed, denied or answered", e.Decision)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	e.Time = a.now().UTC().Format(time.RFC3339Nano)
	e.Path = relativePath(e.Path)
	for _, f := range []*string{&e.Profile, &e.AuditLabel, &e.Login, &e.Sudo, &e.Tool, &e.Action, &e.Operation,
		&e.RequiredPermission, &e.Method, &e.Path, &e.Rule, &e.Reason} {
		*f = clip(*f) // a huge argument quoted in a reason or path must not make a line the reader refuses
	}
	e.Prev = a.chain.head.MAC
	content, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	line, mac := a.chain.seal(content)
	if err = a.intact(); err == nil {
		if _, err = a.f.Write(line); err == nil {
			err = a.f.Sync()
		}
	}
	if err != nil {
		a.err = fmt.Errorf("audit: %w", err)
		return a.err
	}
	a.size += int64(len(line))
	a.chain.advance(mac)
	return nil
}

// maxAuditField bounds each text of an audit line: with JSON escaping (at most
// 6 bytes a byte) a line of 12 such texts stays far below maxAuditLine.
const maxAuditField = 4096

// clip cuts s to maxAuditField bytes, on a rune boundary, saying how much was cut.
func clip(s string) string {
	if len(s) <= maxAuditField {
		return s
	}
	i := maxAuditField
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return fmt.Sprintf("%s...(%d bytes cut)", s[:i], len(s)-i)
}

// relativePath drops a scheme and host and any query or fragment from p: a
// query may carry a token.
func relativePath(p string) string {
	if _, rest, ok := strings.Cut(p, "://"); ok {
		p = "/"
		if i := strings.IndexByte(rest, '/'); i >= 0 {
			p = rest[i:]
		}
	}
	p, _, _ = strings.Cut(p, "?")
	p, _, _ = strings.Cut(p, "#")
	return p
}

// close closes the file and forgets the key; a nil *auditLog has nothing to close.
func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	clear(a.chain.key)
	return a.f.Close()
}

// audited writes one audit line with the caller's identity; e names the
// profile that decided (a switch since must not rename it). Every mutation
// attempt goes through here: the executor's decisions (record) and the
// refusals before it (refuse). A failure to write is reported on stderr and
// returned: the mutation it would record is not sent, and later ones stop
// (infra_stop).
func (x *executor) audited(ctx context.Context, e auditEntry) error {
	_, c := x.active(ctx)
	red := x.redactor(c) // a reason or path may quote a secret
	e.Reason, _, _ = scrubString(e.Reason, red, x.cfg.secretMode != modeOff)
	e.Path, _, _ = scrubString(e.Path, red, x.cfg.secretMode != modeOff)
	c.mu.Lock()
	e.Sudo = c.sudo
	if e.Login == "" {
		e.Login = c.me.Login
	}
	c.mu.Unlock()
	err := x.audit.record(e)
	if err != nil {
		fmt.Fprintf(os.Stderr, "giteamcp: audit log: %v\n", err)
	}
	return err
}

// auditStop is the reason mutations stop while the audit log cannot be written.
func auditStop(err error) string {
	return fmt.Sprintf("infra_stop: the audit log cannot be written (%v); mutations stop until it can: free the disk or fix GITEA_AUDIT_LOG, then restart the server", err)
}

// refusal is a mutation refused before the executor's policy decision: by
// argument validation or a workflow gate (rule), for reason. op is the
// operation that would have been sent, with args; when it is not known, the
// raw tool's method and path stand in.
type refusal struct {
	tool, action string
	op           *operation
	args         map[string]any
	method, path string
	rule, reason string
}

// refuse audits a refused mutation; a refused read is not audited.
func (x *executor) refuse(ctx context.Context, r refusal) {
	e := auditEntry{Tool: r.tool, Action: r.action, Method: strings.ToUpper(r.method), Path: r.path, Decision: "denied", Rule: r.rule, Reason: r.reason}
	if !slices.Contains(httpMethods, strings.ToLower(e.Method)) {
		e.Method = "" // the model's text, upper-cased past redaction; the reason quotes it scrubbed
	}
	if prof, _ := x.active(ctx); prof != nil {
		e.Profile, e.AuditLabel = prof.Name, prof.AuditLabel
	}
	if r.op != nil {
		perm, _ := resolvePermission(opInfo{ID: r.op.ID, Method: r.op.Method, Route: r.op.Route}, r.args)
		if perm == permRead {
			return
		}
		e.Operation, e.RequiredPermission, e.Method, e.Path = r.op.ID, perm, r.op.Method, r.op.Route
		params := map[string]string{}
		r.op.inputSchema() // reads the parameters
		for _, p := range r.op.params {
			if v, ok := r.args[p.Name]; ok && p.In == "path" {
				params[p.Name] = scalar(v)
			}
		}
		if x.routes != nil {
			if p, err := x.routes().expand(r.op.routeSpec(), params); err == nil {
				e.Path = p
			}
		}
	} else if e.Method == "GET" {
		return
	}
	x.audited(ctx, e)
}

// refuseArgs audits a tool call whose arguments failed validation, when the
// call could have written: the operation is the tool's own, the one
// gitea_call_operation names, or the route gitea_api_request gives.
func (s *server) refuseArgs(ctx context.Context, t *tool, args map[string]any, err error) {
	if t.readOnly {
		return
	}
	r := refusal{tool: t.name, op: t.op, args: args, rule: "argument validation", reason: err.Error()}
	switch t.name {
	case "gitea_call_operation":
		id, _ := args["operation"].(string)
		r.op, _ = s.cat.operation(id)
		r.args, _ = args["arguments"].(map[string]any)
	case "gitea_api_request":
		r.method, _ = args["method"].(string)
		r.path, _ = args["path"].(string)
	}
	s.exec.refuse(ctx, r)
}

// infraRecovery is the recovery advice every infra_stop error ends with.
const infraRecovery = "to recover: resolve the conflicts or abort (git merge --abort / git rebase --abort), restart the gitea mcp server, then retry the task"

// unfinishedGitStates are the gitdir entries an unfinished merge, rebase, cherry-pick or revert leaves:
// a squash merge leaves only SQUASH_MSG, and a series of picks or reverts, once one is committed by hand, only sequencer.
var unfinishedGitStates = []string{"MERGE_HEAD", "SQUASH_MSG", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD", "sequencer"}

// infraCheck returns an error starting with "infra_stop: " when the config file
// (configPath, "" = none) has conflict markers, or when the checkout at
// sourceDir ("" = not checked) has an unfinished merge or rebase or conflict
// markers in its top-level non-test *.go files. A .git file pointing to a gitdir
// (worktrees, submodules) is followed.
func infraCheck(configPath, sourceDir string) error {
	var found []string
	if configPath != "" {
		found = append(found, conflictMarkers(configPath)...)
	}
	if sourceDir != "" {
		if gitDir, err := gitDirOf(sourceDir); err != nil {
			found = append(found, err.Error())
		} else if gitDir != "" {
			for _, name := range unfinishedGitStates {
				if _, err := os.Stat(filepath.Join(gitDir, name)); err == nil {
					found = append(found, fmt.Sprintf("unfinished merge or rebase in %s (%s exists)", sourceDir, name))
				}
			}
		}
		files, err := filepath.Glob(filepath.Join(sourceDir, "*.go"))
		if err != nil {
			found = append(found, err.Error())
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") { // tests are not part of the server
				found = append(found, conflictMarkers(f)...)
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("infra_stop: %s; %s", strings.Join(found, "; "), infraRecovery)
}

// gitDirOf returns the git directory of the checkout at dir, "" when dir has no .git.
func gitDirOf(dir string) (string, error) {
	dotGit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotGit)
	switch {
	case os.IsNotExist(err):
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("cannot read the source directory: %v", err)
		}
		return "", nil
	case err != nil:
		return "", fmt.Errorf("cannot read %s: %v", dotGit, err)
	case st.IsDir():
		return dotGit, nil
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", dotGit, err)
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return "", fmt.Errorf("%s is a file without a gitdir: line", dotGit)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return target, nil
}

// conflictMarkers reports the first conflict marker line of file, or why it cannot be read.
// Markers: "<<<<<<< " or ">>>>>>> " at the start of a line, "=======" alone on a line.
func conflictMarkers(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{fmt.Sprintf("cannot read %s: %v", file, err)}
	}
	for i := 1; len(data) > 0; i++ {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte("\n")) // one line at a time: no slice of every line
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("<<<<<<< ")) || bytes.HasPrefix(line, []byte(">>>>>>> ")) || string(line) == "=======" {
			return []string{fmt.Sprintf("conflict marker in %s at line %d", file, i)}
		}
	}
	return nil
}
