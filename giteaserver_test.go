package main

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// giteaVersion is the Gitea release the end-to-end tests run against; v1.27.3 does not
// build from the Go module proxy.
const giteaVersion = "1.26.0"

// giteaTrial asks TestTrial to keep a throwaway Gitea running for trying giteamcp by hand.
var giteaTrial = flag.Bool("trial", false, "start a throwaway Gitea with fixtures, print how to connect, wait for Ctrl-C")

// giteaLogins are the users of a test instance; the first is the admin who owns the fixtures.
var giteaLogins = []string{"alice", "bob", "carol"}

// Fixture files committed to main: a path with slashes and content that is not UTF-8.
const (
	fixtureGuidePath = "docs/guide/intro.md"
	fixtureGuide     = "# Intro\n\nA guide two directories deep.\n"
	fixtureBinPath   = "assets/logo.bin"
)

// fixtureBin is the content of fixtureBinPath: a PNG-like header, NUL and invalid UTF-8.
var fixtureBin = []byte{0x89, 'P', 'N', 'G', 0x00, 0xff, 0xfe, 0x80, 0xc3, 0x28}

// giteaInstance is a Gitea with the fixtures the end-to-end tests rely on, all in Repo.
type giteaInstance struct {
	URL       string            // base URL without trailing slash, e.g. http://127.0.0.1:40123
	Tokens    map[string]string // login (alice, bob, carol) -> access token with scope "all"
	Passwords map[string]string // login -> password; empty when reusing GITEA_TEST_URL
	Repo      string            // "alice/demo"; "alice/demo-<random>" when reusing GITEA_TEST_URL

	MainSHA    string           // head of main once all fixtures exist
	FeatureSHA string           // head of feature/x: one commit on top of main
	PR         int              // open pull request by bob, bob/change -> main, for carol to review and merge
	PRHeadSHA  string           // head of bob/change
	MergedPR   int              // pull request from landed, merged into main by alice
	LandedSHA  string           // head of landed and of landed-again, contained in main
	LandedPR   int              // open pull request by bob, landed-again -> main, whose head is already in main
	Issues     [2]int           // issue numbers, opened by bob and by carol
	Comments   [2]int64         // comment ids: Comments[i] is on Issues[i]
	Releases   map[string]int64 // release id by tag: "rel/1.0" and "v1.0", both targeting main

	pid  int    // of the web process; 0 when reusing GITEA_TEST_URL
	stop func() // kills the process and removes its files, or deletes Repo when reusing
}

// giteaHTTP sends the API requests; its timeout bounds a hung Gitea.
var giteaHTTP = &http.Client{Timeout: time.Minute}

// giteaTokenRE finds the token that `gitea admin user create --access-token` prints.
var giteaTokenRE = regexp.MustCompile(`\b[0-9a-f]{40}\b`)

// giteaBinary returns the Gitea binary cached in the user cache directory, building it
// from the Go module proxy the first time (about 4 minutes on 2 cores). A lock file next
// to the binary lets only one test process build at a time.
func giteaBinary() (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("gitea binary: %w", err)
	}
	dir := filepath.Join(cache, "giteamcp")
	bin := filepath.Join(dir, "gitea-"+giteaVersion)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("gitea binary: %w", err)
	}
	lock, err := os.OpenFile(bin+".lock", os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("gitea binary: %w", err)
	}
	defer lock.Close() // releases the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("gitea binary: lock %s: %w", lock.Name(), err)
	}
	if _, err := os.Stat(bin); err == nil {
		return bin, nil // built by another process while we waited for the lock
	}
	src, err := giteaSource()
	if err != nil {
		return "", err
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("gitea binary: %w", err)
	}
	defer os.RemoveAll(tmp)
	build := exec.Command("go", "build", "-tags", "sqlite sqlite_unlock_notify",
		"-ldflags", "-X main.Version="+giteaVersion, "-o", filepath.Join(tmp, "gitea"), ".")
	build.Dir = src
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build gitea %s in %s: %w\n%s", giteaVersion, src, err, giteaTail(out))
	}
	if err := os.Rename(filepath.Join(tmp, "gitea"), bin); err != nil {
		return "", fmt.Errorf("gitea binary: %w", err)
	}
	return bin, nil
}

