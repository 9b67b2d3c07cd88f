package main

import (
	"encoding/base64"
	"strings"
	"testing"
)

// statPatch is a mail of git format-patch (2.39) adding the file name: its
// diffstat line stat, then its diff.
func statPatch(stat, header string) string {
	return "From 718ef8dbc184a52c5fc5c41370eb876045cb6742 Mon Sep 17 00:00:00 2001\nFrom: alice <alice@example.com>\n" +
		"Date: Thu, 3 Dec 2026 18:49:43 +0000\nSubject: [PATCH] add the key\n\n---\n" + stat + "\n 1 file changed, 1 insertion(+)\n\n" +
		header + "\nnew file mode 100644\nindex 0000000..587be6b\n--- /dev/null\n+++ b/x\n@@ -0,0 +1 @@\n+x\n-- \n2.39.5\n\n"
}

// TestWholeStatNames: a name that a patch's diffstat cut at its start is
// given back whole from its diff --git line where that shows a secret, so
// that no end of a key is left (TestE2ERedteam22DiffstatCut), quoted, renamed
// and in the second mail of a patch too; a cut name without a secret stays
// cut, and so do binary bytes' (sc.binary).
func TestWholeStatNames(t *testing.T) {
	t.Parallel()
	name := leakGHP + ".the-staging-deploy-key.txt"
	cut := statPatch(" ...2C3poLukeLeiaHanSolo0123456789AbCd.the-staging-deploy-key.txt | 1 +", "diff --git a/"+name+" b/"+name)
	quoted := statPatch(` ...2d2C3po\177LukeLeiaHanSolo0123456789AbCd.the-staging-key.txt" | 1 +`,
		`diff --git "a/ghp_R2d2C3po\177LukeLeiaHanSolo0123456789AbCd.the-staging-key.txt" "b/ghp_R2d2C3po\177LukeLeiaHanSolo0123456789AbCd.the-staging-key.txt"`)
	renamed := statPatch(" ...o0123456789AbCd.the-staging-deploy-key-do-not.txt => notes.txt | 0",
		"diff --git a/"+leakGHP+".the-staging-deploy-key-do-not.txt b/notes.txt")
	plain := statPatch(" ...-the-deploy-notes-for-the-staging-environment-of-the-release.txt | 1 +",
		"diff --git a/ops-the-deploy-notes-for-the-staging-environment-of-the-release.txt b/ops-the-deploy-notes-for-the-staging-environment-of-the-release.txt")
	r := newRedactor("tok1")
	for _, tc := range []struct {
		name, in string
		want     string // a line of the result
	}{
		{"cut", cut, " ghp_[MASKED].the-staging-deploy-key.txt | 1 +"},
		{"quoted", quoted, ` ghp_[MASKED].the-staging-key.txt" | 1 +`},
		{"renamed", renamed, " ghp_[MASKED].the-staging-deploy-key-do-not.txt => notes.txt | 0"},
		{"second mail", plain + cut, " ghp_[MASKED].the-staging-deploy-key.txt | 1 +"},
		{"no secret", plain, " ...-the-deploy-notes-for-the-staging-environment-of-the-release.txt | 1 +"},
	} {
		got, _, _ := scrubString(tc.in, r, true)
		for _, leak := range []string{"LukeLeia", "o0123456789AbCd"} {
			if strings.Contains(got, leak) {
				t.Errorf("%s: holds %q:\n%s", tc.name, leak, got)
			}
		}
		if !strings.Contains(got, "\n"+tc.want+"\n") {
			t.Errorf("%s: no line %q:\n%s", tc.name, tc.want, got)
		}
	}
	// The server's token, whole in the name, is redacted from its end too.
	tok := "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	long := "deploy-" + tok + ".the-staging-deploy.txt"
	in := statPatch(" ..."+long[10:]+" | 1 +", "diff --git a/"+long+" b/"+long)
	if got, _, _ := scrubString(in, newRedactor(tok), false); strings.Contains(got, tok[3:]) || !strings.Contains(got, "\n deploy-[REDACTED].the-staging-deploy.txt | 1 +\n") {
		t.Errorf("the token's end is left:\n%s", got)
	}
	sc := &scrubber{red: r, mask: true, maxBinary: 1 << 20}
	if b := sc.binary([]byte(cut + "\xff")); b == nil || strings.Contains(string(b), "LukeLeia") {
		t.Errorf("binary bytes: %q", b)
	}
}

