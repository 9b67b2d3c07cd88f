package main

// Tests of file content through the result pipeline (issue 12): base64 file
// fields delivered as text, invisible characters marked in file text, the one
// media-type rule and its bounds.

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFileFields checks each row of fileFields: its definition in the OpenAPI
// document has the member; its example is delivered as its want, decoded and
// reported. It also checks that every response definition whose member the
// document describes as base64 has a row.
func TestFileFields(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("gitea-openapi-1.26.0.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Definitions map[string]struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		} `json:"definitions"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	rows := map[string]bool{}
	for _, f := range fileFields {
		rows[f.definition+"."+f.member] = true
		if _, ok := doc.Definitions[f.definition].Properties[f.member]; !ok {
			t.Errorf("%s has no member %s in the OpenAPI document", f.definition, f.member)
		}
		sc := &scrubber{red: newRedactor(), maxBinary: 100}
		out, _, _, ok := sc.json([]byte(f.example), 100, 1000)
		if !ok || string(out) != f.want {
			t.Errorf("%s.%s: got %s, want %s", f.definition, f.member, out, f.want)
		}
		want := &fileReport{Decoded: []string{f.definition + "." + f.member}, Text: 1}
		if diff := cmp.Diff(want, sc.files); diff != "" {
			t.Errorf("%s.%s: report mismatch (-want +got):\n%s", f.definition, f.member, diff)
		}
	}
	// Base64 members of request bodies (…Options) are not answers; ContentsResponse
	// says "populated when type is file" without the word base64.
	for name, def := range doc.Definitions {
		for member, p := range def.Properties {
			if strings.Contains(strings.ToLower(p.Description), "base64") && !strings.HasSuffix(name, "Options") && !strings.HasSuffix(name, "Option") &&
				name != "ChangeFileOperation" && member != "encoding" && !rows[name+"."+member] {
				t.Errorf("%s.%s is described as base64 but has no row in fileFields", name, member)
			}
		}
	}
}

// TestFileContent shows base64 file content through the pipeline: text is
// decoded and scrubbed in place, invisible characters in it are marked,
// binary stays base64 (redacted in its bytes) within MAX_BINARY_BYTES.
func TestFileContent(t *testing.T) {
	t.Parallel()
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	png := "\x89PNG\r\n\x1a\n\x00\x00\xff"
	for _, tc := range []struct {
		name, body, want string
		files            *fileReport
		marked           map[string]int
		rules            []string
	}{
		{name: "contents with secrets", body: `{"type":"file","encoding":"base64","content":"` + b64("tok=s3cret\nkey ghp_0123456789abcdefghijABCDEFGHIJklmnop\n") + `"}`,
			want:  `{"type":"file","encoding":"text","content":"tok=[REDACTED]\nkey ghp_[MASKED]\n"}`,
			files: &fileReport{Decoded: []string{"ContentsResponse.content"}, Text: 1}, rules: []string{"github"}},
		{name: "blob, encoding after content", body: `{"content":"` + b64("a\u202eb") + `","encoding":"base64","sha":"x"}`,
			want:  `{"content":"a<U+202E>b","encoding":"text","sha":"x"}`,
			files: &fileReport{Decoded: []string{"GitBlobResponse.content"}, Text: 1}, marked: map[string]int{"U+202E bidi control": 1}},
		{name: "bulk contents", body: `[{"type":"file","encoding":"base64","content":"` + b64("one") + `"},{"type":"file","encoding":"base64","content":"` + b64(png) + `"},{"type":"dir","encoding":null,"content":null}]`,
			want:  `[{"type":"file","encoding":"text","content":"one"},{"type":"file","encoding":"base64","content":"` + b64(png) + `"},{"type":"dir","encoding":null,"content":null}]`,
			files: &fileReport{Decoded: []string{"ContentsResponse.content"}, Text: 1, Binary: 1}},
		{name: "binary holding a secret", body: `{"content":"` + b64(png+"s3cret") + `","encoding":"base64"}`,
			want: `{"content":"` + b64(png+"[REDACTED]") + `","encoding":"base64"}`, files: &fileReport{Binary: 1}},
		{name: "binary over the bound", body: `{"content":"` + b64(strings.Repeat(png, 20)) + `","encoding":"base64"}`,
			want: `{"content":null,"encoding":"base64"}`, files: &fileReport{Omitted: 1}},
		{name: "wiki page", body: `{"title":"T\u200b","content_base64":"` + b64("x\u200by") + `","sidebar":""}`,
			want:  `{"title":"T","content":"x<U+200B>y","encoding":"text","sidebar":""}`,
			files: &fileReport{Decoded: []string{"WikiPage.content_base64"}, Text: 1}, marked: map[string]int{"U+200B zero-width character": 1}},
		{name: "wiki page's sidebar and footer", body: `{"content_base64":"","commit_count":1,"sidebar":"` + b64("a\u202eb") + `","footer":"` + b64("tok=s3cret ghp_0123456789abcdefghijABCDEFGHIJklmnop") + `"}`,
			want:   `{"content":"","encoding":"text","commit_count":1,"sidebar":"a<U+202E>b","footer":"tok=[REDACTED] ghp_[MASKED]"}`,
			files:  &fileReport{Decoded: []string{"WikiPage.content_base64", "WikiPage.sidebar", "WikiPage.footer"}, Text: 3},
			marked: map[string]int{"U+202E bidi control": 1}, rules: []string{"github"}},
		{name: "a secret split by a hidden character is redacted, not marked", body: `{"type":"file","encoding":"base64","content":"` + b64("s3c\u200bret \u202e") + `"}`,
			want: `{"type":"file","encoding":"text","content":"[REDACTED] "}`, files: &fileReport{Decoded: []string{"ContentsResponse.content"}, Text: 1}},
		{name: "not a file object", body: `{"content":"aGkK","encoding":"utf-8"}`, want: `{"content":"aGkK","encoding":"utf-8"}`},
		{name: "not base64", body: `{"type":"file","encoding":"base64","content":"%%%"}`, want: `{"type":"file","encoding":"base64","content":"%%%"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &scrubber{red: newRedactor("s3cret"), mask: true, maxBinary: 100}
			data, _, err := sc.body(&sent{class: jsonBody, body: []byte(tc.body)}, 100, 10000)
			if err != nil {
				t.Fatal(err)
			}
			type result struct {
				Data   string
				Files  *fileReport
				Marked map[string]int
				Rules  []string
			}
			want := result{tc.want, tc.files, tc.marked, tc.rules}
			got := result{string(data.(json.RawMessage)), sc.files, sc.marked, sc.rules}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestFileTextCut shows a file text too long for the bounds cut inside its
// object, which stays JSON, and the cut reported.
func TestFileTextCut(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("line\n", 10000)
	body := `{"type":"file","encoding":"base64","content":"` + base64.StdEncoding.EncodeToString([]byte(long)) + `","sha":"x"}`
	sc := &scrubber{red: newRedactor(), maxBinary: 100}
	data, trunc, err := sc.body(&sent{class: jsonBody, body: []byte(body)}, 100, 10000)
	raw, ok := data.(json.RawMessage)
	var v struct{ Content, Encoding, SHA string }
	if err != nil || !ok || json.Unmarshal(raw, &v) != nil || len(raw) > 10000 || v.Encoding != "text" || v.SHA != "x" ||
		!strings.HasPrefix(long, v.Content) || len(v.Content) < 3000 || trunc == nil || trunc.FileText != 1 {
		t.Errorf("got %d bytes, truncation %+v, error %v", len(raw), trunc, err)
	}
}

// TestClassifyMedia is the media-type rule's table.
func TestClassifyMedia(t *testing.T) {
	t.Parallel()
	for ct, want := range map[string]mediaClass{
		"application/json": jsonBody, "application/json; charset=utf-8": jsonBody, "application/problem+json": jsonBody,
		"text/plain; charset=utf-8": textBody, "text/html": textBody,
		"": binaryBody, "image/png": binaryBody, "application/octet-stream": binaryBody, "garbage;;=": binaryBody, "application/jsonx": binaryBody,
	} {
		if got := classifyMedia(ct); got != want {
			t.Errorf("classifyMedia(%q) = %d, want %d", ct, got, want)
		}
	}
}

// TestMediaBounds is fault injection: answers with and without a
// Content-Type, binary and text, smaller and larger than each bound. Every
// result fits MAX_TOOL_RESPONSE_CHARS, binary is base64 of at most
// MAX_BINARY_BYTES, and a body too large for its class is refused.
func TestMediaBounds(t *testing.T) {
	t.Parallel()
	const maxChars, maxBinary = 20000, 16000
	png := append([]byte("\x89PNG\r\n\x1a\n"), bytes.Repeat([]byte{0, 0xff, 0xfe}, 1<<20/3)...)
	text := []byte(strings.Repeat("line of text ghp_0123456789abcdefghijABCDEFGHIJklmnop\n", 1<<20/54))
	answers := map[string]struct {
		ct   string // "-" for none
		body []byte
	}{
		"bin-none-small": {"-", png[:3000]}, "bin-none-1m": {"-", png[:1<<20]},
		"bin-png-small": {"image/png", png[:3000]}, "bin-png-1m": {"image/png", png[:1<<20]},
		"bin-png-over-chars": {"image/png", png[:maxBinary]}, // base64 does not fit maxChars
		"bin-text-1m":        {"text/plain", png[:1<<20]},    // declared text, not UTF-8
		"text-none-small":    {"-", text[:54*50]}, "text-none-1m": {"-", text[:1<<20]},
		"text-plain-1m": {"text/plain; charset=utf-8", text[:1<<20]},
		"json-1m":       {"application/json", []byte(`{"content":"` + strings.Repeat("x", 1<<20) + `"}`)},
	}
	srv := newScriptedGitea(t).user("alice")
	for name, a := range answers {
		srv.answer("GET", "/repos/fault/"+name+"/raw/f", fakeWith(http.StatusOK, string(a.body), "Content-Type", strings.TrimPrefix(a.ct, "-")))
	}
	s := testServer(t, map[string]string{"GITEA_URL": srv.URL, "GITEA_TOKEN": fakeToken,
		"MAX_TOOL_RESPONSE_CHARS": "20000", "MAX_BINARY_BYTES": "16000"})
	op := s.cat.byID["repoGetRawFile"]
	b64run := regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`)
	for name, want := range map[string]string{
		"bin-none-small": "base64", "bin-none-1m": "payload_too_large", "bin-png-small": "base64", "bin-png-1m": "payload_too_large",
		"bin-png-over-chars": "payload_too_large", "bin-text-1m": "payload_too_large", "text-none-small": "text",
		"text-none-1m": "payload_too_large", "text-plain-1m": "text, cut", "json-1m": "text, cut", // JSON cut is a prefix of its text
	} {
		t.Run(name, func(t *testing.T) {
			env := s.exec.run(t.Context(), &request{tool: "repoGetRawFile", op: op, args: map[string]any{"owner": "fault", "repo": name, "filepath": "f"}})
			text := env.text()
			if len(text) > maxChars {
				t.Errorf("%d characters, over MAX_TOOL_RESPONSE_CHARS", len(text))
			}
			got := "text"
			switch d := env.Data.(type) {
			case map[string]any:
				got = "base64"
				if n := base64.StdEncoding.DecodedLen(len(d["content_base64"].(string))); n > maxBinary {
					t.Errorf("%d bytes of binary, over MAX_BINARY_BYTES", n)
				}
			case json.RawMessage:
				got = "json"
			}
			if env.Truncated != nil && env.Truncated.Chars {
				got += ", cut"
			}
			if env.Error != nil {
				got = env.Error.Kind
			}
			if got != want {
				t.Errorf("got %s, want %s: %.300s", got, want, text)
			}
			if strings.Contains(text, "ghp_0123") {
				t.Errorf("a planted key came through: %.300s", text)
			}
			for _, run := range b64run.FindAllString(text, -1) {
				if dec, err := base64.StdEncoding.DecodeString(run); err == nil && bytes.Contains(dec, []byte("ghp_0123")) {
					t.Errorf("a planted key came through in base64")
				}
			}
		})
	}
}

// TestE2EFileContent reads, against the real Gitea, a committed file holding
// the caller's token, another profile's token and a GitHub key through
// repoGetContents, GetBlob, the bulk file-contents query and the raw file
// route: its text is readable and no secret comes through in any form, also
// not inside a base64 run. A PNG stays base64 and bounded; a file with a
// right-to-left override reads with a visible marker; an issue body with each
// invisible carrier of the table reads without them, counted.
func TestE2EFileContent(t *testing.T) {
	g := needGitea(t)
	owner, repo := ownerRepo(g)
	const ghp = "ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd"
	png := append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 0xff, 0x80}, 300)...)
	secrets := `{"servers":{"gitea":{"env":{"GITEA_TOKEN":"` + g.Tokens["alice"] + `","OTHER":"` + g.Tokens["bob"] + `","GH":"` + ghp + `"}}}}` + "\n"
	files := map[string][]byte{".vscode/mcp.json": []byte(secrets), "logo.png": png,
		"trojan.go": []byte("if accessLevel != \"user\u202e \u2066// Check if admin\u2069 \u2066\" {\n")}
	branch := "e2e/files-" + strings.ToLower(rand.Text()[:8])
	var ops []map[string]string
	for _, p := range []string{".vscode/mcp.json", "logo.png", "trojan.go"} {
		ops = append(ops, map[string]string{"operation": "create", "path": p, "content": base64.StdEncoding.EncodeToString(files[p])})
	}
	if status, _, data, err := g.api("alice", "POST", "/repos/"+g.Repo+"/contents", map[string]any{"branch": "main", "new_branch": branch, "message": "files", "files": ops}); err != nil || status != http.StatusCreated {
		t.Fatalf("commit: %d %v %s", status, err, data)
	}
	config := filepath.Join(t.TempDir(), "profiles.json")
	os.WriteFile(config, []byte(`{"profiles":[{"profile_name":"other","token_source_name":"GITEA_TOKEN_BOB","allowed_operations":["gitea.read"],"forbidden_operations":[],"audit_label":"o"}]}`), 0o600)
	c := e2eClient(t, g, "alice", "GITEA_MCP_CONFIG="+config, "GITEA_TOKEN_BOB="+g.Tokens["bob"], "MAX_BINARY_BYTES=4096")
	call := func(op string, args map[string]any) map[string]any {
		t.Helper()
		args["owner"], args["repo"] = owner, repo
		res, isErr := c.callTool("gitea_call_operation", map[string]any{"operation": op, "arguments": args})
		if isErr {
			t.Fatalf("%s: %v", op, res)
		}
		return res
	}
	contents := call("repoGetContents", map[string]any{"filepath": ".vscode/mcp.json", "ref": branch})
	blob := call("GetBlob", map[string]any{"sha": get(contents, "data.sha")})
	bulk := call("repoGetFileContents", map[string]any{"ref": branch, "body": `{"files":[".vscode/mcp.json","logo.png"]}`})
	raw := call("repoGetRawFile", map[string]any{"filepath": ".vscode/mcp.json", "ref": branch})
	for name, text := range map[string]any{"repoGetContents": get(contents, "data.content"), "GetBlob": get(blob, "data.content"),
		"repoGetFileContents": get(first(bulk["data"]), "content"), "repoGetRawFile": raw["data"]} {
		s, _ := text.(string)
		if !strings.Contains(s, `"servers"`) || !strings.Contains(s, "ghp_[MASKED]") || strings.Count(s, "[REDACTED]")+strings.Count(s, "[MASKED]") != 3 {
			t.Errorf("%s: file text %q", name, s)
		}
	}
	if get(contents, "data.encoding") != "text" || !strings.Contains(str(get(contents, "file_content.decoded_to_text")), "ContentsResponse.content") ||
		!strings.Contains(str(get(blob, "file_content.decoded_to_text")), "GitBlobResponse.content") {
		t.Errorf("the envelopes do not say what was decoded: %v %v", contents["file_content"], blob["file_content"])
	}
	img := call("repoGetContents", map[string]any{"filepath": "logo.png", "ref": branch})
	if dec, err := base64.StdEncoding.DecodeString(str(get(img, "data.content"))); err != nil || !bytes.Equal(dec, png) || get(img, "data.encoding") != "base64" {
		t.Errorf("PNG through repoGetContents: %v", img)
	}
	rawImg := call("repoGetRawFile", map[string]any{"filepath": "logo.png", "ref": branch})
	if dec, err := base64.StdEncoding.DecodeString(str(get(rawImg, "data.content_base64"))); err != nil || !bytes.Equal(dec, png) {
		t.Errorf("PNG through the raw route: %v", rawImg)
	}
	trojan := call("repoGetContents", map[string]any{"filepath": "trojan.go", "ref": branch})
	if s := str(get(trojan, "data.content")); !strings.Contains(s, "user<U+202E> <U+2066>// Check if admin<U+2069> <U+2066>") ||
		str(get(trojan, "invisible_characters_marked.U+202E bidi control")) != "1" || str(get(trojan, "invisible_characters_marked.U+2066 bidi control")) != "2" {
		t.Errorf("Trojan Source file: %v", trojan)
	}
	// Every base64 run in everything the server printed, decoded: no secret.
	out := c.transcript.String()
	for _, run := range regexp.MustCompile(`[A-Za-z0-9+/]{16,}={0,2}`).FindAllString(out, -1) {
		dec, err := base64.StdEncoding.DecodeString(run)
		for _, secret := range []string{g.Tokens["alice"], g.Tokens["bob"], ghp} {
			if err == nil && bytes.Contains(dec, []byte(secret)) || strings.Contains(out, secret) {
				t.Fatalf("a secret came through")
			}
		}
	}

	var body strings.Builder
	planted := 0
	for _, row := range invisibleCarriers {
		for _, r := range []rune{row.lo, row.hi} {
			body.WriteString("IGNORE" + string(r) + " ")
			planted++
		}
	}
	status, _, data, err := g.api("bob", "POST", "/repos/"+g.Repo+"/issues", map[string]any{"title": "carriers\u200b", "body": body.String()})
	if err != nil || status != http.StatusCreated {
		t.Fatalf("issue: %d %v %s", status, err, data)
	}
	var issue struct {
		Number int
		Body   string
	}
	json.Unmarshal(data, &issue)
	stored := 0 // what Gitea kept of them
	for _, r := range issue.Body {
		if carrierOf(r) != nil {
			stored++
		}
	}
	if stored < planted*9/10 {
		t.Fatalf("Gitea kept %d of %d carriers", stored, planted)
	}
	res := call("issueGetIssue", map[string]any{"index": issue.Number})
	got := str(get(res, "data.body"))
	if strings.ContainsFunc(got, func(r rune) bool { return carrierOf(r) != nil }) || !strings.Contains(got, "IGNORE IGNORE") ||
		str(res["hidden_characters_removed"]) != strconv.Itoa(stored+1) {
		t.Errorf("issue body: removed %v, want %d: %q", res["hidden_characters_removed"], stored+1, got)
	}
}

