package main

// Secret handling for tool results (README, "Results", steps 1-3):
// exact redaction of known secrets (the token, configured secrets and the
// request body's secret fields) and pattern masking of likely secrets, in
// every reading of a text that shows one (textViews), string by string;
// scrubber (scrub.go) applies them to JSON, with the removal of hidden
// Unicode text (hidden.go). A string with nothing to change is returned as
// is, not copied. Hidden characters go first (see scrubString), as one inside
// a secret would hide it from both other layers; their JSON escapes (\u0001)
// go after masking, where that shows another secret.

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// redactedMarker replaces every occurrence of an exactly known secret.
const redactedMarker = "[REDACTED]"

// maskedMarker replaces the secret part of every pattern match.
const maskedMarker = "[MASKED]"

// redactor replaces exactly known secrets with redactedMarker.
type redactor struct {
	secrets []string // distinct and non-empty, longest first
}

// newRedactor returns a redactor for the non-empty secrets, deduplicated and
// ordered longest first.
func newRedactor(secrets ...string) *redactor {
	s := slices.DeleteFunc(slices.Clone(secrets), func(v string) bool { return v == "" })
	slices.SortFunc(s, func(a, b string) int { return cmp.Or(len(b)-len(a), strings.Compare(a, b)) })
	return &redactor{secrets: slices.Compact(s)} // sorted, so duplicates are adjacent
}

// redact replaces every occurrence of every secret in s with redactedMarker.
// Overlapping and adjacent occurrences become one marker, so no part of any
// secret is left behind. If a secret would still occur in the result (a
// secret containing brackets can straddle a marker), the whole string becomes
// redactedMarker. A secret's start of minCutSecret bytes or more with an
// ellipsis after it is replaced too (cutSecrets).
func (r *redactor) redact(s string) string {
	var spans [][2]int
	for _, sec := range r.secrets {
		for i := 0; i <= len(s)-len(sec); {
			j := strings.Index(s[i:], sec)
			if j < 0 {
				break
			}
			spans = append(spans, [2]int{i + j, i + j + len(sec)})
			i += j + 1
		}
	}
	if spans = r.cutSecrets(spans, s); spans == nil {
		return s
	}
	out := replaceSpans(s, spans, redactedMarker)
	for _, sec := range r.secrets {
		if strings.Contains(out, sec) {
			return redactedMarker
		}
	}
	return out
}

// minCutSecret is the length of the shortest start of a secret that
// cutSecrets finds: as the rules' cut keys, 8 bytes.
const minCutSecret = 8

// cutSecrets appends to spans the starts of r's secrets, of minCutSecret
// bytes or more but not whole, that s has right before an ellipsis ("…" or
// "..."): Gitea keeps a comment in the activity feed cut to 200 columns with
// "…" after it (services/feed/notifier.go CreateIssueComment), and the
// readings mark with "..." the cuts that Gitea and git make without a mark
// (a hunk header's, a link's target, an Actions description): the server's
// token pasted in a comment reached the model in the feed as its first 31
// characters.
func (r *redactor) cutSecrets(spans [][2]int, s string) [][2]int {
	if len(r.secrets) == 0 || len(s) <= minCutSecret {
		return spans
	}
	for _, mark := range []string{"…", "..."} {
		for i := strings.Index(s, mark); i >= 0; i = indexFrom(s, mark, i+len(mark)) {
			for _, sec := range r.secrets {
				for j := max(0, i-len(sec)+1); j <= i-minCutSecret; j++ { // the longest start first
					if s[j] == sec[0] && s[j:i] == sec[:i-j] {
						spans = append(spans, [2]int{j, i})
						break
					}
				}
			}
		}
	}
	return spans
}

// indexFrom is strings.Index of sub in s from i on, -1 for none.
func indexFrom(s, sub string, i int) int {
	if k := strings.Index(s[i:], sub); k >= 0 {
		return i + k
	}
	return -1
}

// replaceSpans returns s with each union of the overlapping or adjacent byte
// ranges in spans replaced by one marker. It reorders spans.
func replaceSpans(s string, spans [][2]int, marker string) string {
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	b.Grow(len(s))
	at := 0 // bytes of s before at are written or replaced
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[at:start])
		b.WriteString(marker)
		at = end
	}
	b.WriteString(s[at:])
	return b.String()
}

// secretFields are the request-body fields whose values are redacted from the
// result of the same call (README, "Results", step 2), matched case-insensitively.
// secretMember also masks them wherever a result object carries them.
var secretFields = map[string]bool{
	"password": true, "secret": true, "client_secret": true, "token": true,
	"access_token": true, "auth_password": true, "auth_token": true,
	"private_key": true, "authorization_header": true, "remote_password": true,
	"mirror_password": true, "mirror_token": true,
	"aws_secret_access_key": true, "aws_access_key_id": true,
}

// actionSecretWrites are the Gitea 1.26.0 operations that create or update an
// Actions secret; the top-level data field of their body is the secret.
var actionSecretWrites = map[string]bool{
	"updateRepoSecret": true, "updateOrgSecret": true, "updateUserSecret": true,
}

// bodySecretDepth is how many levels of nested containers bodySecrets
// examines, counting the body itself as level 1; bodySecretMinLen the least
// number of characters a secretFields value needs to be collected.
const bodySecretDepth, bodySecretMinLen = 8, 4

