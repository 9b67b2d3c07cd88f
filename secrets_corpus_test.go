package main

import (
	"encoding/base64"
	"encoding/hex"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The masking corpus: for every kind of secret README's "Results" section
// promises to mask, keys in the provider's real format, made at test time
// from a seeded generator (so no key-shaped string is committed), each
// embedded in text as it would appear in an issue. It is kept apart from the
// rule table (redact.go), whose own examples cannot pin a rule deleted
// together with them.

// corpusKey is one secret of the corpus.
type corpusKey struct {
	term    string // the words README uses for it
	rule    string // the masking rule that must name it
	context string // text around the key; %s is the key
	key     func(g *keyGen) (key, secret string)
}

// keyGen makes random strings of given alphabets.
type keyGen struct{ r *rand.Rand }

const (
	alnum    = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	base64ID = alnum + "_-"
	upperNum = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
	digits   = "0123456789"
	base32lc = "abcdefghijklmnopqrstuvwxyz234567"
)

// s returns n random characters of alphabet.
func (g *keyGen) s(alphabet string, n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[g.r.IntN(len(alphabet))]
	}
	return string(b)
}

// bytes returns n random bytes.
func (g *keyGen) bytes(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(g.r.IntN(256))
	}
	return b
}

// prefixed makes a key of prefix and a random body, the body being the secret.
func prefixed(prefix, alphabet string, n int) func(g *keyGen) (string, string) {
	return func(g *keyGen) (string, string) {
		body := g.s(alphabet, n)
		return prefix + body, body
	}
}