// TestDescriptionCut: a description of 4096 characters, as Gitea cuts an
// Actions variable's or secret's, or of 255 bytes, as it cuts a team's, is
// read as cut, so that a key across the cut is masked from 8 characters
// (TestE2ERedteam22DescriptionCut, TestE2ERedteam22TeamDescriptionCut); a
// shorter one is read whole, and one of 4096 characters without a key is
// delivered as it is.
func TestDescriptionCut(t *testing.T) {
	t.Parallel()
	pad := strings.Repeat("é", 4096-20)
	for _, tc := range []struct{ desc, want string }{
		{pad + leakGHP[:20], pad + "ghp_[MASKED]..."},
		{pad[2:] + leakGHP[:20], pad[2:] + leakGHP[:20]}, // whole: not cut
		{pad + "x-the-end-of-it-20", pad + "x-the-end-of-it-20"},
		{strings.Repeat("é", 120) + leakGHP[:15], strings.Repeat("é", 120) + "ghp_[MASKED]..."}, // a team's, 255 bytes
		{strings.Repeat("é", 119) + leakGHP[:15], strings.Repeat("é", 119) + leakGHP[:15]},
	} {
		sc := &scrubber{red: newRedactor(), mask: true}
		out, _, _, _ := sc.json([]byte(`{"name":"DEPLOY_NOTES","data":"x","description":"`+tc.desc+`"}`), 100, 1<<20)
		if want := `{"name":"DEPLOY_NOTES","data":"x","description":"` + tc.want + `"}`; string(out) != want {
			t.Errorf("description of %d characters: got %s", len([]rune(tc.desc)), out[max(0, len(out)-60):])
		}
	}
}