// giteaSource downloads Gitea's module (a no-op once cached) and returns its directory,
// which holds the code to build and the templates and locales the server reads.
func giteaSource() (string, error) {
	var stderr bytes.Buffer
	cmd := exec.Command("go", "mod", "download", "-json", "code.gitea.io/gitea@v"+giteaVersion)
	cmd.Dir = os.TempDir() // outside any module or workspace
	cmd.Env = append(os.Environ(), "GOWORK=off")
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var mod struct{ Dir, Error string }
	jsonErr := json.Unmarshal(out, &mod)
	switch {
	case runErr == nil && jsonErr == nil && mod.Dir != "":
		return mod.Dir, nil
	case mod.Error != "":
		return "", fmt.Errorf("download gitea %s: %s", giteaVersion, mod.Error)
	}
	return "", fmt.Errorf("download gitea %s: %w\n%s", giteaVersion, errors.Join(runErr, jsonErr), giteaTail(stderr.Bytes()))
}

// giteaIni is the app.ini of a throwaway instance; its arguments are the work directory,
// the HTTP port, the module directory (templates and locales) and a secret key.
const giteaIni = `I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true
WORK_PATH = %[1]s

[server]
HTTP_ADDR = 127.0.0.1
HTTP_PORT = %[2]d
ROOT_URL = http://127.0.0.1:%[2]d/
DISABLE_SSH = true
OFFLINE_MODE = true
STATIC_ROOT_PATH = %[3]s

[database]
DB_TYPE = sqlite3
PATH = %[1]s/gitea.db

[repository]
ROOT = %[1]s/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = %[4]s

[service]
DISABLE_REGISTRATION = true

[log]
MODE = file
ROOT_PATH = %[1]s/log

[mailer]
ENABLED = false

[cron]
ENABLED = false

[oauth2]
ENABLED = true
INVALIDATE_REFRESH_TOKENS = true

[api]
ENABLE_SWAGGER = true
`

// startGitea launches a throwaway Gitea on a free loopback port with its own work
// directory and SQLite database, creates alice (admin), bob and carol with passwords and
// tokens, and provisions the fixtures. The process dies with the test process
// (Pdeathsig); stop kills its process group and removes the work directory.
func startGitea() (*giteaInstance, error) {
	bin, err := giteaBinary()
	if err != nil {
		return nil, err
	}
	src, err := giteaSource()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "giteamcp-gitea-")
	if err != nil {
		return nil, fmt.Errorf("start gitea: %w", err)
	}
	var pid atomic.Int64 // of the web process, once started
	exited := make(chan struct{})
	var waitErr error
	g := &giteaInstance{Tokens: map[string]string{}, Passwords: map[string]string{}, Repo: "alice/demo"}
	g.stop = giteaOnStop(func() {
		if p := pid.Load(); p != 0 {
			syscall.Kill(-int(p), syscall.SIGKILL)
			<-exited
		}
		os.RemoveAll(dir)
	})
	fail := func(err error) (*giteaInstance, error) {
		err = fmt.Errorf("start gitea: %w\n%s", err, giteaLogs(dir))
		g.stop()
		return nil, err
	}

	// The port is chosen just before the web process starts (migrate and the
	// users take seconds, and another test's Gitea may take a port freed that
	// early); until then app.ini names port 0.
	secret := rand.Text()
	writeIni := func(port int) error {
		return os.WriteFile(filepath.Join(dir, "app.ini"), []byte(fmt.Sprintf(giteaIni, dir, port, src, secret)), 0o600)
	}
	if err := writeIni(0); err != nil {
		return fail(err)
	}
	if out, err := giteaCommand(bin, dir, "migrate").CombinedOutput(); err != nil {
		return fail(fmt.Errorf("migrate: %w\n%s", err, giteaTail(out)))
	}
	for i, login := range giteaLogins {
		g.Passwords[login] = rand.Text()
		cmd := giteaCommand(bin, dir, "admin", "user", "create", "--username", login,
			"--password", g.Passwords[login], "--email", login+"@example.com",
			"--must-change-password=false", fmt.Sprintf("--admin=%t", i == 0),
			"--access-token", "--access-token-name", "e2e", "--access-token-scopes", "all")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fail(fmt.Errorf("create user %s: %w\n%s", login, err, giteaTokenRE.ReplaceAllString(giteaTail(out), "<token>")))
		}
		if g.Tokens[login] = giteaTokenRE.FindString(string(out)); g.Tokens[login] == "" {
			return fail(fmt.Errorf("create user %s: no access token in its output", login))
		}
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	g.URL = fmt.Sprintf("http://127.0.0.1:%d", port)
	if err := writeIni(port); err != nil {
		return fail(err)
	}
	out, err := os.Create(filepath.Join(dir, "web.log"))
	if err != nil {
		return fail(err)
	}
	defer out.Close()
	web := giteaCommand(bin, dir, "web")
	web.Stdout, web.Stderr = out, out
	if err := web.Start(); err != nil {
		return fail(err)
	}
	pid.Store(int64(web.Process.Pid))
	g.pid = web.Process.Pid
	go func() { waitErr = web.Wait(); close(exited) }()
	for deadline := time.Now().Add(time.Minute); ; {
		if resp, err := giteaHTTP.Get(g.URL + "/api/v1/version"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			return fail(fmt.Errorf("web: no answer at %s/api/v1/version within a minute", g.URL))
		}
		select {
		case <-exited:
			return fail(fmt.Errorf("web exited: %v", waitErr))
		case <-time.After(100 * time.Millisecond):
		}
	}
	if err := g.provision(); err != nil {
		return fail(err)
	}
	return g, nil
}