// bodySecrets returns, sorted and deduplicated, the secret values of a request
// body: secretFields string values of at least bodySecretMinLen characters in
// the containers of levels 1 to bodySecretDepth, and for Actions secret writes
// the non-empty top-level data value. Field names match case-insensitively, as
// Gitea's JSON decoding does.
func bodySecrets(operationID string, body any) []string {
	var out []string
	var walk func(v any, level int)
	walk = func(v any, level int) {
		if level > bodySecretDepth {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				if s, ok := e.(string); ok && (secretFields[strings.ToLower(k)] && utf8.RuneCountInString(s) >= bodySecretMinLen ||
					level == 1 && s != "" && actionSecretWrites[operationID] && strings.EqualFold(k, "data")) {
					out = append(out, s)
				}
				walk(e, level+1)
			}
		case []any:
			for _, e := range t {
				walk(e, level+1)
			}
		}
	}
	walk(body, 1)
	slices.Sort(out)
	return slices.Compact(out)
}

// secretMode is the SECRET_DETECTION_MODE: what pattern masking does.
type secretMode int

const (
	modeMask  secretMode = iota // replace the secret part of each match (default)
	modeOff                     // skip pattern masking
	modeBlock                   // withhold a result that has a match
)

// parseSecretMode parses SECRET_DETECTION_MODE; empty means mask.
func parseSecretMode(s string) (secretMode, error) {
	if m, ok := map[string]secretMode{"": modeMask, "mask": modeMask, "off": modeOff, "block": modeBlock}[s]; ok {
		return m, nil
	}
	return modeMask, fmt.Errorf("SECRET_DETECTION_MODE: got %q, want off, mask or block", s)
}

// secretRule is one pattern of likely secrets. The secret is the text of the
// first capturing group of its regexp that takes part in a match; masking
// replaces it with maskedMarker and keeps the rest of the match (a provider's
// public prefix such as ghp_, a key name and operator, a URL's user name).
// Every match must start with one of lits or words (a leading \b is allowed)
// and contain one of the bytes of needs (or, for assign, have its operator
// or value after the word and a name, assignAt): maskString runs the regexp
// only where they occur, anchored there, and unless multiline only up to the
// end of that line (for assign, of the line of assignAt).
type secretRule struct {
	name      string
	lits      []string       // literals a match starts with, case-sensitive
	words     []string       // lower-case words a match starts with, ignoring ASCII case
	needs     string         // bytes of which a match contains one, if not empty
	assign    bool           // a match is the word, name bytes, a quote and blanks, then ':' or '=', or a name/value pair (assignAt)
	multiline bool           // a match may span lines
	re        *regexp.Regexp // the pattern; see above
	mask      []string       // examples the rule must mask
	keep      []string       // examples maskString must leave alone
}

// secretValueEnd is what may follow an assigned value (a backslash: an
// escape in JSON text), so that code such as token = getToken() is not taken
// for an assignment.
const secretValueEnd = "(?:[\\s\"'`,;&<>)\\]}\\\\]|$)"

