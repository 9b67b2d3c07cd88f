// Giteamcp is a Model Context Protocol server for Gitea: it lets an AI agent
// work on a Gitea instance through one narrow, audited door.
//
// # Reading map
//
// Read the files in this order. The security path, what decides whether a
// request is sent and what of its answer reaches the model, is marked *;
// README.md's "Threat model" says what it defends against.
//
//	main.go          configuration (loadConfig, the one reader of the
//	                 environment), start-up, this map
//	rpc.go           JSON-RPC over stdio: framing, limits, sessions, dispatch
//	tools.go         the tool catalog, tools/list and tools/call, the one-step
//	                 and profile tools (whoami, profiles, activation, task
//	                 capability, guide); tools only describe requests, they
//	                 never call Gitea
//	find.go          gitea_find_operations: word search over the operations
//	                 the active profile permits
//	executor.go    * the executor, the one door to Gitea: resolve, policy
//	                 check (identity, self-approval, self-merge, head pins,
//	                 whose an object written is, and the live reads they need:
//	                 a pull request's author and head; restoreDenied, a
//	                 review's deletion judged by the approval it restores;
//	                 marksMerged, the pull requests a push makes Gitea mark
//	                 merged; threadCloses, a text in a pull request's thread
//	                 its merge closes or reopens an issue by), encode, send,
//	                 result pipeline; the audit write is called here
//	effects.go     * the live effects of a write (liveEffects, called by
//	                 check): where it lands, the repositories it reaches (a
//	                 fork's parent, a migration's source, the issues the
//	                 commits it pushes reference; issueNamed, the issues
//	                 those it picks up name), the pull requests a
//	                 branch's deletion closes or retargets (a merge's too,
//	                 with their approvals); reopenCarried, an approval
//	                 reopening carries to a head pushed while closed, and
//	                 pullRef, the commit Gitea shows a pull request at
//	client.go      * the Gitea client: the one HTTP exchange (the token only
//	                 to GITEA_URL, no redirect, bounded reads), fault naming,
//	                 and the reads the policy's live checks make through it
//	                 (route, get, live, rawText, listCommits, allCommits,
//	                 openPullsOn, forkOutside, branchOf; pushedMessages, the
//	                 commits a write pushes, templateTexts, a merge template
//	                 expanded, shownHead, a pull request shown at another commit
//	                 than its head, reviewUndone, a review a review request undoes,
//	                 approvedBy, an approval a retarget would carry,
//	                 restoredApproval, one a review's deletion restores,
//	                 storedRefs, stopwatchOutside, linkedOutside: the stored
//	                 texts, stopwatches and dependency links a write reaches)
//	policy.go      * the per-call policy decision (decide): route and body
//	                 rules, effects, the repositories a call reaches, the
//	                 head pin of approvals and merges (pinDenied)
//	profile.go     * profiles: canonical operations and aliases, built-in
//	                 profiles, loading and selection, what a profile allows
//	                 (permitted, the one rule; allowsRepo) and what the
//	                 listing shows of it (shows, mayUse)
//	encode.go      * a request's arguments validated and encoded (resolve):
//	                 path and query encoding, the raw tool's route matching
//	envelope.go    * the result envelope, error messages and refusal
//	                 reasons (scrubbed and bounded)
//	scrub.go       * the scrubbing walk over JSON answers, and the JSON scanner
//	                 it, compact.go and openapi.go share
//	redact.go      * exact redaction and pattern masking, in every reading of a
//	                 text that shows a secret
//	readings.go    * the readings of a text (textViews): the forms in which
//	                 Gitea or git writes a secret that only so read shows
//	hidden.go      * hidden-character removal and marking; the texts bytes
//	                 may hold (binaryViews); two readings (asciiForms,
//	                 unescapeJSON)
//	compact.go       the compact view of answers, projected along their
//	                 response definitions before the pipeline scrubs them
//	schema.go        the JSON Schema validator of tool arguments
//	openapi.go       the OpenAPI reader that generates the tools
//	audit.go       * the audit log of mutation attempts, every refusal
//	                 included, each line sealed by a forward-secure mac chain;
//	                 runtime isolation (no start from a half-merged checkout)
//	workflow.go      the workflow gates: eligibility, merge, reconcile and
//	                 write_file's reads, each request through the executor
//	http.go          Streamable HTTP transport (-http): bearer check, origins,
//	                 sessions
//	oauth.go         OAuth mode (-http with GITEA_OAUTH_CLIENT_ID): the
//	                 authorization server and the sealed tokens
//	oauthgitea.go    OAuth mode's code exchange and refresh with Gitea, and
//	                 what Gitea's refusals tell the client
//
// A stdio deployment (no -http) never runs http.go or oauthgitea.go, and of
// oauth.go only loadOAuth (which finds OAuth mode off) and parseOAuthKey
// (which also decodes GITEA_AUDIT_KEY) at start. main.go's readDoc removes
// the hidden characters of a live or file OpenAPI document.
//
// # Usage
//
//	GITEA_URL=https://gitea.example.com GITEA_TOKEN=... giteamcp [flags]
//
// The server speaks MCP JSON-RPC over standard input and output, or over
// Streamable HTTP at http://addr/mcp with -http. Every Gitea
// API operation is a tool generated from Gitea's own OpenAPI document; the
// tools listed directly are a small set (GITEA_MCP_TOOLS), and
// gitea_find_operations and gitea_call_operation reach all the others.
// gitea_api_request sends a request by method and path. Every request goes
// through the same executor and every result comes back in one JSON envelope
// that says who acted, what was requested, and that the data is untrusted.
//
// The flags are:
//
//	-http addr
//		Serve Streamable HTTP on addr instead of stdio. An empty host
//		(":8080") binds 127.0.0.1; any other host than loopback needs
//		MCP_BEARER_TOKEN or OAuth mode.
//	-version
//		Print the version and exit.
//	-verify-audit file
//		Check every line's mac in an audit log (GITEA_AUDIT_LOG), with
//		GITEA_AUDIT_KEY or GITEA_AUDIT_KEY_FILE when the log was written
//		with one, report the first line that fails, and print the head.
//	-audit-head COUNT:MAC
//		With -verify-audit: the head the server reported (on standard error
//		at exit, and in gitea_get_profile); a log rewritten up to it or
//		ending before it fails.
//
// # Environment
//
// Every environment variable the server reads (docmap_test.go checks this
// table against the code):
//
//	GITEA_URL                   base URL of the Gitea instance
//	                            (https://host[:port][/prefix])
//	GITEA_TOKEN                 access token of the identity the server acts as
//	GITEA_OPENAPI               "embedded" (default: Gitea 1.26.0's document),
//	                            "live" (GITEA_URL/swagger.v1.json) or a file path
//	GITEA_MCP_TOOLS             generated tools to list: operationIds and *
//	                            globs, comma-separated, or "all"
//	DISABLED_TOOLS              tool and operation names to remove, comma-separated
//	                            (and the workflow tools that send such an operation)
//	GITEA_TIMEOUT               timeout of one Gitea request (default 30s)
//	GITEA_CA_FILE               PEM file of the CAs that sign Gitea's certificate
//	                            (a private CA); they replace the system's
//	GITEA_MCP_PROFILE           the execution profile (built-in or from
//	                            GITEA_MCP_CONFIG); none: reads only
//	GITEA_MCP_CONFIG            JSON file of profiles
//	GITEA_AUDIT_LOG             file of the audit log: sealed lines of every
//	                            mutation attempt, written before it is sent
//	GITEA_AUDIT_KEY             32 random bytes, base64 or hex: the initial key
//	                            of the audit log's forward-secure HMAC-SHA256
//	                            chain; none: a plain SHA-256 chain
//	GITEA_AUDIT_KEY_FILE        a file holding that key instead
//	GITEA_SUDO                  with an admin token: the user every request acts for
//	SECRET_DETECTION_MODE       off, mask (default) or block
//	MAX_TOOL_RESPONSE_ITEMS     most elements of a top-level list (default 100)
//	MAX_TOOL_RESPONSE_CHARS     most bytes of a result's text (default 200000)
//	MAX_BINARY_BYTES            largest binary answer or upload (default 131072)
//	GITEA_MCP_RESULTS           "compact" (default): answers projected to what an
//	                            agent acts on (compact.go); "full": Gitea's answers whole
//	GITEA_MCP_REVEAL_ENDPOINTS  1: keep Gitea's absolute URLs in messages
//	MCP_BEARER_TOKEN            with -http: the token every HTTP request must
//	                            carry as "Authorization: Bearer <token>"
//	MCP_ALLOWED_ORIGINS         with -http: browser origins (scheme://host[:port],
//	                            comma-separated) admitted besides loopback ones,
//	                            and served with CORS on /mcp
//	MCP_HTTP_MAX_IN_FLIGHT      with -http: most requests served at once, all
//	                            sessions together (default 64); more are
//	                            refused "server busy"
//	GITEA_OAUTH_CLIENT_ID       with -http: OAuth mode, each request acting as the
//	                            user who signed in through this Gitea OAuth2
//	                            application
//	GITEA_OAUTH_CLIENT_SECRET   OAuth mode: that application's secret
//	MCP_OAUTH_KEY               OAuth mode: 32 random bytes, base64 or hex,
//	                            sealing everything the server hands out
//	MCP_PUBLIC_URL              OAuth mode: the server's public URL
//	                            (https://host[:port]); default http://addr of -http
//	GITEA_PUBLIC_URL            OAuth mode: the address browsers reach Gitea at,
//	                            for the sign-in's redirects only (default GITEA_URL)
//	token_source_name           a profile's token_source_name (GITEA_MCP_CONFIG)
//	                            names the variable its token is read from
//
// A missing GITEA_URL or GITEA_TOKEN still lets the server start and list its
// tools; calls then fail with a clear error. Malformed settings stop it with
// one line on standard error.
package main

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// version is the server's version, reported in serverInfo.
const version = "0.1.0"

