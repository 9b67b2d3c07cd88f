package main

import (
	"context"
	"html"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"
)

// chromium is the headless browser of the browser tests: Debian's package,
// which .ci/run installs when it is missing.
const chromium = "/usr/bin/chromium"

// browserPage is a browser-based MCP client: it initializes a session at
// the MCP endpoint @MCP@ with the bearer token @TOKEN@, calls gitea_whoami, and
// writes "RESULT <login>" or "ERROR <what failed>" into #out.
const browserPage = `<!doctype html><html><body><pre id="out">PENDING</pre><script>
const out = document.getElementById("out");
(async () => {
  const h = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
    "Authorization": "Bearer @TOKEN@", "MCP-Protocol-Version": "2025-11-25"};
  const post = async (body) => fetch("@MCP@", {method: "POST", headers: h, body: JSON.stringify(body)});
  try {
    let r = await post({jsonrpc: "2.0", id: 1, method: "initialize",
      params: {protocolVersion: "2025-11-25", capabilities: {}, clientInfo: {name: "browser", version: "1"}}});
    const init = await r.json();
    h["Mcp-Session-Id"] = r.headers.get("Mcp-Session-Id");
    if (!h["Mcp-Session-Id"] || init.result.serverInfo.name !== "giteamcp") throw new Error("initialize: " + JSON.stringify(init));
    await post({jsonrpc: "2.0", method: "notifications/initialized"});
    r = await post({jsonrpc: "2.0", id: 2, method: "tools/call", params: {name: "gitea_whoami", arguments: {}}});
    const call = await r.json();
    const env = JSON.parse(call.result.content[0].text); // the result envelope
    out.textContent = "RESULT " + env.data.login;
  } catch (e) {
    out.textContent = "ERROR " + e;
  }
})();
</script></body></html>`

// runChromium loads url in a fresh headless Chromium, lets its scripts run
// for up to 30 s of virtual time, and returns the text of #out.
func runChromium(t *testing.T, url string) string {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Fatalf("%s: %v; install Debian's chromium package (apt-get install -y chromium), as .ci/run does", chromium, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+t.TempDir(),
		"--virtual-time-budget=30000", "--dump-dom", url)
	dom, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %s: %v", url, err)
	}
	m := regexp.MustCompile(`<pre id="out">([^<]*)</pre>`).FindSubmatch(dom)
	if m == nil {
		t.Fatalf("chromium %s: no #out in the page:\n%s", url, dom)
	}
	return html.UnescapeString(string(m[1]))
}

// TestE2EBrowserCORS runs a browser-based client in headless Chromium
// against the server and the real Gitea: the page at an origin listed in
// MCP_ALLOWED_ORIGINS initializes a session and calls a tool with a bearer
// token (preflights, reading Mcp-Session-Id); the same page at another
// origin, a loopback one the server admits without CORS, is refused by the
// browser.
func TestE2EBrowserCORS(t *testing.T) {
	g := needGitea(t)
	const token = "browser-Token_0123456789"
	pages := httptest.NewServer(nil)
	defer pages.Close()
	allowed := pages.URL // http://127.0.0.1:port
	other := strings.Replace(pages.URL, "127.0.0.1", "localhost", 1)
	ts, _ := newHTTPTest(t, map[string]string{"GITEA_URL": g.URL, "GITEA_TOKEN": g.Tokens["alice"], "GITEA_MCP_PROFILE": "gitea-owner",
		"MCP_BEARER_TOKEN": token, "MCP_ALLOWED_ORIGINS": allowed})
	page := strings.NewReplacer("@MCP@", ts.URL+"/mcp", "@TOKEN@", token).Replace(browserPage)
	pages.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte(page))
	})
	for _, tt := range []struct{ origin, want string }{
		{allowed, "RESULT alice"},
		{other, "ERROR TypeError: Failed to fetch"},
	} {
		if got := runChromium(t, tt.origin+"/"); got != tt.want {
			t.Errorf("the page at %s: got %q, want %q", tt.origin, got, tt.want)
		}
	}
}
