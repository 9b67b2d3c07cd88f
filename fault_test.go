package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// newFaultGitea scripts, on a fake Gitea, the faults a real one cannot be
// made to produce on demand: the repository name (/repos/fault/<name>)
// picks the fault, for a GET of the repository and a POST of an issue to
// it. other is a second host, for the redirect to another host; huge and
// huge-chunked store in written the bytes written before the client stopped
// reading.
func newFaultGitea(t *testing.T) (f, other *scriptedGitea, written map[string]*atomic.Int64) {
	f, other = newScriptedGitea(t).user("alice"), newScriptedGitea(t)
	written = map[string]*atomic.Int64{"huge": {}, "huge-chunked": {}}
	limited := fakeWith(http.StatusTooManyRequests, `{"message":"rate limit exceeded"}`, "Retry-After", "0")
	for name, as := range map[string][]fakeAnswer{
		"hang":          {f.fakeHold(nil, nil)},
		"stall":         {f.fakeStall()},
		"error500":      {{status: http.StatusInternalServerError, body: `{"message":"database is locked","url":"` + f.URL + `/api/swagger"}`}},
		"error502":      {fakeWith(http.StatusBadGateway, "<html><body><h1>502 Bad Gateway</h1></body></html>\n", "Content-Type", "text/html")},
		"limited":       {limited},
		"limited-twice": {limited, limited, {status: http.StatusOK, body: `{"full_name":"fault/limited-twice"}`}},
		"limited-long":  {fakeWith(http.StatusTooManyRequests, "", "Retry-After", "3600")},
		"cut":           {fakeRaw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"id\":1,\"name\":")},
		"cut-chunked":   {fakeRaw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n20\r\n{\"id\":1,\"name\":")},
		"cut-unframed":  {fakeRaw("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{\"id\":1,\"name\":")}, // no length, no chunks: the end cannot be told from a close
		"badjson":       {{status: http.StatusOK, body: `{"id":1,,"full_name":"fault/badjson"}`}},
		"control-key":   {{status: http.StatusOK, body: "{\"id\":1,\"full\x01name\":\"fault/control-key\"}"}}, // a raw control character in a key
		"control-value": {{status: http.StatusOK, body: "{\"id\":1,\"full_name\":\"fault/\x1b[2J\"}"}},        // and in a value
		"huge":          {fakeHuge(true, written["huge"])},
		"huge-chunked":  {fakeHuge(false, written["huge-chunked"])},
		"elsewhere":     {fakeWith(http.StatusFound, "", "Location", other.URL+"/api/v1/repos/fault/elsewhere")},
	} {
		f.answer("GET", "/repos/fault/"+name, as...)
		f.answer("POST", "/repos/fault/"+name+"/issues", as...)
	}
	f.answer("GET", "/repos/fault/moved", fakeWith(http.StatusMovedPermanently, "", "Location", "/api/v1/repos/fault/new"))
	// As Gitea redirects an artifact's download: a signature anyone may use for an hour.
	f.answer("GET", "/repos/fault/signed", fakeWith(http.StatusFound, "", "Location", "/api/v1/repos/fault/signed/actions/artifacts/1/zip/raw?sig=c2lnbmF0dXJl&expires=1"))
	f.answer("POST", "/repos/fault/moved/issues", fakeWith(http.StatusMovedPermanently, "", "Location", "/api/v1/repos/fault/new/issues"))
	return f, other, written
}

// faultResult is what a test compares of a fault's result.
type faultResult struct {
	Kind, Message string
	Status        int
	Sent          int // requests that reached the fault's path
}