// giteaCommand runs the Gitea binary on the instance in dir, in its own process group
// (so stop can kill it whole) and killed when the test process dies. GITEA_* variables
// of the test environment are not passed on, keeping the instance hermetic.
func giteaCommand(bin, dir string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, append([]string{"--config", filepath.Join(dir, "app.ini"), "--work-path", dir}, args...)...)
	cmd.Dir = dir
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "GITEA_") })
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	return cmd
}

// giteaLogs returns the tail of an instance's console output and log file, to explain a
// failed start.
func giteaLogs(dir string) string {
	console, _ := os.ReadFile(filepath.Join(dir, "web.log"))
	log, _ := os.ReadFile(filepath.Join(dir, "log", "gitea.log"))
	return giteaTail(append(console, log...))
}

// giteaTail returns the last 4 KiB of out, enough to show why a command failed.
func giteaTail(out []byte) string {
	const max = 4 << 10
	if len(out) > max {
		out = out[len(out)-max:]
	}
	return string(bytes.TrimSpace(out))
}

// giteaFromEnv uses the instance at url instead of starting one: it checks that each
// GITEA_TEST_TOKEN_<LOGIN> belongs to its login, then provisions the fixtures in a fresh
// repository alice/demo-<random>, which stop deletes.
func giteaFromEnv(url string) (*giteaInstance, error) {
	g := &giteaInstance{
		URL:       strings.TrimRight(url, "/"),
		Tokens:    map[string]string{},
		Passwords: map[string]string{},
		Repo:      "alice/demo-" + strings.ToLower(rand.Text()[:10]),
	}
	for _, login := range giteaLogins {
		env := "GITEA_TEST_TOKEN_" + strings.ToUpper(login)
		if g.Tokens[login] = os.Getenv(env); g.Tokens[login] == "" {
			return nil, fmt.Errorf("GITEA_TEST_URL is set but %s is empty", env)
		}
		var me struct{ Login string }
		s := &giteaSetup{g: g}
		if s.call(login, "GET", "/user", nil, http.StatusOK, &me); s.err != nil {
			return nil, fmt.Errorf("%s: %w", env, s.err)
		}
		if me.Login != login {
			return nil, fmt.Errorf("%s: token of user %q, want %q", env, me.Login, login)
		}
	}
	g.stop = giteaOnStop(func() { g.api("alice", "DELETE", "/repos/"+g.Repo, nil) })
	if err := g.provision(); err != nil {
		g.stop()
		return nil, err
	}
	return g, nil
}