// first is the first element of a decoded JSON array, or nil.
func first(v any) any {
	if a, ok := v.([]any); ok && len(a) > 0 {
		return a[0]
	}
	return nil
}

// BenchmarkFileContentPipeline runs the whole result pipeline on a 1 MB
// repoGetContents answer of a text file: validate, decode the base64, strip
// or mark hidden text, redact, mask, bound and encode the envelope; "whole"
// with bounds that keep all of it, "default" with the default bounds. MB/s
// are of the answer as Gitea sent it.
func BenchmarkFileContentPipeline(b *testing.B) {
	var file strings.Builder
	for i := 0; file.Len() < 3<<18; i++ { // 768 KiB of Go-like source: base64 makes 1 MiB
		fmt.Fprintf(&file, "\t// step %d: see https://gitea.example.com/o/r/issues/%d — “quoted” naïve 日本語\n\tif err := run(ctx, %q); err != nil {\n\t\treturn fmt.Errorf(\"step %d: %%w\", err)\n\t}\n", i, i, "token", i)
	}
	answer, _ := json.Marshal(map[string]any{"name": "main.go", "path": "cmd/main.go", "sha": strings.Repeat("ab", 20), "type": "file",
		"size": file.Len(), "encoding": "base64", "content": base64.StdEncoding.EncodeToString([]byte(file.String())),
		"url": "https://gitea.example.com/api/v1/repos/o/r/contents/cmd/main.go"})
	for _, bc := range []struct {
		name string
		env  map[string]string
	}{
		{"whole", map[string]string{"MAX_TOOL_RESPONSE_CHARS": "4000000"}},
		{"default", nil},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s := testServer(b, bc.env)
			s.exec.self.me = account{Login: "bench"}
			op := s.cat.byID["repoGetContents"]
			ex := &sent{method: "GET", path: "/repos/o/r/contents/cmd/main.go", status: 200, body: answer, class: jsonBody,
				header: http.Header{"Content-Type": {"application/json;charset=utf-8"}}}
			red := newRedactor("0123456789abcdef0123456789abcdef01234567", "hunter22")
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				if res := s.exec.result(b.Context(), op, ex, red, false); res.Error != nil || res.Files == nil || len(res.text()) < 1000 {
					b.Fatal(res.text())
				}
			}
		})
	}
}

// BenchmarkBinaryContent is the pass over a binary answer of MAX_BINARY_BYTES'
// default size, random bytes with and without zero bytes (which add the
// UTF-16 readings): masking and redaction of the bytes and of every text
// they may hold.
func BenchmarkBinaryContent(b *testing.B) {
	for _, zero := range []bool{false, true} {
		data := make([]byte, 128<<10)
		rand.Read(data)
		data[0] = 'x' // no signature at the start
		name := "zero-bytes"
		if !zero {
			data, name = bytes.ReplaceAll(data, []byte{0}, []byte{1}), "no-zero-byte"
		}
		sc := &scrubber{red: newRedactor(fakeToken), mask: true}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				sc.binary(data)
			}
		})
	}
}