func main() {
	showVersion := flag.Bool("version", false, "print the version and exit")
	httpAddr := flag.String("http", "", "serve Streamable HTTP on `addr` (\":8080\" binds 127.0.0.1) instead of stdio")
	verify := flag.String("verify-audit", "", "check every line's mac in the audit log `file` and exit")
	headFlag := flag.String("audit-head", "", "with -verify-audit: the head `COUNT:MAC` the server reported")
	flag.Usage = func() {
		fmt.Fprintf(os.Stderr, "usage: GITEA_URL=... GITEA_TOKEN=... giteamcp [-version] [-http addr]\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *showVersion {
		fmt.Println("giteamcp", version)
		return
	}
	if *verify != "" {
		msg, err := verifyAuditFile(*verify, *headFlag, os.Getenv)
		if err != nil {
			fatal(err)
		}
		fmt.Println(msg)
		return
	}
	if *headFlag != "" {
		fatal(errors.New("-audit-head goes with -verify-audit"))
	}
	if flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	s, err := newServer(os.Getenv)
	if err != nil {
		fatal(err)
	}
	go func() {
		if err := s.wait(); err != nil {
			fatal(err) // a bad OpenAPI document or tool setting, found while serving
		}
	}()
	if s.cfg.oauth != nil && *httpAddr == "" {
		fatal(errors.New("GITEA_OAUTH_CLIENT_ID: OAuth mode signs users in over HTTP; start with -http addr"))
	}
	if *httpAddr != "" {
		err = s.serveHTTP(ctx, *httpAddr)
	} else {
		err = s.serveStdio(ctx, os.Stdin, os.Stdout)
	}
	if err != nil {
		fatal(err)
	}
	if err := s.wait(); err != nil {
		fatal(err)
	}
	if a := s.exec.audit; a != nil {
		head, _ := a.head()
		fmt.Fprintf(os.Stderr, "giteamcp: audit log head %s (check with -verify-audit %s -audit-head %s)\n", head, s.cfg.auditPath, head)
		if err := a.close(); err != nil {
			fatal(fmt.Errorf("GITEA_AUDIT_LOG: %w", err))
		}
	}
}

// verifyAuditFile serves -verify-audit: it checks the log at path with the
// key in the environment, against head (COUNT:MAC) if given, and says how far
// the result can be trusted.
func verifyAuditFile(path, head string, getenv func(string) string) (string, error) {
	var want *auditHead
	if head != "" {
		h, err := parseAuditHead(head)
		if err != nil {
			return "", err
		}
		want = &h
	}
	key, err := loadAuditKey(getenv)
	if err != nil {
		return "", err
	}
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	got, err := verifyAudit(f, key, want)
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	msg := fmt.Sprintf("%s: %d lines, chain intact, head %s", path, got.Lines, got)
	if want != nil {
		msg += fmt.Sprintf("; line %d matches the reported head", want.Lines)
	} else {
		msg += "; without -audit-head, lines dropped from the end go unseen"
	}
	if key == nil {
		msg += "; no GITEA_AUDIT_KEY: a plain SHA-256 chain only guards against accidents, whoever can write the file can recompute it"
	} else {
		msg += "; every mac verified with the key"
	}
	return msg, nil
}

var fatalMu sync.Mutex

// fatal prints one line on stderr and exits non-zero; a second caller waits
// for the exit, so only one line is ever printed.
func fatal(err error) {
	fatalMu.Lock()
	fmt.Fprintf(os.Stderr, "giteamcp: %v\n", err)
	os.Exit(1)
}

// config is the server's configuration: loadConfig is the one place that
// reads the environment, and everything else reads this plain value.
type config struct {
	url     *url.URL // nil when GITEA_URL is unset
	apiBase string   // url + "/api/v1", no trailing slash

	profileName string // GITEA_MCP_PROFILE
	profileFile string // GITEA_MCP_CONFIG
	auditPath   string // GITEA_AUDIT_LOG
	auditKey    []byte // GITEA_AUDIT_KEY(_FILE); cleared once the audit log holds it
	sudo        string // GITEA_SUDO: the user every request acts for
	openapi     string
	tools       string
	off         string
	timeout     time.Duration
	roots       *x509.CertPool // GITEA_CA_FILE; nil: the system's CAs

	secrets         []string // exact values redacted from every result
	secretMode      secretMode
	maxItems        int // MAX_TOOL_RESPONSE_ITEMS
	maxChars        int // MAX_TOOL_RESPONSE_CHARS
	maxBinary       int // MAX_BINARY_BYTES
	revealEndpoints bool
	fullResults     bool // GITEA_MCP_RESULTS=full

	profiles *profileConfig    // GITEA_MCP_CONFIG; nil: the built-in profiles
	tokens   map[string]string // GITEA_TOKEN and each configured profile's token_source_name, by variable

	// -http mode: MCP_BEARER_TOKEN, MCP_ALLOWED_ORIGINS and
	// MCP_HTTP_MAX_IN_FLIGHT as given, checked by loadHTTPConfig when the HTTP
	// mode starts; and OAuth mode's settings (GITEA_OAUTH_CLIENT_ID, oauth.go),
	// nil otherwise, from which the HTTP mode builds the OAuth server.
	bearerToken, allowedOrigins, maxInFlight string
	oauth                                    *oauthConfig
}

// token returns the value of the token variable name, as read at start.
func (c *config) token(name string) string { return c.tokens[name] }

// maxReadBytes bounds how much of a text or JSON answer is read; a larger
// answer is an error (payload_too_large), never read whole into memory.
const maxReadBytes = 8 << 20

// loadConfig reads and checks the configuration.
func loadConfig(getenv func(string) string) (*config, error) {
	c := &config{profileName: getenv("GITEA_MCP_PROFILE"), profileFile: getenv("GITEA_MCP_CONFIG"), auditPath: getenv("GITEA_AUDIT_LOG"), sudo: getenv("GITEA_SUDO"), openapi: getenv("GITEA_OPENAPI"), tools: getenv("GITEA_MCP_TOOLS"),
		off: getenv("DISABLED_TOOLS"), timeout: 30 * time.Second, revealEndpoints: getenv("GITEA_MCP_REVEAL_ENDPOINTS") == "1"}
	for _, name := range []string{"GITEA_TOKEN", "MCP_BEARER_TOKEN", "GITEA_OAUTH_CLIENT_SECRET", "MCP_OAUTH_KEY"} {
		if v := getenv(name); v != "" {
			c.secrets = append(c.secrets, v)
		}
	}
	switch v := getenv("GITEA_MCP_RESULTS"); v {
	case "", "compact":
	case "full":
		c.fullResults = true
	default:
		return nil, fmt.Errorf("GITEA_MCP_RESULTS %q: want compact or full", v)
	}
	var err error
	if c.secretMode, err = parseSecretMode(getenv("SECRET_DETECTION_MODE")); err != nil {
		return nil, err
	}
	for _, b := range []struct {
		name string
		dst  *int
		def  int
	}{{"MAX_TOOL_RESPONSE_ITEMS", &c.maxItems, 100}, {"MAX_TOOL_RESPONSE_CHARS", &c.maxChars, 200_000}, {"MAX_BINARY_BYTES", &c.maxBinary, 128 << 10}} {
		*b.dst = b.def
		if v := getenv(b.name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("%s %q: want a positive whole number", b.name, v)
			}
			*b.dst = n
		}
	}
	if c.maxChars < 1000 {
		return nil, fmt.Errorf("MAX_TOOL_RESPONSE_CHARS %d: want at least 1000", c.maxChars)
	}
	if raw := getenv("GITEA_URL"); raw != "" {
		u, err := url.Parse(raw)
		if err == nil && u.User != nil {
			return nil, errors.New("GITEA_URL: must not carry credentials") // and never echo them
		}
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return nil, errors.New("GITEA_URL: want http(s)://host[:port][/path]") // the value is not echoed: it may hold a secret
		}
		c.url = u
		c.apiBase = strings.TrimSuffix(u.String(), "/") + "/api/v1"
	}
	if v := getenv("GITEA_TIMEOUT"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("GITEA_TIMEOUT %q: want a positive duration such as 30s", v)
		}
		c.timeout = d
	}
	if v := getenv("GITEA_CA_FILE"); v != "" {
		if c.roots, err = loadCA(v); err != nil {
			return nil, err
		}
	}
	if c.auditKey, err = loadAuditKey(getenv); err != nil {
		return nil, err
	}
	if c.auditKey != nil && c.auditPath == "" {
		return nil, errors.New("GITEA_AUDIT_KEY: set GITEA_AUDIT_LOG too; there is no audit log to seal")
	}
	if c.oauth, err = loadOAuth(getenv, c.url); err != nil {
		return nil, err
	}
	c.bearerToken, c.allowedOrigins, c.maxInFlight = getenv("MCP_BEARER_TOKEN"), getenv("MCP_ALLOWED_ORIGINS"), getenv("MCP_HTTP_MAX_IN_FLIGHT")
	if c.profileFile != "" {
		if c.profiles, err = loadProfiles(c.profileFile); err != nil {
			if ierr := infraCheck(c.profileFile, ""); ierr != nil && !os.IsNotExist(err) && !errors.Is(err, os.ErrNotExist) {
				return nil, ierr // conflict markers: say infra_stop, with the recovery steps
			}
			return nil, err
		}
	}
	c.tokens = map[string]string{defaultToken: getenv(defaultToken)}
	if c.profiles != nil { // every configured profile's token is redacted from every result
		for _, name := range c.profiles.names {
			p := c.profiles.profiles[name]
			c.tokens[p.TokenSourceName] = getenv(p.TokenSourceName)
			if v := c.tokens[p.TokenSourceName]; v != "" {
				c.secrets = append(c.secrets, v)
			}
		}
	}
	return c, nil
}