// secretCorpus lists the corpus, by README term.
var secretCorpus = []corpusKey{
	{"GitHub", "github", "the CI log printed %s by mistake", prefixed("ghp_", alnum, 36)},
	{"GitHub", "github", "fine-grained %s was pasted here", func(g *keyGen) (string, string) {
		body := g.s(alnum, 22) + "_" + g.s(alnum, 59)
		return "github_pat_" + body, body
	}},
	{"GitHub", "github", "1|xxx GH=%s… in the activity feed", prefixed("ghp_", alnum, 19)},
	{"GitLab", "gitlab", "mirror with %s please", prefixed("glpat-", base64ID, 20)},
	{"GitLab", "gitlab", "the runner registered with %s", prefixed("glrt-t1_", base64ID, 27)},
	{"GitLab", "gitlab", "gitlab-runner register --registration-token %s", prefixed("GR1348941", base64ID, 20)},
	{"Gitea OAuth", "gitea_oauth", "client secret is %s now", prefixed("gto_", base32lc, 52)},
	{"Gitea OAuth", "gitea_oauth", "redirected with %s in the address bar", prefixed("gta_", base32lc, 52)},
	{"AWS", "aws_access_key_id", "the access key %s is in the env dump", prefixed("AKIA", upperNum, 16)},
	{"Slack", "slack_token", "bot token %s leaked", func(g *keyGen) (string, string) {
		body := g.s(digits, 12) + "-" + g.s(digits, 13) + "-" + g.s(alnum, 24)
		return "xoxb-" + body, body
	}},
	{"Slack", "slack_webhook", "alerts go to %s today", func(g *keyGen) (string, string) {
		body := "T" + g.s(upperNum, 10) + "/B" + g.s(upperNum, 10) + "/" + g.s(alnum, 24)
		return "https://hooks.slack.com/services/" + body, body
	}},
	{"chat webhook addresses", "chat_webhook", "notify %s on push", func(g *keyGen) (string, string) {
		body := g.s(base64ID, 68)
		return "https://discord.com/api/webhooks/" + g.s(digits, 19) + "/" + body, body
	}},
	{"chat webhook addresses", "chat_webhook", "the bot posts to %s", func(g *keyGen) (string, string) {
		body := g.s(digits, 10) + ":" + g.s(base64ID, 35)
		return "https://api.telegram.org/bot" + body + "/sendMessage?chat_id=-100123", body
	}},
	{"chat webhook addresses", "chat_webhook", "the slack hook posts to %s", func(g *keyGen) (string, string) {
		body := g.s("ybndrfg8ejkmcpqxot1uwisza345h769", 26) // a Mattermost hook's id
		return "https://chat.example.com/hooks/" + body, body
	}},
	{"chat webhook addresses", "chat_webhook", "the slack hook posts to %s", func(g *keyGen) (string, string) {
		body := g.s(alnum, 48) // a Rocket.Chat hook's token, after its id
		return "https://rocket.example.com/hooks/" + g.s(alnum, 17) + "/" + body, body
	}},
	{"Stripe", "stripe", "charge with %s then", prefixed("sk_live_", alnum, 24)},
	{"Stripe", "stripe", "restricted %s for reports", prefixed("rk_live_", alnum, 24)},
	{"Google", "google_api_key", "maps use %s in the page", prefixed("AIza", base64ID, 35)},
	{"OpenAI", "openai", "the model is called with %s in tests", prefixed("sk-proj-", base64ID, 120)},
	{"OpenAI", "openai", "old key %s still works", prefixed("sk-", alnum, 48)},
	{"Anthropic", "anthropic", "the agent runs with %s locally", func(g *keyGen) (string, string) {
		body := g.s(base64ID, 93) + "AA"
		return "sk-ant-api03-" + body, body
	}},
	{"JWTs", "jwt", "session cookie %s captured", func(g *keyGen) (string, string) {
		enc := base64.RawURLEncoding.EncodeToString
		body := enc([]byte(`{"sub":"`+g.s(digits, 8)+`","name":"`+g.s(alnum, 12)+`","iat":1700000000}`)) + "." + enc(g.bytes(32))
		return enc([]byte(`{"alg":"HS256","typ":"JWT"}`)) + "." + body, body
	}},
	{"private keys", "private_key", "deploy key:\n%s\nend of paste", func(g *keyGen) (string, string) {
		body := base64.StdEncoding.EncodeToString(g.bytes(300))
		var lines []string
		for len(body) > 70 {
			lines, body = append(lines, body[:70]), body[70:]
		}
		body = strings.Join(append(lines, body), "\n")
		return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + body + "\n-----END OPENSSH PRIVATE KEY-----", lines[1]
	}},
	{"Authorization headers", "authorization_header", "curl -H 'Authorization: token %s' works", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(20))
		return body, body
	}},
	{"Authorization headers", "bearer", "send Bearer %s to the API", prefixed("", base64ID, 32)},
	{"URL credentials", "url_credentials", "git clone %s fails", func(g *keyGen) (string, string) {
		body := g.s(alnum, 20)
		return "https://deploy:" + body + "@git.example.com/o/r.git", body
	}},
	{"URL credentials", "url_credentials", "[submodule \"lib\"]\n\turl = %s\n", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(20)) // a Gitea token as the user name
		return "https://" + body + "@git.example.com/o/lib.git", body
	}},
	{"URL credentials", "url_credentials", "git clone %s\n", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(20)) // a Gitea token as the user name, x-oauth-basic its password
		return "https://" + body + ":x-oauth-basic@git.example.com/o/r.git", body
	}},
	{"signed addresses", "url_signature", "the Teams channel's hook is %s now", func(g *keyGen) (string, string) {
		body := g.s(base64ID, 43) // a Power Automate workflow's address, signed
		return "https://prod-27.westeurope.logic.azure.com:443/workflows/" + hex.EncodeToString(g.bytes(16)) +
			"/triggers/manual/paths/invoke?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=" + body, body
	}},
	{"signed addresses", "url_signature", "the build log: %s", func(g *keyGen) (string, string) {
		body := g.s(alnum, 30) + "%2B" + g.s(alnum, 10) + "%3D" // an Azure SAS, URL-escaped base64
		return "https://ci.blob.core.windows.net/logs/41.txt?sv=2022-11-02&sp=r&se=2026-12-31T00%3A00%3A00Z&sig=" + body, body
	}},
	{".netrc entries", "netrc", "# ~/.netrc\n%s\n", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(20))
		return "machine git.example.com\n  login ci\n  password " + body, body
	}},
	{"generic api_key/token/password/secret assignments", "generic_secret", "set %s in the config", func(g *keyGen) (string, string) {
		body := g.s(alnum, 24)
		return "api_key=" + body, body
	}},
	{"generic api_key/token/password/secret assignments", "generic_secret", "the .env has %s in it", func(g *keyGen) (string, string) {
		body := g.s(alnum, 16)
		return "DB_PASSWORD=" + body, body
	}},
	{"generic api_key/token/password/secret assignments", "generic_secret", "settings.xml:\n<server>\n  <password>%s</password>\n</server>", prefixed("", alnum, 20)},
	{"generic api_key/token/password/secret assignments", "generic_secret", "env:\n  - name: DB_PASSWORD\n    value: %s\n", prefixed("", alnum, 20)},
	{"generic api_key/token/password/secret assignments", "generic_secret", `[{"name": "API_TOKEN", "value": "%s"}]`, prefixed("", alnum, 20)},
	{"generic api_key/token/password/secret assignments", "generic_secret", `<add key="ClearTextPassword" value="%s" />`, prefixed("", base64ID, 20)},
	// The keys below are of kinds README's step 3 does not name yet (PyPI, npm,
	// Azure, DigitalOcean, Vault, Docker Hub, Hugging Face, SendGrid, Grafana, age, curl -u, base64 auth,
	// a command's --token or --password):
	// each is listed under the nearest kind it names.
	{"Basic credentials", "curl_user", "deploy with\n  %s https://nexus.example.com/\n", func(g *keyGen) (string, string) {
		body := g.s(alnum, 20)
		return "curl -fsS -u deploy:" + body + " -T app.tgz", body
	}},
	{"Basic credentials", "basic_auth", "~/.docker/config.json: %s", func(g *keyGen) (string, string) {
		body := base64.StdEncoding.EncodeToString([]byte("ci:" + g.s(alnum, 20)))
		return `{"auths": {"registry.example.com": {"auth": "` + body + `"}}}`, body
	}},
	{"Azure", "azure_key", "the app reads %s;EndpointSuffix=core.windows.net", func(g *keyGen) (string, string) {
		body := base64.StdEncoding.EncodeToString(g.bytes(64))
		return "DefaultEndpointsProtocol=https;AccountName=ci0123;AccountKey=" + body, body
	}},
	{"Azure", "azure_key", "the bus is %s", func(g *keyGen) (string, string) {
		body := base64.StdEncoding.EncodeToString(g.bytes(32))
		return "Endpoint=sb://ci.servicebus.windows.net/;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=" + body, body
	}},
	{"PyPI", "pypi", "twine upload -u __token__ -p %s dist/*", func(g *keyGen) (string, string) {
		body := "AgEIcHlwaS5vcmc" + g.s(base64ID, 160)
		return "pypi-" + body, body
	}},
	{"command-line secret flags", "cli_flag", "register the runner:\n\n    act_runner register --instance https://git.example.com --token %s\n", prefixed("", alnum, 40)},
	{"command-line secret flags", "cli_flag", "tea login add --url https://git.example.com --token %s", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(20))
		return body, body
	}},
	{"npm", "npm", "//registry.npmjs.org/:_authToken %s", prefixed("npm_", alnum, 36)},
	{"DigitalOcean", "service_token", "doctl auth init -t %s", func(g *keyGen) (string, string) {
		body := hex.EncodeToString(g.bytes(32))
		return "dop_v1_" + body, body
	}},
	{"Vault", "service_token", "vault login %s", prefixed("hvs.", base64ID, 91)},
	{"Docker Hub", "service_token", "docker login -u ci -p %s", prefixed("dckr_pat_", base64ID, 27)},
	{"Hugging Face", "service_token", "the notebook logs in with %s", prefixed("hf_", alnum[:52], 34)},
	{"age", "service_token", "# public key: age1...\n%s\n", prefixed("AGE-SECRET-KEY-1", "023456789ACDEFGHJKLMNPQRSTUVWXYZ", 58)},
	{"Grafana", "service_token", "the dashboard job uses %s", func(g *keyGen) (string, string) {
		body := g.s(alnum, 32) + "_" + hex.EncodeToString(g.bytes(4))
		return "glsa_" + body, body
	}},
	{"SendGrid", "service_token", "the mailer sends with %s", func(g *keyGen) (string, string) {
		body := g.s(base64ID, 22) + "." + g.s(base64ID, 43)
		return "SG." + body, body
	}},
}