// secretRules are the masking patterns, applied together: overlapping matches
// are masked as one. A bare 40-hex string is never masked: Gitea access tokens
// share that shape with commit SHAs, so they are masked only in context
// (authorization_header, bearer, url_credentials, generic_secret here; the
// sha1 of an access token object in secretMember).
var secretRules = []secretRule{{
	name: "github",
	lits: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"},
	re:   regexp.MustCompile(`(?:gh[pousr]|github_pat)_(?:([A-Za-z0-9_]{30,})|([A-Za-z0-9_]{8,})(?:…|\.\.\.))`),
	mask: []string{
		"export GH=ghp_R2d2C3poLukeLeiaHanSolo0123456789AbCd",
		"ghs_0123456789abcdefghijABCDEFGHIJklmnop",
		"github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVW",
		"1|deploy with GH=ghp_R2d2C3poLukeLeiaHan…", // cut in the activity feed (a comment, to 200 columns)
	},
	keep: []string{"ghp_short", "ghost_user", "see github_pat_ docs", "ghp_short…"},
}, {
	// Personal, runner, deploy, trigger, feed, CI job, SCIM and OAuth
	// application tokens, and a runner's registration token (GR1348941).
	name: "gitlab",
	lits: []string{"glpat-", "glrt-", "gldt-", "glptt-", "glft-", "glcbt-", "glsoat-", "gloas-", "GR1348941"},
	re:   regexp.MustCompile(`(?:gl(?:pat|rt|dt|ptt|ft|cbt|soat|oas)-|GR1348941)(?:([A-Za-z0-9_-]{20,})|([A-Za-z0-9_-]{8,})(?:…|\.\.\.))`),
	mask: []string{"GITLAB=glpat-xYz123AbC456dEf789gH", "token = glrt-t1_xYz123AbC456dEf789gH", "--registration-token GR1348941xYz123AbC456dEf789gH"},
	keep: []string{"glpat-short", "glrt- is the prefix", "GR1348941 alone"},
}, {
	// Gitea OAuth2 client secrets (gto_) and authorization codes (gta_):
	// 32 random bytes in unpadded lower-case base32 (models/auth/oauth2.go).
	name: "gitea_oauth",
	lits: []string{"gto_", "gta_"},
	re:   regexp.MustCompile(`gt[oa]_(?:([a-z2-7]{52})|([a-z2-7]{8,51})(?:…|\.\.\.))`),
	mask: []string{
		"client_secret gto_abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst",
		"?code=gta_zyxwvutsrqponmlkjihgfedcba765432zyxwvutsrqponmlkjihg&state=1",
	},
	keep: []string{"gto_ABCDEFGHIJKLMNOPQRSTUVWXYZ", "gta_ is the code prefix"},
}, {
	name: "aws_access_key_id",
	lits: []string{"AKIA", "ASIA"},
	re:   regexp.MustCompile(`\b(?:AKIA|ASIA)(?:([A-Z0-9]{16})\b|([A-Z0-9]{8,15})(?:…|\.\.\.))`),
	mask: []string{"aws AKIAIOSFODNN7EXAMPLE", "ASIAY34FZKBOKMUTVV7A", "key AKIAIOSFODNN7EX... cut"},
	keep: []string{"ASIAN markets", "AKIAlowercase0123456"},
}, {
	name: "slack_token",
	lits: []string{"xox"},
	re:   regexp.MustCompile(`\bxox[baprs]-([A-Za-z0-9-]{10,})`),
	mask: []string{"xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"},
	keep: []string{"xoxo-hugs-and-kisses", "xoxb-short"},
}, {
	name: "slack_webhook",
	lits: []string{"hooks.slack.com"},
	re:   regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9/_-]{8,})`),
	mask: []string{"https://hooks.slack.com/services/T00000000/B00000000/XXXXXXXXXXXXXXXXXXXXXXXX"},
	keep: []string{"post to https://hooks.slack.com/ via an incoming webhook"},
}, {
	// The address of a chat webhook of Gitea's hook types holds its
	// credential (a repository's hooks list it in config.url): a Discord
	// webhook's token, a Telegram bot token, a Feishu (Lark), WeChat Work or
	// Teams hook key; and, at an address of its own host, a Mattermost hook's
	// id or a Rocket.Chat hook's token, which take a slack hook's payload.
	name: "chat_webhook",
	lits: []string{"discord.com/api/", "discordapp.com/api/", "api.telegram.org/bot", "open-apis/bot/v2/hook/", "qyapi.weixin.qq.com/", "webhook.office.com/", "/hooks/"},
	re: regexp.MustCompile(`discord(?:app)?\.com/api/(?:v[0-9]+/)?webhooks/[0-9]+/([A-Za-z0-9_-]{20,})|api\.telegram\.org/bot([0-9]+:[A-Za-z0-9_-]{30,})|` +
		`open-apis/bot/v2/hook/([A-Za-z0-9-]{16,})|qyapi\.weixin\.qq\.com/cgi-bin/webhook/send\?key=([A-Za-z0-9-]{16,})|webhook\.office\.com/webhookb2/([A-Za-z0-9@/_-]{20,})|` +
		`/hooks/(?:([a-z0-9]{26})|[A-Za-z0-9]{17}/([A-Za-z0-9]{24,}))\b`),
	mask: []string{
		"https://discord.com/api/webhooks/1234567890123456789/Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB-AuIoPxVnMlKjHgFdSa_QwErTyUiOp1234567",
		"https://api.telegram.org/bot7012345678:AAHd9sKq3LmN8pR2tV5wX7yZ1bC4eF6gH0j/sendMessage?chat_id=-100123",
		"https://open.feishu.cn/open-apis/bot/v2/hook/5f0c7a2e-8b1d-4c3f-9e6a-2d7b1c0e9f84",
		"https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=693a91f6-7b2c-4bc4-97a0-0ec2d1fa5aaa",
		"https://contoso.webhook.office.com/webhookb2/7b3c1d2e-0f4a-4b5c-8d6e-1f2a3b4c5d6e@9c8b7a6f-5e4d-4c3b-2a1f-0e9d8c7b6a5f/IncomingWebhook/4f1e2d3c4b5a69788796a5b4c3d2e1f0/6e5d4c3b",
		"https://chat.example.com/hooks/bywsw8zt5jgpte3nm65qjiru6h",
		"https://rocket.example.com/hooks/5c7hHjLfdyiSRSKXZ/vC2GLQQ8ixg6cDvDe4D3ChmsJ5zZ7dhGfmEqtW8GKaPEzNDt",
	},
	keep: []string{"see https://discord.com/api/webhooks for the docs", "https://api.telegram.org/bot<token>/getMe", "https://qyapi.weixin.qq.com/cgi-bin/webhook/send?key=KEY",
		"/alice/demo/settings/hooks/3", "https://api.github.com/repos/o/r/hooks/12345678", ".git/hooks/pre-commit.sample"},
}, {
	// An address signed in its query is its credential: a Power Automate
	// or Logic Apps workflow's (a Teams channel's webhook since Microsoft
	// retired the webhook.office.com connectors), an Azure SAS link's, and
	// Gitea's link to an artifact (routers/api/v1/repo/action.go, ?sig=).
	name: "url_signature",
	lits: []string{"sig="},
	re:   regexp.MustCompile(`\bsig=([A-Za-z0-9%_+/=-]{16,})`),
	mask: []string{
		"https://prod-27.westeurope.logic.azure.com:443/workflows/8f4c2a1b/triggers/manual/paths/invoke?api-version=2016-06-01&sv=1.0&sig=Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB",
		"https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&sp=r&sig=r2d2C3poLukeLeia%2BHanSolo0123%3D",
		"/api/v1/repos/o/r/actions/artifacts/3/zip/raw?sig=0bWm3rWw8EnV3lcVd8yJvYxOZB4nUUg2kPDT7aCN0dc&expires=1796428800",
	},
	keep: []string{"sig=short", "design=the-flat-and-simple-layout", "see the sig= parameter"},
}, {
	name: "stripe",
	lits: []string{"sk_live_", "rk_live_", "sk_test_", "rk_test_"},
	re:   regexp.MustCompile(`\b[rs]k_(?:live|test)_([A-Za-z0-9]{10,})`),
	mask: []string{"sk_live_4eC39HqLyjWDarjtT1zdp7dc", "rk_test_51H8abcdefghijk"},
	keep: []string{"pk_live_51H8abcdefghijklmnop", "sk_live_short"},
}, {
	name: "google_api_key",
	lits: []string{"AIza"},
	re:   regexp.MustCompile(`\bAIza(?:([0-9A-Za-z_-]{35})|([0-9A-Za-z_-]{8,34})(?:…|\.\.\.))`),
	mask: []string{"key=AIzaSyA-1234567890abcdefghijklmnopqrstu"},
	keep: []string{"AIza is too short"},
}, {
	name: "anthropic",
	lits: []string{"sk-ant-"},
	re:   regexp.MustCompile(`\bsk-ant-(?:([A-Za-z0-9_-]{20,})|([A-Za-z0-9_-]{8,})(?:…|\.\.\.))`),
	mask: []string{"sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789_-ABCDEFG", "sk-ant-api03-abcdefgh…"},
	keep: []string{"sk-ant-short"},
}, {
	// Legacy keys are sk- and alphanumerics; project, service account and
	// admin keys add a type and use - and _ as well. An sk-ant- key is not
	// matched: it has a hyphen within its first 20 characters.
	name: "openai",
	lits: []string{"sk-"},
	re:   regexp.MustCompile(`\bsk-(?:((?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}|[A-Za-z0-9]{20}[A-Za-z0-9_-]*)|((?:(?:proj|svcacct|admin)-)?[A-Za-z0-9]{8,}[A-Za-z0-9_-]*)(?:…|\.\.\.))`),
	mask: []string{
		"OPENAI_KEY sk-abcdefghij0123456789ABCDEFGHIJ0123456789abcdefgh",
		"sk-proj-abcDEF123_ghiJKL456-mnoPQR789stu",
	},
	keep: []string{"risk-assessment-of-the-whole-framework", "sk-learn is a library", "risk-assessment-of-the-whole…"},
}, {
	// A PyPI token is a macaroon, base64 from its AgE (its first bytes name
	// the index: pypi.org, test.pypi.org); an npm token is 36 alphanumerics.
	name: "pypi",
	lits: []string{"pypi-AgE"},
	re:   regexp.MustCompile(`\bpypi-(AgE[A-Za-z0-9_-]{50,})`),
	mask: []string{"twine upload -p pypi-AgEIcHlwaS5vcmcCJGNkZjM1ZTg0LTJmNTgtNDY0Mi1hMmZiLWNmNWFlYjI4NzNhZQACKlsz"},
	keep: []string{"pypi-AgEIcHlwaS5vcmc is the prefix", "pip install pypi-simple"},
}, {
	name: "npm",
	lits: []string{"npm_"},
	re:   regexp.MustCompile(`\bnpm_([A-Za-z0-9]{36})\b`),
	mask: []string{"//registry.npmjs.org/:_authToken npm_R2d2C3poLukeLeiaHanSolo0123456789AbC"},
	keep: []string{"echo $npm_package_version", "npm_config_registry_and_the_cache_dir"},
}, {
	// An Azure storage account's key and a Service Bus, Event Hubs or IoT
	// Hub shared access key, in a connection string.
	name: "azure_key",
	lits: []string{"AccountKey=", "SharedAccessKey="},
	re:   regexp.MustCompile(`(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{20,}={0,2})`),
	mask: []string{"AccountName=ci;AccountKey=R2d2C3poLukeLeiaHanSolo0123456789Ab+/==;EndpointSuffix=core.windows.net", "SharedAccessKeyName=Root;SharedAccessKey=R2d2C3poLukeLeiaHanSolo01="},
	keep: []string{"AccountKey=<key>", "SharedAccessKeyName=RootManageSharedAccessKey"},
}, {
	// user:password in base64 (or so read): a Docker config.json's auth, an .npmrc's _auth.
	name: "basic_auth",
	lits: []string{`"auth"`, "_auth="},
	re:   regexp.MustCompile(`(?:"auth"[ \t]*:[ \t]*"|_auth=)(?:([A-Za-z0-9+/]{12,}={0,2})(?:["\s]|$)|[^":\s]*:([^"\s/][^"\s]*))`),
	mask: []string{`{"auths": {"r.example.com": {"auth": "ZGVwbG95OlRyMHViNGRvcg=="}}}`, "//npm.example.com/:_auth=Y2k6VHIwdWI0ZG9y\n", `"auth": "ci:Tr0ub4dor"`},
	keep: []string{`{"auth": "required"}`, `"auth": "oauth2"`, `{"auth": "https://sso.example.com/auth"}`, "_authToken=${NPM_TOKEN}", `self._auth = authenticator`},
}, {
	// Tokens with a prefix of their own: DigitalOcean's, HashiCorp Vault's,
	// Docker Hub's, Hugging Face's, SendGrid's, Grafana's; an age secret key.
	name: "service_token",
	lits: []string{"dop_v1_", "doo_v1_", "dor_v1_", "hvs.", "hvb.", "hvr.", "dckr_pat_", "dckr_oat_", "hf_", "SG.", "glsa_", "glc_", "AGE-SECRET-KEY-1"},
	re: regexp.MustCompile(`\b(?:do[opr]_v1_([a-f0-9]{64})\b|hv[sbr]\.([A-Za-z0-9_-]{24,})|dckr_[po]at_([A-Za-z0-9_-]{20,})|hf_([A-Za-z]{34})\b|SG\.([A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43})|` +
		`glsa_([A-Za-z0-9]{32}_[A-Fa-f0-9]{8})|glc_([A-Za-z0-9+/]{32,}={0,2})|AGE-SECRET-KEY-1([02-9AC-HJ-NP-Z]{58}))`),
	mask: []string{
		"doctl auth init -t dop_v1_0a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f9",
		"VAULT_TOKEN hvs.CAESIR2d2C3poLukeLeiaHanSolo0123456789AbCdEfGhIj", "docker login -p dckr_pat_R2d2C3poLukeLeiaHanSolo0-_",
		"HF hf_RdCpoLukeLeiaHanSoloAbCdEfGhIjKlMn", "SG.R2d2C3poLukeLeiaHanSol.R2d2C3poLukeLeiaHanSolo0123456789AbCdEfGhIj",
		"GF_TOKEN glsa_R2d2C3poLukeLeiaHanSolo0123456Ab_0a1b2c3d", "AGE-SECRET-KEY-1YKLE55JPJRTDHHZ56VU4WQ0YJ9PGA7TM36CXAJ4D0WAQU5MWXQ0RCJDYQ4",
	},
	keep: []string{"hvs.short", "hf_hub_download(repo_id)", "self.hf_model_name_or_path_for_the_tokenizer", "SG.1 and SG.2 sections", "dop_v1_ prefix", "glc_ is Grafana Cloud's", "AGE-SECRET-KEY-1 starts it"},
}, {
	// curl -u user:password (or --user), in a script or a command pasted.
	name:  "curl_user",
	words: []string{"curl"},
	needs: ":",
	re:    regexp.MustCompile(`(?i)\bcurl\b[^\n|;&]*?[ \t](?:-u|--user)(?:[ \t]+|=)?['"]?[^\s:'"$]*:([^\s'"$][^\s'"]*)`),
	mask:  []string{"curl -u deploy:Tr0ub4dor-and-3 -T app.tgz https://nexus.example.com/", `curl -s --user "ci:hunter2hunter2" https://x`},
	keep:  []string{`curl -u "$USER:$PASS" https://x`, "curl -u alice https://x", "curl --user-agent a:b https://x", "curl https://x:8080/ --upload-file a:b", `curl -u ci:${{ secrets.TOKEN }}`},
}, {
	// A command's flag with its value after a blank, as Gitea's own tools
	// take them: act_runner register --token (a runner token, 40
	// alphanumerics: models/actions/runner_token.go), tea login add --token,
	// gitea admin user create --password. Placeholders and variables are
	// left ($TOKEN, <token>, ${{ ... }}); flag=value is generic_secret's.
	name: "cli_flag",
	lits: []string{"--token", "--password", "--passwd", "--secret", "--api-key", "--access-token", "--auth-token", "--client-secret"},
	re: regexp.MustCompile(`--(?:access-|auth-|client-)?(?:token|passw(?:or)?d|secret|api-key)[ \t]+` +
		`(?:"([^"$<\r\n][^"\r\n]{7,})"|'([^'$<\r\n][^'\r\n]{7,})'|([^\s"'` + "`" + `$<>(){}\[\]|\\-][^\s"'` + "`" + `]{7,}))`),
	mask: []string{"./act_runner register --instance https://g --token NFhKp2x7Qw9LmZr4Tb8Yc3Vd6Hs1Ja5Ge0Fu7Ki --name r1",
		"tea login add --url https://g --token 0123456789abcdef0123456789abcdef01234567", `gitea admin user create --username ci --password "correct horse"`},
	keep: []string{"--token $GITEA_TOKEN", "--token <token> --password '${{ secrets.PASSWORD }}'", "docker login --password-stdin", "--token -v", "--secret short"},
}, {
	name: "jwt",
	lits: []string{"eyJ"},
	re:   regexp.MustCompile(`\beyJ([A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]*)`),
	mask: []string{"id_token eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
	keep: []string{"header eyJhbGciOiJIUzI1NiJ9 alone", "they say eyJ"},
}, {
	// A key block without its END line (a truncated body) is masked to the end.
	name:      "private_key",
	lits:      []string{"-----BEGIN"},
	multiline: true,
	re:        regexp.MustCompile(`-----BEGIN[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----((?s:.*?)-----END[A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|(?s:.*))`),
	mask: []string{
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1234abcd\n-----END RSA PRIVATE KEY-----\nafter",
		"-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXktdjEAAAA\\n-----END OPENSSH PRIVATE KEY-----",
		"-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC",
	},
	keep: []string{"-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0B\n-----END PUBLIC KEY-----", "never commit a PRIVATE KEY"},
}, {
	name:   "authorization_header",
	words:  []string{"authorization"},
	assign: true,
	re:     regexp.MustCompile(`(?i)\bauthorization(?:\\*["'])?[ \t]*[:=][ \t]*(?:\\*["'])?(?:token|bearer|basic)[ \t]+([^\s"'` + "`" + `,;\\]{8,})`),
	mask: []string{
		"Authorization: token 0123456789abcdef0123456789abcdef01234567",
		`{"Message":"{\"Authorization\": \"Basic YWxpY2U6czNjcjN0\"}"}`,
		`curl -H "authorization: Bearer 0123456789abcdef0123456789abcdef01234567" https://x`,
		`{"Authorization": "Basic YWxpY2U6czNjcjN0"}`,
	},
	keep: []string{"Authorization header is missing", "authorization: pending review", `req.Header.Set("Authorization", "token "+tok)`},
}, {
	name:  "bearer",
	words: []string{"bearer"},
	re:    regexp.MustCompile(`(?i)\bbearer[ \t]+([A-Za-z0-9._~+/-]{16,}=*)`),
	mask:  []string{"Bearer abcDEF123456ghiJKL789", "bearer 0123456789abcdef0123456789abcdef01234567"},
	keep:  []string{"the bearer of this letter", "Bearer authentication is supported", "Bearer <token>"},
}, {
	name:  "url_credentials",
	lits:  []string{"://"},
	needs: "@",
	// A token as the user name too, with an empty or any password: Gitea
	// takes the user name for the token where the password is empty or
	// x-oauth-basic (services/auth/basic.go).
	re: regexp.MustCompile(`://([0-9a-fA-F]{40}(?::[^\s/?#@]*)?)@|://[^\s/?#@:]*:([^\s/?#@]+)@`),
	mask: []string{
		"remote https://oauth2:0123456789abcdef0123456789abcdef01234567@gitea.example.com/o/r.git",
		"git clone https://alice:hunter2@example.com/r.git",
		"url = https://0123456789abcdef0123456789abcdef01234567@gitea.example.com/o/sub.git",
		"git clone https://0123456789abcdef0123456789abcdef01234567:x-oauth-basic@gitea.example.com/o/r.git",
	},
	keep: []string{"git@gitea.example.com:owner/repo.git", "https://alice@example.com/r", "ssh://git@host:2222/o/r.git", "mail bob@example.com"},
}, {
	// A .netrc file (curl's, and git's for https remotes): machine HOST
	// login USER password SECRET, on one line or several.
	name:      "netrc",
	words:     []string{"machine"},
	multiline: true,
	re:        regexp.MustCompile(`(?i)\bmachine[ \t]+\S+(?:\s+(?:login|account)[ \t]+\S+)+\s+password[ \t]+(\S+)`),
	mask:      []string{"machine gitea.example.com login alice password 0123456789abcdef0123456789abcdef01234567", "machine api.example.com\n  login bob\n  password hunter2hunter2"},
	keep:      []string{"the machine password is in the vault", "machine learning password managers", "machine x login y"},
}, {
	// key = value, key: value, "key": "value", key := value, key => value,
	// where the key contains one of the words; values under 8 characters
	// and code-like values (calls, templates) are left alone. Quotes may be
	// escaped, as in JSON inside a JSON string (an activity's content). So
	// are, where the word ends the name, an XML element (<password>s</password>,
	// as Maven's settings.xml writes it) and the value after the name (a
	// Kubernetes env's name: and value: lines, an ECS task's {"name": ...,
	// "value": ...}, NuGet.config's and web.config's <add key="..." value="..."/>).
	name:   "generic_secret",
	words:  []string{"api_key", "apikey", "api-key", "token", "secret", "passw"},
	assign: true,
	re: regexp.MustCompile(`(?i)(?:api[_-]?key|token|secret|passw(?:or)?d)(?:>([^\s"'` + "`" + `<>(){}\[\]]{8,})</|(?:[a-z0-9_.-]*(?:\\*["'])?\]?[ \t]*` +
		`(?::=|=>|[:=])|(?:\\*["'])?[ \t]*,?(?:\s|\n[-+])*(?:\\*["'])?value(?:\\*["'])?[ \t]*[:=])[ \t]*` +
		`(?:"((?:[^"\\\r\n]|\\.){8,})|\\+"((?:[^"\\\r\n]|\\[^"\r\n]){8,}?)\\+"|'([^'\r\n]{8,})|([^\s"'` + "`" + `,;&<>(){}\[\]]{8,}))` + secretValueEnd + `)`),
	mask: []string{
		"api_key=abcd1234efgh5678",
		`{"password": "correct horse battery"}`,
		`{"Message":"db {\"password\": \"correct horse battery\"} password=\"staple pony\"\n"}`,
		"token: 0123456789abcdef0123456789abcdef01234567",
		"GET /api/v1/user?access_token=0123456789abcdef0123456789abcdef01234567&page=2",
		"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
		`password := "hunter2hunter2"`,
		"ApiKey => 'abcdefgh12345'", "$db['default']['password'] = 'Tr0ub4dor-and-3';", `os.environ["API_TOKEN"] = "Tr0ub4dor-and-3"`,
		"<server><password>Tr0ub4dor-and-3</password></server>", "env:\n- name: DB_PASSWORD\n  value: Tr0ub4dor-and-3",
		`{"name": "API_TOKEN", "value": "Tr0ub4dor-and-3"}`, `<add key="ClearTextPassword" value="Tr0ub4dor-and-3" />`,
	},
	keep: []string{
		"the token expired", "password reset", "Token: expired", "secret santa",
		"token := r.Header.Get(\"Authorization\")", "token: ${{ secrets.GITEA_TOKEN }}",
		`{\"token\": \"short\"}`, `log(\"token=%s\", tok)`,
		"commit 0123456789abcdef0123456789abcdef01234567",
		"sha: 0123456789abcdef0123456789abcdef01234567",
		"Merge commit 'fedcba9876543210fedcba9876543210fedcba98' into main",
		"- name: DB_PASSWORD\n  valueFrom:\n    secretKeyRef: {name: db, key: password}", "<password>${env.MAVEN_PASSWORD}</password>",
		"let t: Vec<Token>::with_capacity(8)", `params["token"] = request.args.get("t")`, `if cfg["password"] == "Tr0ub4dor-and-3":`, "login <token> argument_of_the_command", "the token's value: see below",
		`<input name="token_permission_mode" value="restricted">`, "<oauth2_token_url>https://example.com/token</oauth2_token_url>",
	},
}}

