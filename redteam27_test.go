package main

import (
	"encoding/base64"
	"slices"
	"strings"
	"testing"
)

// TestConfigShapesMasked: the password of each of rt27Files
// (TestE2ERedteam27ConfigShapes) is masked, generic_secret or curl_user
// naming it, the rest of the file kept; so is it in JSON inside a JSON
// string, as an activity's content holds a commit's message.
func TestConfigShapesMasked(t *testing.T) {
	t.Parallel()
	for path, text := range rt27Files {
		want := strings.Replace(text, rt27Pass, maskedMarker, 1)
		rule := map[bool]string{true: "curl_user", false: "generic_secret"}[strings.HasSuffix(path, ".sh")]
		if got, rules, _ := scrubString(text, newRedactor(), true); got != want || !slices.Equal(rules, []string{rule}) {
			t.Errorf("%s: scrubString = %q, %q; want %q, %s", path, got, rules, want, rule)
		}
	}
	in := `{"message":"{\"environment\": [{\"name\": \"API_TOKEN\", \"value\": \"` + rt27Pass + `\"}]}"}`
	if got, _ := maskString(in); strings.Contains(got, rt27Pass) {
		t.Errorf("maskString(%q) = %q", in, got)
	}
}

// TestProviderKeysMasked: each of rt27Keys (TestE2ERedteam27ProviderKeys) is
// masked after its public prefix, alone and on a line of an issue's body.
func TestProviderKeysMasked(t *testing.T) {
	t.Parallel()
	var body []string
	for _, k := range rt27Keys {
		if got, rules := maskString(k[0] + k[1]); got != k[0]+maskedMarker || len(rules) != 1 {
			t.Errorf("maskString(%q) = %q, %q", k[0]+k[1], got, rules)
		}
		body = append(body, "- "+k[0]+k[1]+" (rotated)")
	}
	got, _, _ := scrubString(strings.Join(body, "\n"), newRedactor(), true)
	for _, k := range rt27Keys {
		if strings.Contains(got, k[1][:12]) {
			t.Errorf("the body holds %q: %s", k[1][:12], got)
		}
	}
}

// TestCommandFlagsMasked: the secret of each of rt27Commands
// (TestE2ERedteam27CommandFlags) is masked after its flag, cli_flag naming
// it, quoted or not; the flag=value form stays generic_secret's.
func TestCommandFlagsMasked(t *testing.T) {
	t.Parallel()
	for _, c := range rt27Commands {
		for _, q := range []string{"", "'", `"`} {
			in := c[0] + q + c[1] + q + " --name r1"
			if got, rules := maskString(in); got != c[0]+q+maskedMarker+q+" --name r1" || !slices.Equal(rules, []string{"cli_flag"}) {
				t.Errorf("maskString(%q) = %q, %q", in, got, rules)
			}
		}
	}
	if got, rules := maskString("--token=" + rt27Commands[0][1]); got != "--token="+maskedMarker || !slices.Equal(rules, []string{"generic_secret"}) {
		t.Errorf("--token=: %q, %q", got, rules)
	}
}

