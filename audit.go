package main

// Audit log (GITEA_AUDIT_LOG): one JSON line per mutation attempt, allowed or
// denied. Each line carries prev, the hex SHA-256 of the previous line's bytes,
// so editing, inserting or removing a line breaks the chain (verifyAudit).
// The chain is tamper-evident, not tamper-proof: whoever can rewrite the whole
// file can recompute it, and truncating the tail is not detected.

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"
)

// auditGenesis is the prev of the first line.
var auditGenesis = strings.Repeat("0", 64)

// maxAuditLine bounds one line, for reading the tail and for verifyAudit.
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
	Decision           string `json:"decision"` // allowed or denied
	Reason             string `json:"reason"`
	Status             int    `json:"status"` // Gitea's HTTP status, 0 when the request was not sent
	Prev               string `json:"prev"`   // set by record
}

// auditEntryFor fills an audit entry from a policy decision; status is Gitea's (0 if not sent).
func auditEntryFor(d decision, p *profile, sudo, method, path string, status int) auditEntry {
	e := auditEntry{Profile: d.Profile, Login: d.Identity, Sudo: sudo, Tool: d.Tool, Action: d.Action, Operation: d.Operation,
		RequiredPermission: d.RequiredPermission, Method: method, Path: path, Decision: "denied", Reason: d.Reason, Status: status}
	if d.Allowed {
		e.Decision = "allowed"
	}
	if p != nil {
		e.AuditLabel = p.AuditLabel
	}
	return e
}

// auditLog appends hash-chained entries to one file. A nil *auditLog records nothing.
// One process writes a file; each line is written with one write and synced.
type auditLog struct {
	mu   sync.Mutex
	f    *os.File
	prev string           // hex SHA-256 of the last line
	err  error            // sticky: after a failed write the chain cannot continue safely
	now  func() time.Time // clock, replaced in tests
}

// openAudit opens path for appending ("" = no audit log, a nil *auditLog) and
// continues the chain from its last line. A file not ending in a newline is
// refused: its last line is incomplete.
func openAudit(path string) (*auditLog, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("audit log: %w", err)
	}
	prev, err := lastLineHash(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("audit log %q: %w", path, err)
	}
	return &auditLog{f: f, prev: prev, now: time.Now}, nil
}

// lastLineHash returns the hex SHA-256 of the last line of f, auditGenesis if f is empty.
func lastLineHash(f *os.File) (string, error) {
	st, err := f.Stat()
	if err != nil {
		return "", err
	}
	end := st.Size()
	if end == 0 {
		return auditGenesis, nil
	}
	var last [1]byte
	if _, err := f.ReadAt(last[:], end-1); err != nil {
		return "", err
	}
	if last[0] != '\n' {
		return "", errors.New("the last line is incomplete; check the file with -verify-audit")
	}
	end-- // the newline
	start, buf := end, make([]byte, 4096)
	for start > 0 && end-start <= maxAuditLine {
		n := min(int64(len(buf)), start)
		if _, err := f.ReadAt(buf[:n], start-n); err != nil {
			return "", err
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			start -= n - int64(i) - 1
			break
		}
		start -= n
	}
	if end-start > maxAuditLine {
		return "", fmt.Errorf("the last line is longer than %d bytes", maxAuditLine)
	}
	line := make([]byte, end-start)
	if _, err := f.ReadAt(line, start); err != nil {
		return "", err
	}
	sum := sha256.Sum256(line)
	return hex.EncodeToString(sum[:]), nil
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

// record appends e, stamped with the time and the chain link. After a failed
// write every later record fails too, so the caller can stop mutating.
func (a *auditLog) record(e auditEntry) error {
	if a == nil {
		return nil
	}
	if e.Decision != "allowed" && e.Decision != "denied" {
		return fmt.Errorf("audit: decision %q: want allowed or denied", e.Decision)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.err != nil {
		return a.err
	}
	e.Time = a.now().UTC().Format(time.RFC3339Nano)
	e.Path = relativePath(e.Path)
	e.Prev = a.prev
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	if _, err := a.f.Write(append(line, '\n')); err != nil {
		a.err = fmt.Errorf("audit: %w", err)
		return a.err
	}
	if err := a.f.Sync(); err != nil {
		a.err = fmt.Errorf("audit: %w", err)
		return a.err
	}
	sum := sha256.Sum256(line)
	a.prev = hex.EncodeToString(sum[:])
	return nil
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

// close closes the file; a nil *auditLog has nothing to close.
func (a *auditLog) close() error {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.f.Close()
}

// verifyAudit checks the chain of an audit log and returns the number of valid
// lines before the first broken link, whose line number the error names.
func verifyAudit(r io.Reader) (lines int, err error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxAuditLine)
	sc.Split(splitAuditLines)
	prev := auditGenesis
	for sc.Scan() {
		line := sc.Bytes()
		var e struct {
			Prev *string `json:"prev"`
		}
		n := lines + 1
		switch err := json.Unmarshal(line, &e); {
		case err != nil:
			return lines, fmt.Errorf("line %d: not a json object: %v", n, err)
		case e.Prev == nil:
			return lines, fmt.Errorf("line %d: no prev field", n)
		case *e.Prev != prev && n == 1:
			return lines, fmt.Errorf("line 1: prev is not %d zeros: the log does not start here (lines were removed before it)", len(auditGenesis))
		case *e.Prev != prev:
			return lines, fmt.Errorf("line %d: prev does not match the sha-256 of line %d: line %d was changed, or lines were removed or inserted between them", n, n-1, n-1)
		}
		sum := sha256.Sum256(line)
		prev = hex.EncodeToString(sum[:])
		lines = n
	}
	if err := sc.Err(); err != nil {
		return lines, fmt.Errorf("line %d: %w", lines+1, err)
	}
	return lines, nil
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