// readmeMaskingTerms returns the kinds of secrets README's pattern masking
// step names: the provider keys in parentheses and the other kinds listed.
func readmeMaskingTerms(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Join(strings.Fields(strings.ReplaceAll(string(b), "`", "")), " ")
	m := regexp.MustCompile(`Pattern masking \(SECRET_DETECTION_MODE\): provider keys \(([^)]*)\), (.*?) keep their public prefix`).FindStringSubmatch(text)
	if m == nil {
		t.Fatal("README.md: no pattern masking step of the form \"Pattern masking (`SECRET_DETECTION_MODE`): provider keys (...), ... keep their public prefix\"")
	}
	terms := strings.Split(m[1], ", ")
	for _, part := range strings.Split(m[2], ", ") {
		terms = append(terms, strings.Split(part, " and ")...)
	}
	return terms
}

// TestSecretCorpusMatchesREADME checks that the corpus has keys for exactly
// the kinds README names, and for every masking rule.
func TestSecretCorpusMatchesREADME(t *testing.T) {
	t.Parallel()
	var corpusTerms, corpusRules []string
	for _, k := range secretCorpus {
		if !slices.Contains(corpusTerms, k.term) {
			corpusTerms = append(corpusTerms, k.term)
		}
		corpusRules = append(corpusRules, k.rule)
	}
	readme := readmeMaskingTerms(t)
	slices.Sort(readme)
	slices.Sort(corpusTerms)
	if diff := cmp.Diff(readme, corpusTerms); diff != "" {
		t.Errorf("README's masked kinds and the corpus differ: add keys to secretCorpus or fix README (-readme +corpus):\n%s", diff)
	}
	for _, r := range secretRules {
		if !slices.Contains(corpusRules, r.name) {
			t.Errorf("masking rule %q has no key in secretCorpus (secrets_corpus_test.go)", r.name)
		}
	}
}