// secretTrigger is a literal or word that a match of a rule starts with. It
// is found by its rarest pair of adjacent bytes, at offset off.
type secretTrigger struct {
	lit      string
	off      int
	fold     bool // lit is a word: compare ignoring ASCII case
	rule     int  // index in secretRules
	r        *secretRule
	re       *regexp.Regexp // the rule's regexp, anchored at the start
	boundary bool           // the regexp starts with \b
}

// secretTriggers lists the triggers of secretRules by the first byte of their
// anchor pair; secretPairs has a bit for each anchor pair. Words are listed
// under both cases.
var secretTriggers, secretPairs = buildTriggers()

// buildTriggers returns secretTriggers and secretPairs.
func buildTriggers() (*[256][]secretTrigger, *[1 << 16 / 64]uint64) {
	if len(secretRules) > 64 {
		panic("secretRules: more than 64 rules") // maskString keeps a bit per rule
	}
	var t [256][]secretTrigger
	var pairs [1 << 16 / 64]uint64
	for i, r := range secretRules {
		src := r.re.String()
		re := regexp.MustCompile("^(?:" + src + ")")
		boundary := strings.HasPrefix(strings.TrimPrefix(src, "(?i)"), `\b`)
		add := func(lit string, fold bool) {
			rarity := func(j int) int { return strings.IndexByte(byteOrder, lit[j]) + strings.IndexByte(byteOrder, lit[j+1]) }
			off := 0
			for j := range len(lit) - 1 {
				if rarity(j) > rarity(off) {
					off = j
				}
			}
			tr := secretTrigger{lit, off, fold, i, &secretRules[i], re, boundary}
			for _, a := range foldCases(lit[off], fold) {
				t[a] = append(t[a], tr)
				for _, b := range foldCases(lit[off+1], fold) {
					p := uint(a)<<8 | uint(b)
					pairs[p/64] |= 1 << (p % 64)
				}
			}
		}
		for _, l := range r.lits {
			add(l, false)
		}
		for _, w := range r.words {
			add(w, true)
		}
	}
	return &t, &pairs
}