// api sends one request to Gitea's REST API as login, or anonymously when login is "".
// path is below /api/v1 and is sent as written, so escapes such as rel%2F1.0 survive.
// A non-nil body is sent as JSON.
func (g *giteaInstance) api(login, method, path string, body any) (status int, header http.Header, data []byte, err error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, nil, fmt.Errorf("%s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, g.URL+"/api/v1"+path, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	if login != "" {
		token, ok := g.Tokens[login]
		if !ok {
			return 0, nil, nil, fmt.Errorf("%s %s: no token for login %q", method, path, login)
		}
		req.Header.Set("Authorization", "token "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := giteaHTTP.Do(req)
	if err != nil {
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	data, err = io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, data, err
}

// giteaSetup sends fixture requests until the first failure, which it keeps in err, so
// that provisioning reads as a list of steps.
type giteaSetup struct {
	g   *giteaInstance
	err error
}

// call sends a request as login unless an earlier one failed, requires status want, and
// decodes the JSON answer into out unless out is nil.
func (s *giteaSetup) call(login, method, path string, body any, want int, out any) {
	if s.err != nil {
		return
	}
	status, _, data, err := s.g.api(login, method, path, body)
	switch {
	case err != nil:
		s.err = err
	case status != want:
		s.err = fmt.Errorf("%s %s as %s: status %d, want %d: %s", method, path, login, status, want, giteaTail(data))
	case out != nil:
		if err := json.Unmarshal(data, out); err != nil {
			s.err = fmt.Errorf("%s %s as %s: %w", method, path, login, err)
		}
	}
}

// commit creates files in one commit by login on branch, or on newBranch started from
// branch when newBranch is not empty, and returns the commit SHA.
func (s *giteaSetup) commit(login, branch, newBranch, message string, files map[string][]byte) string {
	var ops []map[string]string
	for _, path := range slices.Sorted(maps.Keys(files)) {
		ops = append(ops, map[string]string{"operation": "create", "path": path, "content": base64.StdEncoding.EncodeToString(files[path])})
	}
	var res struct{ Commit struct{ SHA string } }
	s.call(login, "POST", "/repos/"+s.g.Repo+"/contents",
		map[string]any{"branch": branch, "new_branch": newBranch, "message": message, "files": ops}, http.StatusCreated, &res)
	return res.Commit.SHA
}

// pull opens a pull request by login from head into main and returns its number.
func (s *giteaSetup) pull(login, head, title string) int {
	var pr struct{ Number int }
	s.call(login, "POST", "/repos/"+s.g.Repo+"/pulls", map[string]string{"head": head, "base": "main", "title": title}, http.StatusCreated, &pr)
	return pr.Number
}

// openedPR is what the end-to-end tests read of a pull request they open.
type openedPR struct {
	Number int
	Head   struct{ SHA string }
}

// topicPR commits files (each holding its own path) by login on branch, a new
// branch of repo started from main, and opens the pull request title from it
// into main.
func (s *giteaSetup) topicPR(login, repo, branch, title string, files ...string) openedPR {
	var ops []map[string]string
	for _, f := range files {
		ops = append(ops, fileOps(f)...)
	}
	var pr openedPR
	s.call(login, "POST", "/repos/"+repo+"/contents", map[string]any{"branch": "main", "new_branch": branch, "message": title, "files": ops}, http.StatusCreated, nil)
	s.call(login, "POST", "/repos/"+repo+"/pulls", map[string]string{"head": branch, "base": "main", "title": title}, http.StatusCreated, &pr)
	return pr
}

// merge merges pull request number as login, retrying for up to 30 s while Gitea answers
// 405 because it is still checking whether the pull request can be merged.
func (s *giteaSetup) merge(login string, number int) {
	path := fmt.Sprintf("/repos/%s/pulls/%d/merge", s.g.Repo, number)
	for deadline := time.Now().Add(30 * time.Second); s.err == nil; {
		status, _, data, err := s.g.api(login, "POST", path, map[string]string{"Do": "merge"})
		switch {
		case err != nil:
			s.err = err
		case status == http.StatusOK:
			return
		case status != http.StatusMethodNotAllowed || time.Now().After(deadline):
			s.err = fmt.Errorf("POST %s as %s: status %d, want 200: %s", path, login, status, giteaTail(data))
		default:
			time.Sleep(200 * time.Millisecond)
		}
	}
}

// provision creates the fixtures through the REST API and records their numbers and
// SHAs in g.
func (g *giteaInstance) provision() error {
	s := &giteaSetup{g: g}
	repo := "/repos/" + g.Repo
	_, name, _ := strings.Cut(g.Repo, "/")
	s.call("alice", "POST", "/user/repos", map[string]any{"name": name, "auto_init": true, "default_branch": "main"}, http.StatusCreated, nil)
	for _, login := range giteaLogins[1:] {
		s.call("alice", "PUT", repo+"/collaborators/"+login, map[string]string{"permission": "write"}, http.StatusNoContent, nil)
	}
	s.commit("alice", "main", "", "Add guide and logo", map[string][]byte{fixtureGuidePath: []byte(fixtureGuide), fixtureBinPath: fixtureBin})
	g.FeatureSHA = s.commit("alice", "main", "feature/x", "Start feature x", map[string][]byte{"feature/x.md": []byte("# Feature x\n")})
	g.PRHeadSHA = s.commit("bob", "main", "bob/change", "Change by bob", map[string][]byte{"bob.md": []byte("# Bob's change\n")})
	g.PR = s.pull("bob", "bob/change", "Change by bob")

	g.LandedSHA = s.commit("alice", "main", "landed", "Land early", map[string][]byte{"landed.md": []byte("# Landed\n")})
	g.MergedPR = s.pull("alice", "landed", "Land early")
	s.merge("alice", g.MergedPR)
	s.call("alice", "POST", repo+"/branches", map[string]string{"new_branch_name": "landed-again", "old_ref_name": g.LandedSHA}, http.StatusCreated, nil)
	g.LandedPR = s.pull("bob", "landed-again", "Already landed")

	for i, login := range giteaLogins[1:] {
		var issue struct{ Number int }
		s.call(login, "POST", repo+"/issues", map[string]string{"title": "Issue by " + login, "body": "Something to discuss."}, http.StatusCreated, &issue)
		var comment struct{ ID int64 }
		s.call("alice", "POST", fmt.Sprintf("%s/issues/%d/comments", repo, issue.Number), map[string]string{"body": "Noted."}, http.StatusCreated, &comment)
		g.Issues[i], g.Comments[i] = issue.Number, comment.ID
	}
	g.Releases = map[string]int64{}
	for _, tag := range []string{"rel/1.0", "v1.0"} {
		var rel struct{ ID int64 }
		s.call("alice", "POST", repo+"/releases", map[string]string{"tag_name": tag, "target_commitish": "main", "name": "Release " + tag}, http.StatusCreated, &rel)
		g.Releases[tag] = rel.ID
	}
	var head struct{ Commit struct{ ID string } }
	s.call("alice", "GET", repo+"/branches/main", nil, http.StatusOK, &head)
	g.MainSHA = head.Commit.ID
	if s.err != nil {
		return fmt.Errorf("fixtures in %s: %w", g.Repo, s.err)
	}
	return nil
}

// giteaStops holds the stop function of every instance not yet stopped, so that an
// interrupt can stop them all.
var giteaStops struct {
	sync.Mutex
	next int
	fns  map[int]func()
}

// giteaOnStop registers cleanup with stopGiteas and returns a stop function that runs it
// once and unregisters it.
func giteaOnStop(cleanup func()) func() {
	giteaStops.Lock()
	defer giteaStops.Unlock()
	if giteaStops.fns == nil {
		giteaStops.fns = map[int]func(){}
	}
	id := giteaStops.next
	giteaStops.next++
	stop := sync.OnceFunc(func() {
		giteaStops.Lock()
		delete(giteaStops.fns, id)
		giteaStops.Unlock()
		cleanup()
	})
	giteaStops.fns[id] = stop
	return stop
}

// stopGiteas stops every instance still registered.
func stopGiteas() {
	giteaStops.Lock()
	fns := slices.Collect(maps.Values(giteaStops.fns))
	giteaStops.Unlock()
	for _, stop := range fns {
		stop()
	}
}

// giteaShared is the instance needGitea provides, started at most once per test process.
var giteaShared struct {
	once sync.Once
	g    *giteaInstance
	err  error
}

// needGitea returns the shared Gitea for an end-to-end test, starting it on first use:
// the instance at GITEA_TEST_URL when set, else a throwaway one. It skips the test under
// -short and fails it, saying why, when no Gitea can be had.
func needGitea(t *testing.T) *giteaInstance {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: needs a real Gitea, skipped under -short")
	}
	giteaShared.once.Do(func() {
		start := time.Now()
		if url := os.Getenv("GITEA_TEST_URL"); url != "" {
			giteaShared.g, giteaShared.err = giteaFromEnv(url)
		} else {
			giteaShared.g, giteaShared.err = startGitea()
		}
		if giteaShared.err == nil {
			t.Logf("gitea %s ready with fixtures in %s after %v", giteaShared.g.URL, giteaShared.g.Repo, time.Since(start).Round(time.Millisecond))
		}
	})
	if giteaShared.err != nil {
		t.Fatalf("end-to-end: no Gitea: %v", giteaShared.err)
	}
	return giteaShared.g
}

// giteaInterrupted is closed when the test process receives SIGINT or SIGTERM.
var giteaInterrupted = make(chan struct{})

// giteaTrialWaiting is true while TestTrial waits for the interrupt that ends it.
var giteaTrialWaiting atomic.Bool

// TestMain runs the tests, then stops any Gitea they started. On SIGINT or SIGTERM it
// stops them at once and exits, unless TestTrial is waiting for exactly that signal.
// Started as serverName (serverBinary's link), it is the server: main with
// the command line's own flags.
func TestMain(m *testing.M) {
	if filepath.Base(os.Args[0]) == serverName {
		os.Setenv("GOCOVERDIR", filepath.Dir(os.Args[0])) // a test binary built with -cover writes its counters there, not a warning
		flag.CommandLine = flag.NewFlagSet(os.Args[0], flag.ExitOnError)
		main()
		os.Exit(0)
	}
	flag.Parse()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() {
		s := <-sig
		signal.Stop(sig) // a second signal kills at once; Pdeathsig still takes Gitea along
		close(giteaInterrupted)
		if giteaTrialWaiting.Load() {
			return
		}
		stopGiteas()
		fmt.Fprintf(os.Stderr, "gitea: stopped on %v\n", s)
		os.Exit(1)
	}()
	m.Run()
	stopGiteas()
	removeServerBinary()
}

// ownGitea starts a Gitea of the test's own, for a test that changes what
// others rely on (stops it, renames a user), and stops it when the test ends;
// it skips the test under -short.
func ownGitea(t *testing.T) *giteaInstance {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: needs a real Gitea, skipped under -short")
	}
	g, err := startGitea()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.stop)
	return g
}