// TestGiteaFaults calls tools against faults a real Gitea cannot produce on
// demand: each is an isError result with its own kind and a clear message,
// and the server answers the next request.
func TestGiteaFaults(t *testing.T) {
	t.Parallel()
	f, other, written := newFaultGitea(t)
	start := func(t *testing.T, timeout string) *client {
		c := startClient(t, "GITEA_URL="+f.URL, "GITEA_TOKEN="+fakeToken, "GITEA_TIMEOUT="+timeout, "GITEA_MCP_PROFILE=gitea-owner",
			"GITEA_MCP_TOOLS=repoGet,issueCreateIssue")
		c.initialize("2025-11-25")
		return c
	}
	shared := start(t, "10s")
	const postWarning = "; the POST may have reached Gitea: check its effect before repeating it"
	for _, tc := range []struct {
		repo string
		post bool // issueCreateIssue instead of repoGet
		want faultResult
	}{
		{"hang", false, faultResult{"timeout", "no complete answer from Gitea within GITEA_TIMEOUT (300ms)", 0, 1}},
		{"hang", true, faultResult{"timeout", "no complete answer from Gitea within GITEA_TIMEOUT (300ms)" + postWarning, 0, 1}},
		{"stall", false, faultResult{"timeout", "no complete answer from Gitea within GITEA_TIMEOUT (300ms)", 200, 1}},
		{"error500", false, faultResult{"server_error", "database is locked", 500, 1}},
		{"error502", false, faultResult{"server_error", "<html><body><h1>502 Bad Gateway</h1></body></html>", 502, 1}},
		{"limited", false, faultResult{"rate_limited", "rate limit exceeded (Retry-After: 0; retried 2 times)", 429, 3}},
		{"limited-twice", false, faultResult{Status: 200, Sent: 3}},
		{"limited-long", false, faultResult{"rate_limited", "(Retry-After: 3600; retried 0 times)", 429, 1}},
		{"limited", true, faultResult{"rate_limited", "rate limit exceeded (Retry-After: 0; retried 0 times)", 429, 1}},
		{"cut", false, faultResult{"truncated_body", "the answer broke off after 15 bytes: the connection closed before its end", 200, 1}},
		{"cut-chunked", false, faultResult{"truncated_body", "the answer broke off after 15 bytes: the connection closed before its end", 200, 1}},
		{"cut-unframed", false, faultResult{"malformed_response", "the answer says application/json but is not valid JSON (15 bytes; unexpected end of JSON input); it is withheld", 200, 1}},
		{"badjson", false, faultResult{"malformed_response", "the answer says application/json but is not valid JSON (37 bytes; invalid character ',' looking for beginning of object key string); it is withheld", 200, 1}},
		{"control-key", false, faultResult{"malformed_response", `the answer says application/json but is not valid JSON (40 bytes; invalid character '\x01' in string literal); it is withheld`, 200, 1}},
		{"control-value", false, faultResult{"malformed_response", `the answer says application/json but is not valid JSON (33 bytes; invalid character '\x1b' in string literal); it is withheld`, 200, 1}},
		{"huge", false, faultResult{"payload_too_large", "answer larger than 8388608 bytes, the bound for its content type (MAX_BINARY_BYTES for binary)", 200, 1}},
		{"huge-chunked", false, faultResult{"payload_too_large", "answer larger than 8388608 bytes, the bound for its content type (MAX_BINARY_BYTES for binary)", 200, 1}},
		{"moved", false, faultResult{"redirect", "Gitea redirected to /repos/fault/new; not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant", 301, 1}},
		{"moved", true, faultResult{"redirect", "Gitea redirected this POST to /repos/fault/new/issues; not followed: a write is never resent to another location", 301, 1}},
		{"signed", false, faultResult{"redirect", "Gitea redirected to /repos/fault/signed/actions/artifacts/1/zip/raw (its query left out); not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant", 302, 1}},
		{"elsewhere", false, faultResult{"redirect", "Gitea redirected to another host; not followed: the token is only ever sent to GITEA_URL", 302, 1}},
	} {
		name := "GET " + tc.repo
		tool, args, path := "repoGet", map[string]any{"owner": "fault", "repo": tc.repo}, "/repos/fault/"+tc.repo
		if tc.post {
			name = "POST " + tc.repo
			tool, args["body"], path = "issueCreateIssue", map[string]any{"title": "t"}, path+"/issues"
		}
		t.Run(name, func(t *testing.T) {
			c := shared
			if tc.want.Kind == "timeout" { // they wait at once, each on a server of its own
				t.Parallel()
				c = start(t, "300ms")
				defer func() {
					if strings.Contains(c.transcript.String(), fakeToken) {
						t.Error("the token appears in the server's output")
					}
				}()
			}
			before := f.count("", path)
			res, isErr := c.callTool(tool, args)
			got := faultResult{Kind: str(get(res, "error.kind")), Message: str(get(res, "error.message")), Sent: f.count("", path) - before}
			got.Status, _ = strconv.Atoi(str(get(res, "status")))
			if !isErr {
				got.Kind, got.Message = "", ""
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
			if r := c.call("ping", nil); r.Error != nil {
				t.Fatalf("ping after the fault: %v", r.Error.Message)
			}
		})
	}
	for _, name := range []string{"huge", "huge-chunked"} {
		n := written[name].Load()
		t.Logf("%s: the server wrote %d kB of 50 MB before the client stopped reading", name, n>>10)
		if n > 25<<20 {
			t.Errorf("%s: %d bytes read from a 50 MB answer, want far fewer", name, n)
		}
	}
	if n := len(other.requests()); n != 0 {
		t.Errorf("a redirect to another host was followed %d times", n)
	}
	if strings.Contains(shared.transcript.String(), fakeToken) {
		t.Error("the token appears in the server's output")
	}
}

// rawListener listens on a loopback port for the test's length, runs serve
// on each connection and closes it; it returns the listener.
func rawListener(t *testing.T, serve func(net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			serve(conn)
			conn.Close()
		}
	}()
	return ln
}