// foldCases returns c and, if fold is set and c is a letter, its other case.
func foldCases(c byte, fold bool) []byte {
	if u := c &^ 0x20; fold && u >= 'A' && u <= 'Z' {
		return []byte{u, u | 0x20}
	}
	return []byte{c}
}

// byteOrder lists bytes from commonest to rarest in Gitea's JSON text:
// separators, hex digits (SHAs), timestamp letters, then letters by English
// frequency, mostly lower case first; bytes not listed count as commonest.
// A pair's rarity is the sum of its bytes' places: it only affects speed,
// never what is found.
const byteOrder = " -/.:0123456789abcdefTZtoinsrhlumpgwyETAOINSRHLDCUMFPGWYBvkxjqzVKXJQ_"

// isWordByte reports whether c is an ASCII letter, digit or underscore, as
// \b in a regexp understands words.
func isWordByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'z'
}

// secretHit is an occurrence of a trigger in a string.
type secretHit struct {
	start int
	t     *secretTrigger
}

// secretHits appends the occurrences of triggers in s to hits, found in one
// pass over its byte pairs.
func secretHits(hits []secretHit, s string) []secretHit {
	for i := 0; i+1 < len(s); i++ {
		if p := uint(s[i])<<8 | uint(s[i+1]); secretPairs[p/64]&(1<<(p%64)) == 0 {
			continue
		}
		ts := secretTriggers[s[i]]
		for j := range ts {
			t := &ts[j]
			start := i - t.off
			if start < 0 || start+len(t.lit) > len(s) || s[start]|0x20 != t.lit[0]|0x20 {
				continue
			}
			if w := s[start : start+len(t.lit)]; w == t.lit || t.fold && strings.EqualFold(w, t.lit) { // equal lengths: only ASCII folds
				hits = append(hits, secretHit{start, t})
			}
		}
	}
	return hits
}