// server is the MCP server: configuration, tool catalog and executor. The
// catalog is built in the background from the start, so that answering
// initialize never waits for the OpenAPI document.
type server struct {
	cfg     *config
	ready   chan struct{} // closed once cat and exec are set, or loadErr
	cat     *catalog
	exec    *executor
	loadErr error
}

// newServer reads the configuration, selects the execution profile, opens the
// audit log and starts the runtime isolation check and building the catalog.
func newServer(getenv func(string) string) (*server, error) {
	cfg, err := loadConfig(getenv)
	if err != nil {
		return nil, err
	}
	x := &executor{cfg: cfg, srcDir: sourceDir(), client: giteaClient(cfg), profiles: cfg.profiles}
	var prof *profile
	var token string
	if cfg.oauth != nil {
		prof, err = oauthProfile(x.profiles, cfg.profileName) // each request brings its user's token
	} else {
		prof, token, err = selectProfile(x.profiles, cfg.profileName, cfg.token)
	}
	if errors.Is(err, errUnsetToken) {
		fmt.Fprintf(os.Stderr, "giteamcp: %v; tool calls fail until it is set\n", err)
	} else if err != nil {
		return nil, err
	}
	if strings.ContainsAny(token, " \t\r\n") {
		return nil, errors.New("the Gitea token contains white space")
	}
	x.activate(prof, token)
	if prof != nil {
		for _, w := range prof.warnings() {
			fmt.Fprintf(os.Stderr, "giteamcp: profile %s: %s\n", prof.Name, w)
		}
	}
	x.audit, err = openAudit(cfg.auditPath, cfg.auditKey)
	clear(cfg.auditKey) // only the audit chain's moving key remains
	cfg.auditKey = nil
	if err != nil {
		return nil, fmt.Errorf("GITEA_AUDIT_LOG: %w", err)
	}
	s := &server{cfg: cfg, exec: x, ready: make(chan struct{})}
	go s.load()
	return s, nil
}