// TestTrial starts a throwaway Gitea with the fixtures for trying giteamcp by hand, prints
// the environment and an MCP client configuration for it, and waits for Ctrl-C (or until
// shortly before the test deadline):
//
//	go test -run '^TestTrial$' -trial -timeout 0
func TestTrial(t *testing.T) {
	if !*giteaTrial {
		t.Skip("manual: go test -run '^TestTrial$' -trial -timeout 0")
	}
	g, err := startGitea()
	if err != nil {
		t.Fatalf("trial: %v", err)
	}
	defer g.stop()
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatalf("trial: %v", err)
	}
	server := map[string]any{"command": "go", "args": []string{"run", "."}, "cwd": cwd,
		"env": map[string]string{"GITEA_URL": g.URL, "GITEA_TOKEN": g.Tokens["alice"]}}
	config, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{"gitea": server}}, "", "  ")
	if err != nil {
		t.Fatalf("trial: %v", err)
	}
	fmt.Printf("# Throwaway Gitea %s at %s, fixtures in %s. Web logins: alice / %s, bob / %s, carol / %s\n",
		giteaVersion, g.URL, g.Repo, g.Passwords["alice"], g.Passwords["bob"], g.Passwords["carol"])
	fmt.Printf("GITEA_URL=%s\nGITEA_TOKEN=%s\nGITEA_TOKEN_BOB=%s\nGITEA_TOKEN_CAROL=%s\n",
		g.URL, g.Tokens["alice"], g.Tokens["bob"], g.Tokens["carol"])
	fmt.Printf("# MCP client configuration:\n%s\n", config)
	var end <-chan time.Time
	if deadline, ok := t.Deadline(); ok {
		end = time.After(time.Until(deadline) - 30*time.Second)
		fmt.Printf("# Stops at %s (test deadline; -timeout 0 removes it) or on Ctrl-C.\n", deadline.Add(-30*time.Second).Format(time.TimeOnly))
	} else {
		fmt.Println("# Ctrl-C stops Gitea and removes its files.")
	}
	giteaTrialWaiting.Store(true)
	select {
	case <-giteaInterrupted:
	case <-end:
	}
	fmt.Println("# Stopping Gitea.")
}