// TestNetworkFaults covers faults below HTTP: a refused connection, a name
// that does not resolve, and TLS failures; and GITEA_CA_FILE.
func TestNetworkFaults(t *testing.T) {
	t.Parallel()
	refused := "http://" + refusedAddr(t, 0)
	tlsGitea := newScriptedGiteaTLS(t).user("alice").json("/repos/alice/demo", map[string]any{"full_name": "alice/demo"})
	plain := newScriptedGitea(t)
	ssh := rawListener(t, func(conn net.Conn) { conn.Write([]byte("SSH-2.0-OpenSSH_9.6\r\n")) }) // speaks neither TLS nor HTTP
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsGitea.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	otherCA := filepath.Join(t.TempDir(), "other.pem")
	os.WriteFile(otherCA, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: selfSigned(t)}), 0o600)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(tlsGitea.URL, "https://"))
	for _, tc := range []struct {
		name string
		env  []string
		want faultResult
	}{
		{"connection refused", []string{"GITEA_URL=" + refused}, faultResult{"connection_refused", "Gitea refused the connection: is it running at GITEA_URL?", 0, 0}},
		{"no such host", []string{"GITEA_URL=http://gitea.invalid"}, faultResult{"dns_error", "cannot resolve the host name of GITEA_URL: ", 0, 0}},
		{"unknown CA", []string{"GITEA_URL=" + tlsGitea.URL}, faultResult{"tls_error", "TLS with Gitea failed: its certificate is signed by an unknown authority (for a private CA, set GITEA_CA_FILE)", 0, 0}},
		{"GITEA_CA_FILE", []string{"GITEA_URL=" + tlsGitea.URL, "GITEA_CA_FILE=" + ca}, faultResult{Status: 200}},
		{"GITEA_CA_FILE of another CA", []string{"GITEA_URL=" + tlsGitea.URL, "GITEA_CA_FILE=" + otherCA}, faultResult{"tls_error", "TLS with Gitea failed: its certificate is signed by an unknown authority (for a private CA, set GITEA_CA_FILE)", 0, 0}},
		{"wrong host name", []string{"GITEA_URL=https://localhost:" + port, "GITEA_CA_FILE=" + ca}, faultResult{"tls_error", "TLS with Gitea failed: its certificate is not valid for the host name of GITEA_URL", 0, 0}},
		{"HTTP, not TLS", []string{"GITEA_URL=" + strings.Replace(plain.URL, "http:", "https:", 1)}, faultResult{"tls_error", "TLS with Gitea failed: it does not speak TLS (should GITEA_URL start with http://?)", 0, 0}},
		{"neither TLS nor HTTP", []string{"GITEA_URL=https://" + ssh.Addr().String()}, faultResult{"tls_error", "TLS with Gitea failed: it does not speak TLS (should GITEA_URL start with http://?)", 0, 0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := startClient(t, append(tc.env, "GITEA_TOKEN="+fakeToken)...)
			c.initialize("2025-11-25")
			for range 2 { // the server still serves after the fault
				res, isErr := c.callTool("repoGet", map[string]any{"owner": "alice", "repo": "demo"})
				got := faultResult{Kind: str(get(res, "error.kind")), Message: str(get(res, "error.message"))}
				got.Status, _ = strconv.Atoi(str(get(res, "status")))
				if !isErr {
					got.Kind, got.Message = "", ""
				}
				if p := tc.want.Message; strings.HasSuffix(p, ": ") && strings.HasPrefix(got.Message, p) {
					got.Message = p // a want ending in ": " is a prefix: the resolver's words vary
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("mismatch (-want +got):\n%s", diff)
				}
			}
			if strings.Contains(c.transcript.String(), fakeToken) || strings.Contains(c.transcript.String(), "127.0.0.1") {
				t.Errorf("the token or Gitea's address appears in the output:\n%s", c.transcript.String())
			}
		})
	}
}

// selfSigned returns the DER of a fresh self-signed CA certificate, one that
// signed nothing the tests serve.
func selfSigned(t *testing.T) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "another CA"}, IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign, NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return der
}