// sourceDir returns the working directory when it is a checkout of this
// server (go run .), whose state infraCheck watches; "" otherwise. Its go.mod
// declares module giteamcp on any line, as written: after a comment, with CRLF
// line ends, or between conflict markers.
func sourceDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	mod, _ := os.ReadFile(filepath.Join(dir, "go.mod"))
	for line := range strings.Lines(string(mod)) {
		if f := strings.Fields(line); len(f) > 1 && f[0] == "module" && strings.Trim(f[1], `"`) == "giteamcp" {
			return dir
		}
	}
	return ""
}

// load checks the runtime isolation, reads the OpenAPI document and builds
// the catalog.
func (s *server) load() {
	defer close(s.ready)
	infra := make(chan error, 1) // the runtime isolation check runs beside the parsing
	go func() { infra <- infraCheck(s.cfg.profileFile, s.exec.srcDir) }()
	s.loadErr = s.build()
	if err := <-infra; err != nil {
		s.loadErr = err
	}
}

// build reads the OpenAPI document and builds the catalog.
func (s *server) build() error {
	doc, err := loadOpenAPI(s.cfg)
	if err != nil {
		return err
	}
	ops, err := parseOpenAPI(doc)
	if err != nil {
		return err
	}
	if !bytes.Equal(doc, embeddedOpenAPI) {
		if err := sameOperations(ops); err != nil {
			return err
		}
	}
	if s.cat, err = newCatalog(ops, s.cfg.tools, s.cfg.off, s.cfg.profileName); err != nil {
		return err
	}
	s.exec.setCatalog(s.cat)
	return nil
}