// assignAt returns where s[i:] is, after name bytes (ASCII letters,
// digits, '_', '.', '-', and any non-ASCII byte, which a case-insensitive
// class may fold), at '>' (an XML element's), or after an optional quote
// (escaped or not), a subscript's ']' and blanks at ':' or '=', or, after an optional comma,
// white space and quote, at the word value (a name/value pair, perhaps on
// the next line, after a diff's '+' or '-'); -1 for none. It rules out most words without running the
// regexp of an assign rule.
func assignAt(s string, i int) int {
	for i < len(s) && (isWordByte(s[i]) || s[i] == '.' || s[i] == '-' || s[i] >= 0x80) {
		i++
	}
	skip := func(chars string) {
		for i < len(s) && strings.IndexByte(chars, s[i]) >= 0 {
			i++
		}
	}
	if i < len(s) && s[i] == '>' {
		return i
	}
	skip("\\") // an escaped quote
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	if skip("] \t"); i < len(s) && (s[i] == ':' || s[i] == '=') { // a subscript's ] too: $db['password'] = '...'
		return i
	}
	if skip(", \t\r\n\f\\\"'+-"); len(s)-i >= 5 && strings.EqualFold(s[i:i+5], "value") {
		return i
	}
	return -1
}

// indexAnyFrom returns the index of the first byte of chars in s[i:], or len(s).
func indexAnyFrom(s string, i int, chars string) int {
	if j := strings.IndexAny(s[i:], chars); j >= 0 {
		return i + j
	}
	return len(s)
}