// TestBase64Values: a value in base64 after a ':' or '=' is read decoded
// where that shows a secret (TestE2ERedteam22Base64Values): a Kubernetes
// Secret's data, a Docker config's auth inside it, an .npmrc's _auth, the
// URL alphabet unpadded; a value whose text shows none, bytes that are not
// text and a commit id are delivered as they are.
func TestBase64Values(t *testing.T) {
	t.Parallel()
	b64, url := base64.StdEncoding.EncodeToString, base64.RawURLEncoding.EncodeToString
	docker := `{"auths":{"ghcr.io":{"auth":"` + b64([]byte("deploy:"+leakGHP)) + `"}}}`
	r := newRedactor("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567")
	for in, want := range map[string]string{
		"data:\n  credentials: " + b64([]byte("aws_access_key_id = AKIAR2D2C3POLUKE0123\n")) + "\n":             "data:\n  credentials: aws_access_key_id = AKIA[MASKED]\n\n",
		"  .dockerconfigjson: " + b64([]byte(docker)):                                                           `  .dockerconfigjson: {"auths":{"ghcr.io":{"auth":"deploy:[MASKED]"}}}`,
		"  cfg: " + b64([]byte(`{"ghcr.io":{"blob":"`+b64([]byte("deploy:"+leakGHP))+`"}}`)):                    `  cfg: {"ghcr.io":{"blob":"deploy:ghp_[MASKED]"}}`,
		"//npm.example.com/:_auth=" + b64([]byte("ci:"+leakGHP)) + "\nalways-auth=true":                         "//npm.example.com/:_auth=[MASKED]\nalways-auth=true", // basic_auth
		"creds=" + b64([]byte("ci:"+leakGHP)) + "\nalways-auth=true":                                            "creds=ci:ghp_[MASKED]\nalways-auth=true",
		"//npm.example.com/:_auth=" + b64([]byte("ci:hunter2hunter2")) + "\nalways-auth=true":                   "//npm.example.com/:_auth=[MASKED]\nalways-auth=true",
		`{"header": "` + url([]byte("Bearer abcDEF123456ghiJKL789~~")) + `"}`:                                   `{"header": "Bearer [MASKED]"}`,
		"key: '" + b64([]byte("0a1b2c3d4e5f60718293a4b5c6d7e8f901234567")) + "'":                                "key: '[REDACTED]'",
		"data:\n  note: " + b64([]byte("nothing to see in here, move on")) + "\n":                               "data:\n  note: " + b64([]byte("nothing to see in here, move on")) + "\n",
		"logo: " + b64([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd")): "logo: " + b64([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd")),
		"note: " + base64.RawStdEncoding.EncodeToString([]byte("GH="+leakGHP)):                                  "note: GH=ghp_[MASKED]",
		"blob: " + b64([]byte("\x00\x00\x00\x01"+leakGHP)):                                                      "blob: ghp_[MASKED]",
		"sha: 0123456789abcdef0123456789abcdef01234567":                                                         "sha: 0123456789abcdef0123456789abcdef01234567",
		"short: " + b64([]byte("AKIA0123")):                                                                     "short: " + b64([]byte("AKIA0123")),
	} {
		if got, _, _ := scrubString(in, r, true); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBase64Whole: a string that is base64 as a whole (a JSON member's
// value: an Actions variable's data) is read decoded where that shows a
// secret, in a JSON answer too; a commit id is not read so.
func TestBase64Whole(t *testing.T) {
	t.Parallel()
	kube := "apiVersion: v1\nusers:\n- name: ci\n  user:\n    client-key-data: " +
		base64.StdEncoding.EncodeToString([]byte("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234abcd\n-----END RSA PRIVATE KEY-----\n")) + "\n"
	sc := &scrubber{red: newRedactor(), mask: true}
	in := `{"name":"KUBECONFIG","data":"` + base64.StdEncoding.EncodeToString([]byte(kube)) + `","description":"","sha":"0123456789abcdef0123456789abcdef01234567"}`
	out, _, _, _ := sc.json([]byte(in), 100, 1<<20)
	if want := `client-key-data: -----BEGIN RSA PRIVATE KEY-----[MASKED]\n`; !strings.Contains(string(out), want) || strings.Contains(string(out), "MIIE") {
		t.Errorf("got %s", out)
	}
	if !strings.Contains(string(out), `"sha":"0123456789abcdef0123456789abcdef01234567"`) || len(sc.rules) != 1 || sc.rules[0] != "private_key" {
		t.Errorf("got %s, rules %v", out, sc.rules)
	}
}

// TestNestedURL: a text with blanks is read URL-escaped where it holds a URL
// escaped in another's query (TestE2ERedteam22NestedURL), in either case;
// one with a % but no such URL is not read so.
func TestNestedURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"ALERT_URL=\"https://relay.example.com/f?to=https%3A%2F%2Fhooks.slack.com%2Fservices%2FT00000000%2FB00000000%2FXXXXXXXXXXXXXXXXXXXXXXXX\"\n": "ALERT_URL=\"https://relay.example.com/f?to=https://hooks.slack.com/services/[MASKED]\"\n",
		"see https://relay.example.com/f?to=https%3a%2f%2fdeploy%3ahunter2hunter2%40example.com%2fr.git for the mirror":                              "see https://relay.example.com/f?to=https://deploy:[MASKED]@example.com/r.git for the mirror",
		"100% done, https://relay.example.com/f?to=https%3A%2F%2Fexample.com%2Fdocs\n":                                                               "100% done, https://relay.example.com/f?to=https%3A%2F%2Fexample.com%2Fdocs\n",
	} {
		if got, _, _ := scrubString(in, newRedactor(), true); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
	if got := unescapeURL("50% of https%3A%2F%2Fhooks.slack.com\n"); got != "50% of https://hooks.slack.com\n" {
		t.Errorf("unescapeURL: %q", got)
	}
	if in := "rate 50%2F100 here\n"; unescapeURL(in) != in {
		t.Errorf("unescapeURL read %q", in)
	}
}

// TestCutSecrets: a known secret's start of 8 bytes or more before an
// ellipsis is redacted (TestE2ERedteam22TokenCut), and so where a reading
// marks a cut that Gitea or git makes without a mark (a hunk header, a
// link's target); a shorter start, and the start of a secret of 8 bytes or
// fewer, stay.
func TestCutSecrets(t *testing.T) {
	t.Parallel()
	const tok = "0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"
	r := newRedactor(tok, "abcdefgh")
	for in, want := range map[string]string{
		"1|" + strings.Repeat("x", 165) + " " + tok[:31] + "…":                   "1|" + strings.Repeat("x", 165) + " [REDACTED]…",
		"token " + tok[:8] + "... and " + tok + "…":                              "token [REDACTED]... and [REDACTED]…",
		"see " + tok[:7] + "…":                                                   "see " + tok[:7] + "…",
		"see abcdefg… and abcdefgh…":                                             "see abcdefg… and [REDACTED]…",
		"@@ -1,3 +1,4 @@ " + strings.Repeat("y", 60) + " " + tok[:19] + "\n x\n": "@@ -1,3 +1,4 @@ " + strings.Repeat("y", 60) + " [REDACTED]...\n x\n",
	} {
		if got := fst(scrubString(in, r, false)); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
	sc := &scrubber{red: r}
	target := strings.Repeat("x", 1000) + "/" + tok[:23]
	if out, _, _, _ := sc.json([]byte(`{"type":"symlink","target":"`+target+`"}`), 100, 1<<20); strings.Contains(string(out), tok[:23]) {
		t.Errorf("target: %s", out[len(out)-60:])
	}
}

// fst returns the first of three values.
func fst[A, B, C any](a A, _ B, _ C) A { return a }

// TestYAMLBlocks: a YAML block scalar is read with its first line on its
// key's where that shows a secret (TestE2ERedteam22YAMLBlock), whatever its
// indicators, a comment after them and CRLF line ends; a block without a
// secret is delivered as it is.
func TestYAMLBlocks(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"db:\n  password: |-\n    correct-horse-battery-staple\n  port: 5432\n":  "db:\n  password: [MASKED]\n  port: 5432\n",
		"token: >2+ # the bot's\n    0123456789abcdef0123456789abcdef01234567\n": "token: [MASKED]\n",
		"secret: |\r\n  hunter2hunter2\r\n":                                      "secret: [MASKED]\r\n",
		"api_key:   >-\n  abcd1234efgh5678\n":                                    "api_key: [MASKED]\n", // blanks past one before the indicator
		"description: |\n  the password rotates monthly\n":                       "description: |\n  the password rotates monthly\n",
	} {
		if got := fst(scrubString(in, newRedactor(), true)); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestBase64Decoded: in a text that decodes base64 where it uses it, a value
// after a blank, a parenthesis or a quote is read decoded too
// (TestE2ERedteam22Base64Decoded); in another text, it is not.
func TestBase64Decoded(t *testing.T) {
	t.Parallel()
	b64 := base64.StdEncoding.EncodeToString([]byte(leakGHP))
	for in, want := range map[string]string{
		"export GH=$(echo " + b64 + " | base64 -d)\n": "export GH=$(echo ghp_[MASKED] | base64 -d)\n",
		"key = base64.b64decode('" + b64 + "')\n":     "key = base64.b64decode('ghp_[MASKED]')\n",
		"const key = atob(\"" + b64 + "\");\n":        "const key = atob(\"ghp_[MASKED]\");\n",
		"the value is " + b64 + " in the old notes\n": "the value is " + b64 + " in the old notes\n",
	} {
		if got := fst(scrubString(in, newRedactor(), true)); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}