// wait blocks until the catalog is built.
func (s *server) wait() error {
	<-s.ready
	return s.loadErr
}

// loadOpenAPI returns the OpenAPI document GITEA_OPENAPI names.
func loadOpenAPI(cfg *config) ([]byte, error) {
	switch cfg.openapi {
	case "", "embedded":
		return embeddedOpenAPI, nil
	case "live":
		if cfg.url == nil {
			return nil, errors.New("GITEA_OPENAPI=live needs GITEA_URL")
		}
		resp, err := giteaClient(cfg).Get(strings.TrimSuffix(cfg.url.String(), "/") + "/swagger.v1.json")
		if err != nil {
			return nil, fmt.Errorf("GITEA_OPENAPI=live: %w", err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return nil, fmt.Errorf("GITEA_OPENAPI=live: %s answered %s", cfg.url.Host, resp.Status)
		}
		doc, err := readDoc(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("GITEA_OPENAPI=live: %w", err)
		}
		return doc, nil
	}
	f, err := os.Open(cfg.openapi)
	if err != nil {
		return nil, fmt.Errorf("GITEA_OPENAPI: %w", err)
	}
	defer f.Close()
	doc, err := readDoc(f)
	if err != nil {
		return nil, fmt.Errorf("GITEA_OPENAPI: %q: %w", cfg.openapi, err)
	}
	return doc, nil
}

// maxOpenAPI bounds a live or file OpenAPI document; Gitea 1.26.0's is 0.5 MB.
const maxOpenAPI = 32 << 20

// readDoc reads an OpenAPI document of at most maxOpenAPI bytes, without its
// hidden characters, raw or as JSON escapes (a whole escape, its run of
// backslashes included: still JSON): its text reaches the model, and a live
// one comes from Gitea.
func readDoc(r io.Reader) ([]byte, error) {
	doc, err := io.ReadAll(io.LimitReader(r, maxOpenAPI+1))
	if err != nil {
		return nil, err
	}
	if len(doc) > maxOpenAPI {
		return nil, fmt.Errorf("document larger than %d MiB", maxOpenAPI>>20)
	}
	text, _ := stripHidden(string(doc))
	text, _ = stripEscapedHidden(text)
	return []byte(text), nil
}

// capabilities returns the server capabilities. The stateless era has no
// list_changed subscription here.
func (s *server) capabilities(modern bool) map[string]any {
	if modern {
		return map[string]any{"tools": map[string]any{}, "logging": map[string]any{}}
	}
	return map[string]any{"tools": map[string]any{"listChanged": true}, "logging": map[string]any{}}
}

// info returns serverInfo.
func (s *server) info() map[string]any {
	return map[string]any{"name": "giteamcp", "version": version}
}

// instructions tells the client, in a few lines, how to use this server: the
// short operator guide.
func (s *server) instructions(ctx context.Context) string {
	return s.guide(ctx, false)
}