// groupSpan returns the span of the first capturing group that took part in
// the match m, as returned by FindStringSubmatchIndex.
func groupSpan(m []int) (int, int) {
	for i := 2; i < len(m); i += 2 {
		if m[i] >= 0 {
			return m[i], m[i+1]
		}
	}
	return m[0], m[1] // unreachable for the rules, whose groups are not optional
}

// maskString replaces the secret of every match of secretRules in s with
// maskedMarker, keeping the rest of the match: "ghp_0123…" becomes
// "ghp_[MASKED]" and "api_key=abcd…" becomes "api_key=[MASKED]". The matches
// of a rule are those of FindAll on s; overlapping secrets of different rules
// become one marker. It returns the masked text and the sorted names of the
// rules that matched.
func maskString(s string) (string, []string) {
	var buf [8]secretHit
	hits := secretHits(buf[:0], s)
	if len(hits) == 0 {
		return s, nil
	}
	slices.SortStableFunc(hits, func(a, b secretHit) int { return a.start - b.start })
	var next [64]int // per rule, where its last match ended
	var need [64]int // per rule, 1 + where the next byte of its needs was seen
	var found uint64 // per rule, whether it matched
	var spans [][2]int
	eol := -1 // end of the line of the last hit
	for _, h := range hits {
		t := h.t
		if h.start < next[t.rule] || t.boundary && h.start > 0 && isWordByte(s[h.start-1]) {
			continue
		}
		if eol < h.start {
			eol = indexAnyFrom(s, h.start, "\n")
		}
		end := len(s)
		if !t.r.multiline {
			end = eol
		}
		if t.r.needs != "" {
			if need[t.rule] <= h.start { // not looked for since this hit
				need[t.rule] = 1 + indexAnyFrom(s[:end], h.start, t.r.needs)
			}
			if need[t.rule] > end {
				continue
			}
		}
		if t.r.assign {
			at := assignAt(s, h.start+len(t.lit))
			if at < 0 {
				continue
			}
			end = max(end, indexAnyFrom(s, at, "\n")) // a value on a line of its own
		}
		m := t.re.FindStringSubmatchIndex(s[h.start:end])
		if m == nil {
			continue
		}
		gs, ge := groupSpan(m)
		spans = append(spans, [2]int{h.start + gs, h.start + ge})
		next[t.rule] = h.start + m[1]
		found |= 1 << t.rule
	}
	if spans == nil {
		return s, nil
	}
	var names []string
	for i, r := range secretRules {
		if found&(1<<i) != 0 {
			names = append(names, r.name)
		}
	}
	slices.Sort(names)
	return replaceSpans(s, spans, maskedMarker), names
}