// TestSecretCorpusMasked passes every key of the corpus through the default
// result pipeline, as the body of an issue Gitea answers: the secret part
// must be gone and secrets_masked must name exactly the key's rule.
func TestSecretCorpusMasked(t *testing.T) {
	t.Parallel()
	g := &keyGen{rand.New(rand.NewPCG(15, 2750))}
	f := newScriptedGitea(t).user("bob")
	type entry struct {
		corpusKey
		text, secret string
	}
	var entries []entry
	for i, k := range secretCorpus {
		key, secret := k.key(g)
		text := strings.Replace(k.context, "%s", key, 1)
		f.json("/repos/alice/demo/issues/"+strconv.Itoa(i+1), map[string]any{"number": i + 1, "body": text})
		entries = append(entries, entry{k, text, secret})
	}
	s := f.server(t)
	for i, e := range entries {
		t.Run(e.rule+"/"+strconv.Itoa(i+1), func(t *testing.T) {
			t.Parallel()
			out, isErr := fakeCall(t, t.Context(), s, "issueGetIssue", map[string]any{"owner": "alice", "repo": "demo", "index": i + 1})
			body := str0(get(out, "data.body"))
			var masked []string
			rules, _ := get(out, "secrets_masked").([]any)
			for _, r := range rules {
				masked = append(masked, str0(r))
			}
			if isErr || strings.Contains(body, e.secret) || !strings.Contains(body, maskedMarker) {
				t.Errorf("%s key not masked: %q", e.term, body)
			}
			if diff := cmp.Diff([]string{e.rule}, masked); diff != "" {
				t.Errorf("secrets_masked mismatch (-want +got):\n%s", diff)
			}
		})
	}
}