// TestGiteaFixtures checks through the API that the harness provisioned every fixture.
func TestGiteaFixtures(t *testing.T) {
	g := needGitea(t)
	repo := "/repos/" + g.Repo
	tests := []struct {
		login string
		path  string
		want  map[string]string // dotted JSON field -> value as text
	}{
		{"bob", "/user", map[string]string{"login": "bob"}},
		{"carol", "/user", map[string]string{"login": "carol"}},
		{"alice", repo, map[string]string{"default_branch": "main", "owner.login": "alice"}},
		{"alice", repo + "/collaborators/bob/permission", map[string]string{"permission": "write"}},
		{"alice", repo + "/collaborators/carol/permission", map[string]string{"permission": "write"}},
		{"alice", repo + "/git/commits/" + g.MainSHA, map[string]string{"sha": g.MainSHA}}, // main itself moves: other tests merge into it
		{"alice", repo + "/branches/feature/x", map[string]string{"name": "feature/x", "commit.id": g.FeatureSHA}},
		{"alice", repo + "/branches/feature%2Fx", map[string]string{"name": "feature/x", "commit.id": g.FeatureSHA}},
		{"alice", repo + "/contents/" + fixtureGuidePath, map[string]string{"path": fixtureGuidePath, "content": base64.StdEncoding.EncodeToString([]byte(fixtureGuide))}},
		{"alice", repo + "/contents/" + fixtureBinPath, map[string]string{"path": fixtureBinPath, "content": base64.StdEncoding.EncodeToString(fixtureBin)}},
		{"carol", fmt.Sprintf("%s/pulls/%d", repo, g.PR), map[string]string{"user.login": "bob", "state": "open", "head.ref": "bob/change", "head.sha": g.PRHeadSHA, "base.ref": "main"}},
		{"alice", fmt.Sprintf("%s/pulls/%d", repo, g.MergedPR), map[string]string{"merged": "true", "head.sha": g.LandedSHA}},
		{"alice", fmt.Sprintf("%s/pulls/%d", repo, g.LandedPR), map[string]string{"user.login": "bob", "merged": "false", "head.ref": "landed-again", "head.sha": g.LandedSHA}}, // the reconciler test closes it
		{"alice", repo + "/compare/main...landed-again", map[string]string{"total_commits": "0"}},
		{"alice", fmt.Sprintf("%s/issues/%d", repo, g.Issues[0]), map[string]string{"user.login": "bob", "comments": "1"}},
		{"alice", fmt.Sprintf("%s/issues/%d", repo, g.Issues[1]), map[string]string{"user.login": "carol", "comments": "1"}},
		{"alice", fmt.Sprintf("%s/issues/comments/%d", repo, g.Comments[0]), map[string]string{"user.login": "alice", "body": "Noted."}},
		{"alice", repo + "/releases/tags/rel%2F1.0", map[string]string{"id": fmt.Sprint(g.Releases["rel/1.0"]), "target_commitish": "main"}},
		{"alice", repo + "/releases/tags/v1.0", map[string]string{"id": fmt.Sprint(g.Releases["v1.0"]), "target_commitish": "main"}},
	}
	for _, tt := range tests {
		status, _, data, err := g.api(tt.login, "GET", tt.path, nil)
		if err != nil || status != http.StatusOK {
			t.Errorf("GET %s as %s: status %d, err %v, want 200: %.200s", tt.path, tt.login, status, err, data)
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Errorf("GET %s: %v", tt.path, err)
			continue
		}
		got := map[string]string{}
		for field := range tt.want {
			got[field] = giteaField(v, field)
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("GET %s as %s mismatch (-want +got):\n%s", tt.path, tt.login, diff)
		}
	}
}

// giteaField returns the value at a dotted path such as "head.sha" in decoded JSON, as text.
func giteaField(v any, path string) string {
	for key := range strings.SplitSeq(path, ".") {
		m, _ := v.(map[string]any)
		v = m[key]
	}
	return fmt.Sprint(v)
}