// scrubString applies stripHidden, r.redact and, if mask is set, maskString
// to s in that order, so that a hidden character cannot split a secret from
// either layer. It returns the text, the sorted names of the masking rules
// that matched and the number of hidden characters removed.
//
// JSON inside a JSON string (an activity's content) keeps, once decoded, its
// hidden characters as literal escapes (\u0001), and so does JSON returned
// as text: where removing them (stripEscapedHidden) from the scrubbed text
// shows another secret, they are removed too and counted as hidden. The
// secrets found before stay masked: a removal may join one to the next word,
// out of its pattern's reach.
//
// A text may also be read another way (textViews): where that reading shows
// another secret, the text is delivered so read, its hidden characters
// removed.
func scrubString(s string, r *redactor, mask bool) (string, []string, int) {
	s, hidden := stripHidden(s)
	s, rules := redactMask(s, r, mask)
	reads := readsOf(s)             // the readings that may change s
	take := func(d string, n int) { // d, another reading of s with n hidden characters removed, where it shows a secret
		if out, more := redactMask(d, r, mask); out != d {
			s, rules, hidden = out, slices.Compact(slices.Sorted(slices.Values(append(rules, more...)))), hidden+n
			reads = readsOf(s)
		}
	}
	if e, n := stripEscapedHidden(s); n > 0 {
		take(e, n)
	}
	for i := range textViews { // each on what the last left: a secret in one may hide another in the next
		if reads&(1<<i) == 0 {
			continue
		}
		if d := textViews[i].read(s); d != s {
			take(stripHidden(d))
		}
	}
	return s, rules, hidden
}

// secretNameEnds are the words that end a name saying its value is a
// secret, as generic_secret reads a key.
var secretNameEnds = []string{"api_key", "apikey", "api-key", "token", "secret", "password", "passwd"}

// namedSecret reports whether s, a JSON member's value whose name Gitea took
// from stored text (an issue form's attributes, an Actions variable's name),
// is a secret: the name ends with one of secretNameEnds (api_key,
// DEPLOY_TOKEN; not token_last_eight) and generic_secret masks name: "s".
func namedSecret(name, s string) bool {
	if !slices.ContainsFunc(secretNameEnds, func(w string) bool {
		return len(name) >= len(w) && strings.EqualFold(name[len(name)-len(w):], w)
	}) {
		return false
	}
	_, rules := maskString(name + ": " + string(appendString(nil, s)))
	return slices.Contains(rules, "generic_secret")
}

// redactMask applies r.redact and, if mask is set, maskString to s, whose
// diffstat names cut at their start are first given back whole where that
// shows a secret (wholeStatNames).
func redactMask(s string, r *redactor, mask bool) (string, []string) {
	s = r.redact(wholeStatNames(s, r, mask))
	if !mask {
		return s, nil
	}
	return maskString(s)
}