// TestRedteam27Kept: the new shapes leave ordinary text and code alone:
// commit SHAs, UUIDs, an image's base64, templated or referenced values,
// and prose with the rules' words.
func TestRedteam27Kept(t *testing.T) {
	t.Parallel()
	img := base64.StdEncoding.EncodeToString([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06\x00\x00\x00\x1f\xf3\xffa" + strings.Repeat("\x00\x11\x22\x33", 40)))
	for _, in := range []string{
		"commit 0123456789abcdef0123456789abcdef01234567 fixes the token value check",
		`{"id":"5f0c7a2e-8b1d-4c3f-9e6a-2d7b1c0e9f84","name":"secret_scanning","value":"enabled"}`,
		"![logo](data:image/png;base64," + img + ")",
		"- name: API_TOKEN\n  valueFrom:\n    secretKeyRef:\n      name: api\n      key: token",
		"<password>${env.NEXUS_PASSWORD}</password>\n<secret>short</secret>",
		"fn parse(tokens: Vec<Token>) -> Option<Secret> { tokens.first() }",
		"curl -u \"$CI_USER:$CI_PASSWORD\" https://x\ncurl -sSf -u ci https://x\ncurl --user-agent a:b https://x",
		"pip install pypi-simple; echo $npm_package_version; hf_hub_download(repo_id); see SG.12.3",
		"AccountKey=<storage-key>;SharedAccessKeyName=RootManageSharedAccessKey",
		"the password value is read from the vault; the token's value: see below",
		"see the sig and value fields of the secret's token",
		"docker login --password-stdin < pass.txt; a non-password protected repository; re-tokenize everything",
		"act_runner register --token $RUNNER_TOKEN --name r1; tea login add --token <token>; --password '${{ secrets.PASSWORD }}'",
	} {
		if got, rules, _ := scrubString(in, newRedactor(), true); got != in {
			t.Errorf("scrubString(%q) = %q, %q: want it kept", in, got, rules)
		}
	}
}

// TestBasicAuthMasked: the base64 user:password of each of rt27Auths
// (TestE2ERedteam27BasicAuth) is masked, basic_auth naming it, and so is
// a Kubernetes pull secret's, whose .dockerconfigjson is the config.json
// in base64.
func TestBasicAuthMasked(t *testing.T) {
	t.Parallel()
	for path, f := range rt27Auths {
		in := strings.Replace(f[0], "%s", f[1], 1)
		want := strings.Replace(f[0], "%s", maskedMarker, 1)
		if got, rules, _ := scrubString(in, newRedactor(), true); got != want || !slices.Equal(rules, []string{"basic_auth"}) {
			t.Errorf("%s: scrubString = %q, %q; want %q", path, got, rules, want)
		}
	}
	f := rt27Auths["docker/config.json"]
	in := "kind: Secret\ntype: kubernetes.io/dockerconfigjson\ndata:\n  .dockerconfigjson: " + base64.StdEncoding.EncodeToString([]byte(strings.Replace(f[0], "%s", f[1], 1))) + "\n"
	if got, _, _ := scrubString(in, newRedactor(), true); strings.Contains(got, f[1][:12]) || !strings.Contains(got, maskedMarker) {
		t.Errorf("the pull secret: %q", got)
	}
}

// TestEnvPairDiffMasked: a Kubernetes env pair's value is masked in a diff
// (TestE2ERedteam27EnvPairDiff), added or removed; the value a kept name's
// pair gains after its removed one is not (README residual).
func TestEnvPairDiffMasked(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"@@ -4,3 +4,5 @@\n env:\n+  - name: DB_PASSWORD\n+    value: " + rt27Pass + "\n   - name: DB_HOST\n": "@@ -4,3 +4,5 @@\n env:\n+  - name: DB_PASSWORD\n+    value: [MASKED]\n   - name: DB_HOST\n",
		"@@ -4,2 +4,0 @@\n-  - name: API_TOKEN\n-    value: \"" + rt27Pass + "\"\n":                          "@@ -4,2 +4,0 @@\n-  - name: API_TOKEN\n-    value: \"[MASKED]\"\n",
		"@@ -4,2 +4,2 @@\n   - name: DB_PASSWORD\n-    value: " + rt27Pass + "\n+    value: x\n":             "@@ -4,2 +4,2 @@\n   - name: DB_PASSWORD\n-    value: [MASKED]\n+    value: x\n",
	} {
		if got, _, _ := scrubString(in, newRedactor(), true); got != want {
			t.Errorf("scrubString(%q)\n = %q,\nwant %q", in, got, want)
		}
	}
}

// TestEntityWithoutSemicolon: the HTML reading decodes the legacy entities
// without their ';' (TestE2ERedteam27EntityWithoutSemicolon), &nbsp as a
// blank; a text with an '&' of another word is delivered as it is.
func TestEntityWithoutSemicolon(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"export DB_PASSWORD=&quot" + rt27Pass + "&quot":                                       `export DB_PASSWORD="[MASKED]"`,
		"curl -H &quotAuthorization: token&nbsp0a1b2c3d4e5f60718293a4b5c6d7e8f901234567&quot": `curl -H "Authorization: token [MASKED]"`,
		"see /search?q=x&page=2&gtm=1 &amp friends":                                           "see /search?q=x&page=2&gtm=1 &amp friends",
	} {
		if got, _, _ := scrubString(in, newRedactor(), true); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestEntityBlanksRead: an entity standing for a Unicode blank or a
// fullwidth form, numeric or named (&#160;, &ensp;, &#65306;), is read as the
// ASCII it stands for, as &nbsp; is: the HTML reading alone shows no secret
// there (the rules' separators are ASCII), and the ASCII reading of the text
// finds no such character in it. The upper-case legacy entities (&QUOT) are
// read without their ';' too.
func TestEntityBlanksRead(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"Authorization: token&#160;0123456789abcdef0123456789abcdef01234567": "Authorization: token [MASKED]",
		"Authorization: token&#xA0;0123456789abcdef0123456789abcdef01234567": "Authorization: token [MASKED]",
		"Authorization: token&ensp;0123456789abcdef0123456789abcdef01234567": "Authorization: token [MASKED]",
		"staging password&#65306;hunter2hunter2":                             "staging password:[MASKED]",
		"export DB_PASSWORD=&QUOT" + rt27Pass + "&QUOT":                      `export DB_PASSWORD="[MASKED]"`,
		"<p>Q&amp;A: the password rotates&ensp;&mdash; ask ops</p>":          "<p>Q&amp;A: the password rotates&ensp;&mdash; ask ops</p>",
	} {
		if got, _, _ := scrubString(in, newRedactor(), true); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}