// TestCAFileStartup shows that a bad GITEA_CA_FILE stops the server with one
// line on stderr.
func TestCAFileStartup(t *testing.T) {
	t.Parallel()
	notPEM := filepath.Join(t.TempDir(), "ca.txt")
	os.WriteFile(notPEM, []byte("not a certificate\n"), 0o600)
	for _, tc := range []struct{ file, want string }{
		{"/no/such/ca.pem", "giteamcp: GITEA_CA_FILE: open /no/such/ca.pem: no such file or directory\n"},
		{notPEM, fmt.Sprintf("giteamcp: GITEA_CA_FILE %q: no PEM certificate in it\n", notPEM)},
	} {
		c := startClient(t, "GITEA_CA_FILE="+tc.file)
		c.in.Close()
		err := c.cmd.Wait()
		if diff := cmp.Diff(tc.want, c.stderr.String()); diff != "" || err == nil {
			t.Errorf("GITEA_CA_FILE=%s: exit %v; mismatch (-want +got):\n%s", tc.file, err, diff)
		}
	}
}

// TestE2EConnectionRefused stops a Gitea of its own between two calls: the
// second is refused, and the server still serves.
func TestE2EConnectionRefused(t *testing.T) {
	g := ownGitea(t)
	c := e2eClient(t, g, "alice")
	owner, repo := ownerRepo(g)
	args := map[string]any{"owner": owner, "repo": repo}
	if res, isErr := c.callTool("repoGet", args); isErr {
		t.Fatalf("before the stop: %v", res)
	}
	g.stop()
	u, _ := url.Parse(g.URL)
	port, _ := strconv.Atoi(u.Port())
	refusedAddr(t, port) // no other test's Gitea may take the port now
	for range 2 {
		res, isErr := c.callTool("repoGet", args)
		got := faultResult{Kind: str(get(res, "error.kind")), Message: str(get(res, "error.message"))}
		want := faultResult{Kind: "connection_refused", Message: "Gitea refused the connection: is it running at GITEA_URL?"}
		if diff := cmp.Diff(want, got); diff != "" || !isErr {
			t.Errorf("isError %v; mismatch (-want +got):\n%s", isErr, diff)
		}
	}
	if r := c.call("ping", nil); r.Error != nil {
		t.Fatal(r.Error.Message)
	}
}

// TestE2ERedirect renames a repository, which makes Gitea answer its old
// name with 301 Moved Permanently: neither a read nor a write is followed,
// and the write is not applied under the new name.
func TestE2ERedirect(t *testing.T) {
	g := needGitea(t)
	owner, _ := ownerRepo(g)
	old := "moved-" + rand.Text()[:8]
	s := &giteaSetup{g: g}
	s.call("alice", "POST", "/user/repos", map[string]any{"name": old}, http.StatusCreated, nil)
	s.call("alice", "PATCH", "/repos/"+owner+"/"+old, map[string]any{"name": old + "-new"}, http.StatusOK, nil)
	if s.err != nil {
		t.Fatal(s.err)
	}
	c := e2eClient(t, g, "alice")
	for _, tc := range []struct {
		tool string
		args map[string]any
		want faultResult
	}{
		{"repoGet", map[string]any{"owner": owner, "repo": old}, faultResult{"redirect", "Gitea redirected to /repos/" + owner + "/" + old + "-new; not followed, so that the rules checked for the path asked cover what is read: call that path if it is the one meant", 301, 0}},
		{"issueCreateIssue", map[string]any{"owner": owner, "repo": old, "body": map[string]any{"title": "lost?"}}, faultResult{"redirect", "Gitea redirected this POST to /repos/" + owner + "/" + old + "-new/issues; not followed: a write is never resent to another location", 301, 0}},
	} {
		res, _ := c.callTool(tc.tool, tc.args)
		got := faultResult{Kind: str(get(res, "error.kind")), Message: str(get(res, "error.message"))}
		got.Status, _ = strconv.Atoi(str(get(res, "status")))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.tool, diff)
		}
	}
	_, _, data, err := g.api("alice", "GET", "/repos/"+owner+"/"+old+"-new/issues?state=all", nil)
	if err != nil || string(data) != "[]\n" && string(data) != "[]" {
		t.Errorf("issues of the renamed repository: %s, %v; want none", data, err)
	}
}

// refusedAddr returns a loopback address on port (0: any free port) that
// refuses connections for the whole test: the port is bound by a socket that
// never listens, so no server started later, in this test binary or another
// process, is handed that port.
func refusedAddr(t *testing.T, port int) string {
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fd) })
	if port != 0 { // a stopped server's connections may linger in TIME_WAIT
		syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	}
	if err := syscall.Bind(fd, &syscall.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		t.Fatal(err)
	}
	sa, err := syscall.Getsockname(fd)
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("127.0.0.1:%d", sa.(*syscall.SockaddrInet4).Port)
}
