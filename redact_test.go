package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// decodeNumbers decodes s as the result pipeline does (UseNumber).
func decodeNumbers(tb testing.TB, s string) any {
	tb.Helper()
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		tb.Fatalf("decode %q: %v", s, err)
	}
	return v
}

func TestSecretRules(t *testing.T) {
	t.Parallel()
	lower := regexp.MustCompile(`^[a-z_-]{2,}$`)
	seen := map[string]bool{}
	for _, r := range secretRules {
		if seen[r.name] || r.re.NumSubexp() == 0 || len(r.mask) == 0 || len(r.keep) == 0 || len(r.lits)+len(r.words) == 0 {
			t.Errorf("rule %s: want a unique name, a capturing group, literals or words, and mask and keep examples", r.name)
		}
		seen[r.name] = true
		for _, l := range r.lits {
			if len(l) < 2 {
				t.Errorf("rule %s: literal %q: want at least 2 bytes", r.name, l)
			}
		}
		for _, w := range r.words {
			if !lower.MatchString(w) {
				t.Errorf("rule %s: word %q: want at least 2 lower-case bytes", r.name, w)
			}
		}
		for _, ex := range r.mask {
			m := r.re.FindStringSubmatchIndex(ex)
			if m == nil {
				t.Errorf("rule %s: mask example %q: no match", r.name, ex)
				continue
			}
			gs, ge := groupSpan(m)
			tail := ex[(gs+ge)/2 : ge]
			got, names := maskString(ex)
			if !slices.Contains(names, r.name) || strings.Contains(got, tail) {
				t.Errorf("rule %s: maskString(%q) = %q, %q: want masked by %s, without %q", r.name, ex, got, names, r.name, tail)
			}
		}
		for _, ex := range r.keep {
			got, names := maskString(ex)
			if diff := cmp.Diff(ex, got); diff != "" || names != nil {
				t.Errorf("rule %s: keep example: rules %q, mismatch (-want +got):\n%s", r.name, names, diff)
			}
		}
	}
}

// referenceMask is maskString done plainly: every rule's FindAll on all of s.
func referenceMask(s string) (string, []string) {
	var spans [][2]int
	var names []string
	for _, r := range secretRules {
		ms := r.re.FindAllStringSubmatchIndex(s, -1)
		for _, m := range ms {
			gs, ge := groupSpan(m)
			spans = append(spans, [2]int{gs, ge})
		}
		if ms != nil {
			names = append(names, r.name)
		}
	}
	if spans == nil {
		return s, nil
	}
	slices.Sort(names)
	return replaceSpans(s, spans, maskedMarker), names
}

func TestMaskString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		names    []string
	}{
		{"", "", nil},
		{"plain text with a “quote” and 日本語", "plain text with a “quote” and 日本語", nil},
		{"GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJklmnop done", "GITHUB_TOKEN=[MASKED] done", []string{"generic_secret", "github"}},
		{"a ghp_0123456789abcdefghijABCDEFGHIJklmnop b AKIAIOSFODNN7EXAMPLE c", "a ghp_[MASKED] b AKIA[MASKED] c", []string{"aws_access_key_id", "github"}},
		{"Authorization: Bearer abcdefghijklmnop0123456789", "Authorization: Bearer [MASKED]", []string{"authorization_header", "bearer"}},
		{"TOKEN: abcdefgh12345678", "TOKEN: [MASKED]", []string{"generic_secret"}},
		{"password=abcdefgh\r\nx password=ijklmnop", "password=[MASKED]\r\nx password=[MASKED]", []string{"generic_secret"}},
		{"-----BEGIN EC PRIVATE KEY-----\ntoken=abcdefghijk\n-----END EC PRIVATE KEY----- token=abcdefghijk",
			"-----BEGIN EC PRIVATE KEY-----[MASKED] token=[MASKED]", []string{"generic_secret", "private_key"}},
		{"ghp_0123456789abcdefghijABCDEFGHIJklmnopghp_0123456789abcdefghijABCDEFGHIJklmnop", "ghp_[MASKED]", []string{"github"}},
		{"Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abc", "Authorization: Bearer [MASKED]",
			[]string{"authorization_header", "bearer", "jwt"}},
		{"# ~/.netrc\nmachine gitea.example.com\n\tlogin alice\n\tpassword 0123456789abcdef0123456789abcdef01234567\nmachine b login c password d",
			"# ~/.netrc\nmachine gitea.example.com\n\tlogin alice\n\tpassword [MASKED]\nmachine b login c password [MASKED]", []string{"netrc"}},
		// A Gitea token as a URL's user name with x-oauth-basic (or any password) is masked with it.
		{"git clone https://0123456789abcdef0123456789abcdef01234567:x-oauth-basic@gitea.example.com/o/r.git https://0123456789abcdef0123456789abcdef0123456:p@h",
			"git clone https://[MASKED]@gitea.example.com/o/r.git https://0123456789abcdef0123456789abcdef0123456:[MASKED]@h", []string{"url_credentials"}},
		{"xtoken=abcdefghij, ASIAY34FZKBOKMUTVV7Ax AKIAIOSFODNN7EXAMPLE", "xtoken=[MASKED], ASIAY34FZKBOKMUTVV7Ax AKIA[MASKED]",
			[]string{"aws_access_key_id", "generic_secret"}},
	} {
		if want, names := referenceMask(tc.in); want != tc.want || !slices.Equal(names, tc.names) {
			t.Errorf("referenceMask(%q) = %q, %q: the case disagrees with the rules", tc.in, want, names)
		}
		got, names := maskString(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("maskString(%q): mismatch (-want +got):\n%s", tc.in, diff)
		}
		if diff := cmp.Diff(tc.names, names); diff != "" {
			t.Errorf("maskString(%q) names: mismatch (-want +got):\n%s", tc.in, diff)
		}
	}
}

func TestScrubString(t *testing.T) {
	t.Parallel()
	r := newRedactor("tok1", `pa"ss<w&rd`)
	for _, tc := range []struct {
		in     string
		mask   bool
		want   string
		rules  []string
		hidden int
	}{
		{"x ghp_\u200b0123456789abcdefghijABCDEFGHIJklmnop tok\u2066\u20691", true, "x ghp_[MASKED] [REDACTED]", []string{"github"}, 3},
		{"x ghp_\u200b0123456789abcdefghijABCDEFGHIJklmnop tok\u2066\u20691", false, "x ghp_0123456789abcdefghijABCDEFGHIJklmnop [REDACTED]", nil, 3},
		{"api_key=tok1tok1tok1", true, "api_key=[REDACTED]", nil, 0}, // redaction comes first; a marker is no value to mask
		// Literal JSON escapes of hidden characters (JSON inside JSON) that split a secret are removed; others are kept.
		{`T=to\u0001k1 ghp_0123456789\\u0000abcdefghijABCDEFGHIJklmnop`, true, "T=[REDACTED] ghp_[MASKED]", []string{"github"}, 2},
		{`ghp_0123456789\udb40\udc49abcdefghijABCDEFGHIJklmnop`, true, "ghp_[MASKED]", []string{"github"}, 1},
		// A secret masked before the escapes go stays masked, though their removal joins it to the next word.
		{`AKIAIOSFODNN7EXAMPLE\u200bX and ghp_0123456789\u0000abcdefghijABCDEFGHIJklmnop`, true, "AKIA[MASKED]X and ghp_[MASKED]", []string{"aws_access_key_id", "github"}, 2},
		{`use "\u200b" for a zero-width space; to\u0041k1 \ud800 \\`, true, `use "\u200b" for a zero-width space; to\u0041k1 \ud800 \\`, nil, 0},
		// A reading that shows a secret is read on by the readings after it, with the bytes it gave: the URL escape
		// here is one once the JSON escapes are read.
		{`["\u0041KIAIOSFODNN7EXAMPLE","staging-password\u00253A-hunter2hunter2"]`, true, `["AKIA[MASKED]","staging-password:[MASKED]"]`, []string{"aws_access_key_id", "generic_secret"}, 0},
		// Mail headers (a .patch's subject and author) folded or in RFC 2047 encoded words are unfolded and decoded
		// where that shows a secret, their hidden characters removed; others are kept.
		{"From 1\nSubject: [PATCH] =?UTF-8?q?D=C3=A9ploiement:=20GH=3Dghp=5F0123456789abcdefghij?=\n =?UTF-8?q?ABCDEFGHIJklmnop=20to=E2=80=8Bk1?=\n\nbody",
			true, "From 1\nSubject: [PATCH] Déploiement: GH=ghp_[MASKED] [REDACTED]\n\nbody", []string{"github"}, 1},
		{"From 1\nFrom: =?ISO-8859-2?B?dG9rMSC1?= <a@example.com>\nSubject: x", false, "From 1\nFrom: [REDACTED] \xb5 <a@example.com>\nSubject: x", nil, 0},
		{"not a mail: =?UTF-8?q?GH=3Dghp=5F0123456789abcdefghijABCDEFGHIJklmnop?=", true, "not a mail: =?UTF-8?q?GH=3Dghp=5F0123456789abcdefghijABCDEFGHIJklmnop?=", nil, 0},
		{"From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Deploy with Authorization: token\n 0123456789abcdef0123456789abcdef01234567\n\n  indented\n", true,
			"From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Deploy with Authorization: token [MASKED]\n\n  indented\n", []string{"authorization_header"}, 0},
		{"Subject: a\n b\npassword:\n  hunter2hunter2", true, "Subject: a\n b\npassword:\n  hunter2hunter2", nil, 0},
		// HTML entities (a commit_ref comment's body) are decoded where that shows a secret; others are kept.
		{`<a href="/c/1">{&#34;Authorization&#34;: &#34;token 0123456789abcdef0123456789abcdef01234567&#34;} &amp;</a>`, true,
			`<a href="/c/1">{"Authorization": "token [MASKED]"} &</a>`, []string{"authorization_header"}, 0},
		{"Q&amp;A: &lt;b&gt; &#34;tok&#34;", true, "Q&amp;A: &lt;b&gt; &#34;tok&#34;", nil, 0},
		// URL escapes (a wiki page's sub_url) are decoded where that shows a secret; others are kept.
		{"staging-password%3A-hunter2hunter2%2", true, "staging-password:[MASKED]", []string{"generic_secret"}, 0},
		{"/o/r/wiki/Caf%C3%A9-100%-token%", true, "/o/r/wiki/Caf%C3%A9-100%-token%", nil, 0},
		// A hunk header's text cut to 80 bytes is read as cut; one of 79 is not.
		{"+a\n@@ -1,2 +1,3 @@ AWS_KEY_OF_THE_STAGING_DEPLOYMENT_PIPELINE_FOR_THE_NIGHTLY_BUILD_XY=AKIAIOSFODNN\n+b", true,
			"+a\n@@ -1,2 +1,3 @@ AWS_KEY_OF_THE_STAGING_DEPLOYMENT_PIPELINE_FOR_THE_NIGHTLY_BUILD_XY=AKIA[MASKED]...\n+b", []string{"aws_access_key_id"}, 0},
		{"@@ -1,2 +1,3 @@ AWS_KEY_OF_THE_STAGING_DEPLOYMENT_PIPELINE_FOR_THE_NIGHTLY_BUILD_X=AKIAIOSFODNN", true,
			"@@ -1,2 +1,3 @@ AWS_KEY_OF_THE_STAGING_DEPLOYMENT_PIPELINE_FOR_THE_NIGHTLY_BUILD_X=AKIAIOSFODNN", nil, 0},
		// JSON escapes (a push's commits in an activity's content, JSON returned as text) are decoded where that shows a
		// secret: a key after \n, \t or \u003c, a URL with escaped slashes, \u0067hp_, JSON nested twice; others are kept.
		{`[{"Sha1":"1","Message":"rotate\n\nAKIAIOSFODNN7EXAMPLE\n"}]`, true, "[{\"Sha1\":\"1\",\"Message\":\"rotate\n\nAKIA[MASKED]\n\"}]", []string{"aws_access_key_id"}, 0},
		{`["key \u003csk_live_4eC39HqLyjWDarjtT1zdp7dc\u003e"]`, true, `["key <sk_live_[MASKED]>"]`, []string{"stripe"}, 0},
		{`{"url":"https:\/\/alice:hunter2hunter@example.com\/r.git"}`, true, `{"url":"https://alice:[MASKED]@example.com/r.git"}`, []string{"url_credentials"}, 0},
		{` ["\u0067hp_0123456789abcdefghijABCDEFGHIJklmnop \\\\tAIzaSyA-1234567890abcdefghijklmnopqrstu \ud83d\ude00"]`, true, " [\"ghp_[MASKED] \tAIza[MASKED] \U0001F600\"]", []string{"github", "google_api_key"}, 0},
		{`{"m":"x pa\"ss\u003cw\u0026rd"} {\"m\":\"pa\\\"ss\\u003cw\\u0026rd\"}`, false, `{"m":"x [REDACTED]"} {"m":"[REDACTED]"}`, nil, 0},
		{`["x\nAKIAIOSF\u200bODNN7EXAMPLE"]`, true, "[\"x\nAKIA[MASKED]\"]", []string{"aws_access_key_id"}, 1},
		{`printf("x\nAKIAIOSFODNN7EXAMPLE\n")`, true, `printf("x\nAKIAIOSFODNN7EXAMPLE\n")`, nil, 0}, // not JSON text
		{`{"path":"C:\\new\\table","re":"\\d+ \\u12","v":"sk-\ud800"} \\`, true, `{"path":"C:\\new\\table","re":"\\d+ \\u12","v":"sk-\ud800"} \\`, nil, 0},
		// Unicode blanks and fullwidth forms are read as ASCII where that shows a secret; others are kept.
		{"staging password\uff1ahunter2hunter2", true, "staging password:[MASKED]", []string{"generic_secret"}, 0},
		{"curl -H 'Authorization:\u00a0token 0123456789abcdef0123456789abcdef01234567' -H 'Bearer\u202fabcDEF123456ghiJKL789'", true,
			"curl -H 'Authorization: token [MASKED]' -H 'Bearer [MASKED]'", []string{"authorization_header", "bearer"}, 0},
		{"DB_PASSWORD\u3000=\u3000correct-horse-battery ｇｈｐ＿0123456789abcdefghijABCDEFGHIJklmnop", true, "DB_PASSWORD = [MASKED] ghp_[MASKED]", []string{"generic_secret", "github"}, 0},
		{"价格：１００元\u00a0token：short", true, "价格：１００元\u00a0token：short", nil, 0},
		// A secret in one reading does not hide another in the next.
		{"From 1\nSubject: [PATCH] =?UTF-8?q?GH=3Dghp=5F0123456789abcdefghijABCDEFGHIJklmnop?=\n\npassword=&#34;correct horse battery&#34;", true,
			"From 1\nSubject: [PATCH] GH=ghp_[MASKED]\n\npassword=\"[MASKED]\"", []string{"generic_secret", "github"}, 0},
		{"Caf%C3%A9 password%3Dhunter2hunter2", true, "Caf%C3%A9 password%3Dhunter2hunter2", nil, 0}, // a URL has no blank
		{"From 1\nFrom: =?UTF-8?q?J=C3=BCrgen?= <j@example.com> a=?b =?x?q?tok?=\nSubject: x", true, "From 1\nFrom: =?UTF-8?q?J=C3=BCrgen?= <j@example.com> a=?b =?x?q?tok?=\nSubject: x", nil, 0},
	} {
		got, rules, n := scrubString(tc.in, r, tc.mask)
		if diff := cmp.Diff(tc.want, got); diff != "" || !slices.Equal(rules, tc.rules) || n != tc.hidden {
			t.Errorf("scrubString(%q, mask %v): rules %q, want %q; removed %d, want %d; mismatch (-want +got):\n%s", tc.in, tc.mask, rules, tc.rules, n, tc.hidden, diff)
		}
	}
}

// TestTextViews checks each reading's example: the passes find no secret in
// its characters, scrubString finds one so read, and bytes holding it that
// are not UTF-8 are withheld.
func TestTextViews(t *testing.T) {
	t.Parallel()
	r := newRedactor("tok1")
	for _, v := range textViews {
		if got, _ := redactMask(v.example, r, true); got != v.example {
			t.Errorf("%s: the example shows a secret unread: %q", v.name, got)
		}
		if got, rules, _ := scrubString(v.example, r, true); got == v.example || len(rules) == 0 {
			t.Errorf("%s: scrubString(%q) = %q, %q: no secret so read", v.name, v.example, got, rules)
		}
		sc := &scrubber{red: r, mask: true, maxBinary: 1 << 20}
		if b := sc.binary([]byte(v.example + "\xff")); b != nil {
			t.Errorf("%s: binary bytes delivered: %q", v.name, b)
		}
	}
	// Bytes are read with their fullwidth forms as ASCII (binaryViews), not
	// by the reading asciiForms.
	sc := &scrubber{red: r, mask: true, maxBinary: 1 << 20}
	if b := sc.binary([]byte("staging password\uff1ahunter2hunter2\xff")); b != nil {
		t.Errorf("binary bytes with a fullwidth colon delivered: %q", b)
	}
}

// FuzzViewBytes checks readsOf's premise, each reading's bytes: a text that
// holds none of them reads the same. The seeds are the examples, each
// without its reading's bytes and with them.
func FuzzViewBytes(f *testing.F) {
	if len(textViews) > 16 {
		f.Fatalf("%d readings: readsOf has a bit for 16", len(textViews))
	}
	for _, s := range []string{"password: >-\n  hunter2hunter2", "&#39;", "a%3Ab", "\"a/x\177\"", "x\u00a0y", "[\"\\n\"]"} {
		f.Add(s)
	}
	for _, v := range textViews {
		f.Add(v.example)
		f.Add(strings.Map(func(r rune) rune {
			if strings.ContainsRune(v.bytes, r) {
				return ' '
			}
			return r
		}, v.example))
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, s := range []string{s, s + strings.Repeat(" ", 256)} { // read byte by byte, and searched
			for i, v := range textViews {
				if readsOf(s)&(1<<i) == 0 && v.read(s) != s {
					t.Errorf("%s: %q reads %q, though readsOf skips it", v.name, s, v.read(s))
				}
			}
		}
	})
}

func TestParseSecretMode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in      string
		want    secretMode
		wantErr bool
	}{
		{"", modeMask, false}, {"mask", modeMask, false}, {"off", modeOff, false}, {"block", modeBlock, false},
		{"Block", modeMask, true}, {" off", modeMask, true}, {"none", modeMask, true},
	} {
		got, err := parseSecretMode(tc.in)
		if got != tc.want || (err != nil) != tc.wantErr {
			t.Errorf("parseSecretMode(%q) = %v, %v: want %v, error %v", tc.in, got, err, tc.want, tc.wantErr)
		}
	}
}

func TestNewRedactor(t *testing.T) {
	t.Parallel()
	got := newRedactor("bb", "", "a", "ccc", "bb", "aa").secrets
	if diff := cmp.Diff([]string{"ccc", "aa", "bb", "a"}, got); diff != "" {
		t.Errorf("mismatch (-want +got):\n%s", diff)
	}
}

func TestRedact(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secrets  []string
		in, want string
	}{
		{nil, "tok1 tok1", "tok1 tok1"},
		{[]string{"tok1"}, "a tok1 b tok1", "a [REDACTED] b [REDACTED]"},
		{[]string{"abcdef", "defxyz"}, "<abcdefxyz>", "<[REDACTED]>"},      // overlap
		{[]string{"abc", "abcdef"}, "abcdef abc", "[REDACTED] [REDACTED]"}, // one contains the other
		{[]string{"aa"}, "aaa", "[REDACTED]"},                              // overlapping occurrences
		{[]string{"tok1", "tok2"}, "tok1tok2", "[REDACTED]"},               // adjacent
		{[]string{"tok1", "D]zz"}, "x tok1zz", "[REDACTED]"},               // would straddle the marker
		{[]string{"Ключ"}, "ключ Ключ", "ключ [REDACTED]"},                 // case-sensitive
	} {
		got := newRedactor(tc.secrets...).redact(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("secrets %q, %q: mismatch (-want +got):\n%s", tc.secrets, tc.in, diff)
		}
	}
}

func TestCleanInputsDoNotAllocate(t *testing.T) {
	const clean = "the token expired after the password reset — “see” #12, 0123456789abcdef0123456789abcdef01234567"
	r := newRedactor("tok1", "secret-value")
	for name, fn := range map[string]func(){
		"redact":      func() { r.redact(clean) },
		"maskString":  func() { maskString(clean) },
		"stripHidden": func() { stripHidden(clean) },
		"scrubString": func() { scrubString(clean, r, true) },
	} {
		if n := testing.AllocsPerRun(10, fn); n != 0 {
			t.Errorf("%s: %v allocations, want 0", name, n)
		}
	}
}

func TestBodySecrets(t *testing.T) {
	t.Parallel()
	nest := func(levels int, leaf string) string { // leaf at the given container level
		s := leaf
		for i := 1; i < levels; i++ {
			if i%2 == 0 {
				s = `[` + s + `]`
			} else {
				s = `{"a":` + s + `}`
			}
		}
		return s
	}
	for _, tc := range []struct {
		name, op, body string
		want           []string
	}{
		{"fields", "createHook", `{"type":"gitea","authorization_header":"Bearer abc","config":{"secret":"hook-secret","url":"x"}}`, []string{"Bearer abc", "hook-secret"}},
		{"case-insensitive", "adminCreateUser", `{"Password":"pass1","TOKEN":"tok1","login":"longlogin"}`, []string{"pass1", "tok1"}},
		{"4-character minimum", "migrate", `{"auth_password":"abc","auth_token":"abcd","mirror_password":"äöü","private_key":"äöüß"}`, []string{"abcd", "äöüß"}},
		{"non-strings", "x", `{"password":12345678,"token":null,"secret":["abcdefgh"]}`, nil},
		{"lists and duplicates", "x", `{"items":[{"token":"same1"},{"token":"same1"},{"access_token":"other"}]}`, []string{"other", "same1"}},
		{"level 8", "x", nest(8, `{"password":"deep-secret"}`), []string{"deep-secret"}},
		{"level 9", "x", nest(9, `{"password":"deep-secret"}`), nil},
		{"action secret", "updateRepoSecret", `{"data":"x","description":"d"}`, []string{"x"}},
		{"action secret case", "updateOrgSecret", `{"Data":"xy"}`, []string{"xy"}},
		{"action secret empty", "updateUserSecret", `{"data":""}`, nil},
		{"data elsewhere", "createRepoVariable", `{"data":"not-a-secret"}`, nil},
		{"no body", "x", `null`, nil},
	} {
		got := bodySecrets(tc.op, decodeNumbers(t, tc.body))
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.name, diff)
		}
	}
}

func TestStripHidden(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in, want string
		n        int
	}{
		{"plain “quoted” — 日本語 ✓ 🙂 café ©", "plain “quoted” — 日本語 ✓ 🙂 café ©", 0},
		{"a\u200bb\u200cc\u200dd\u2060e\ufefff", "abcdef", 5},
		{"x\u202ay\u202ez\u2066w\u2069v\u200eu\u200ft\u061cs", "xyzwvuts", 7},
		{"run\U000E0072\U000E006D\U000E007F ok", "run ok", 3},
		{"\xff\xd8\u200b\xe2\x80", "\xff\xd8\xe2\x80", 1}, // invalid UTF-8 is kept byte for byte
		// Neighbours of the ranges.
		{"\u00ac\u00ae\u034e\u0350\u061b\u115e\u1161\u180a\u1810\u202f\u2070\u3163\u3165\ufdff\ufe10\ufefe\uff9f\uffa1\ufffc\U000E1000",
			"\u00ac\u00ae\u034e\u0350\u061b\u115e\u1161\u180a\u1810\u202f\u2070\u3163\u3165\ufdff\ufe10\ufefe\uff9f\uffa1\ufffc\U000E1000", 0},
		// "IGNORE" in variation selectors, one per byte after a visible character.
		{"ok\ufe09\U000e0137\U000e013e\U000e013f\U000e0142\U000e0135 then", "ok then", 6},
	} {
		got, n := stripHidden(tc.in)
		if diff := cmp.Diff(tc.want, got); diff != "" || n != tc.n {
			t.Errorf("stripHidden(%q): removed %d, want %d, mismatch (-want +got):\n%s", tc.in, n, tc.n, diff)
		}
	}
}

// TestCarriersRequired checks, apart from the table, that the carriers the
// issue names (tags, variation selectors, bidi controls, zero-width
// characters, invisible operators, fillers, interlinear annotation) are all
// in it, so that dropping a row with its example is noticed.
func TestCarriersRequired(t *testing.T) {
	t.Parallel()
	ranges := [][2]rune{{0xE0000, 0xE007F}, {0xFE00, 0xFE0F}, {0xE0100, 0xE01EF}, {0x202A, 0x202E}, {0x2066, 0x2069},
		{0x200B, 0x200F}, {0x061C, 0x061C}, {0x2060, 0x2064}, {0xFEFF, 0xFEFF}, {0x00AD, 0x00AD}, {0x034F, 0x034F},
		{0x180E, 0x180E}, {0x115F, 0x1160}, {0x3164, 0x3164}, {0xFFA0, 0xFFA0}, {0xFFF9, 0xFFFB}}
	for _, rg := range ranges {
		for r := rg[0]; r <= rg[1]; r++ {
			if carrierOf(r) == nil {
				t.Errorf("%U is not an invisible carrier", r)
			}
		}
	}
	// Every control character but tab, newline and carriage return, and every
	// format character and default-ignorable code point of Go's own tables.
	for r := rune(0); r <= unicode.MaxRune; r++ {
		want := unicode.In(r, unicode.Cc, unicode.Cf, unicode.Other_Default_Ignorable_Code_Point, unicode.Variation_Selector) &&
			r != '\t' && r != '\n' && r != '\r'
		if want && carrierOf(r) == nil {
			t.Errorf("%U (%s) is not an invisible carrier", r, string(r))
		}
	}
}

// TestInvisibleCarriers checks each row of the table: its example loses
// exactly its carriers in prose and shows them as markers in file text; both
// ends of the range are carriers; the rows are sorted and apart.
func TestInvisibleCarriers(t *testing.T) {
	t.Parallel()
	for i, c := range invisibleCarriers {
		if c.lo > c.hi || i > 0 && invisibleCarriers[i-1].hi >= c.lo {
			t.Errorf("row %U..%U: not sorted or overlapping", c.lo, c.hi)
		}
		var want []string
		for _, r := range c.example {
			if r >= c.lo && r <= c.hi {
				want = append(want, fmt.Sprintf("U+%04X %s", r, c.name))
			}
		}
		stripped, n := stripHidden(c.example)
		if n != len(want) || n == 0 || strings.ContainsFunc(stripped, func(r rune) bool { return r >= c.lo && r <= c.hi }) {
			t.Errorf("%s %q: removed %d of %d: %q", c.name, c.example, n, len(want), stripped)
		}
		marked := map[string]int{}
		shown := markHidden(c.example, marked)
		got := 0
		for _, k := range want {
			got += marked[k]
			if !strings.Contains(shown, "<"+k[:strings.IndexByte(k, ' ')]+">") {
				t.Errorf("%s %q: no marker for %s in %q", c.name, c.example, k, shown)
			}
		}
		if got != len(want) {
			t.Errorf("%s %q: marked %v", c.name, c.example, marked)
		}
		for _, r := range []rune{c.lo, c.hi} {
			if s, _ := stripHidden("a" + string(r) + "b"); s != "ab" {
				t.Errorf("%s: %U not removed", c.name, r)
			}
		}
	}
}

// FuzzRedact plants a secret anywhere in JSON text: wherever the result is
// valid JSON, no string of scrubber.json's output contains a secret, except
// one that the markers themselves contain or, masking, that a masked marker
// could complete (one with a bracket). Secrets are valid UTF-8, as the token
// (a header value) and body secrets (decoded JSON) are: an invalid one can
// match part of the U+FFFD that decoding makes of invalid input.
func FuzzRedact(f *testing.F) {
	f.Add(`{"a":"x","b":[1,"y"]}`, "s3cr3t", "other", uint(7), false)
	f.Add(`["tok","a\"b",{"k":null}]`, "tok", "ok", uint(3), true)
	f.Add(`{"":""}`, "ab", "bc", uint(2), false)
	f.Add(`{"token":"","x":"y"}`, "abcd", "]x", uint(10), true)
	f.Fuzz(func(t *testing.T, doc, secret, other string, pos uint, mask bool) {
		p := int(pos % uint(len(doc)+1))
		src := []byte(doc[:p] + secret + doc[p:])
		if !json.Valid(src) || !utf8.ValidString(secret) || !utf8.ValidString(other) {
			return
		}
		sc := &scrubber{red: newRedactor(secret, other), mask: mask}
		out, _, _, ok := sc.json(src, 1<<30, 1<<30)
		if !ok {
			return // nested deeper than maxJSONDepth: scrubber.body scrubs it as text
		}
		visit(decodeNumbers(t, string(out)), func(s string) {
			for _, sec := range sc.red.secrets {
				if !strings.Contains(redactedMarker, sec) && !strings.Contains(maskedMarker, sec) &&
					!(mask && strings.ContainsAny(sec, "[]")) && strings.Contains(s, sec) {
					t.Fatalf("secret %q survives in %q of %q", sec, s, out)
				}
			}
		})
	})
}

// FuzzStripEscapedHidden checks stripEscapedHidden against stripHidden: text
// without backslashes whose hidden characters are written as JSON escapes
// (\u0001, a surrogate pair above U+FFFF, upper- or lower-case hex) loses
// exactly those escapes.
func FuzzStripEscapedHidden(f *testing.F) {
	for _, c := range invisibleCarriers {
		f.Add(c.example)
	}
	f.Fuzz(func(t *testing.T, s string) {
		s = strings.ToValidUTF8(strings.ReplaceAll(s, `\`, ""), "")
		var esc strings.Builder
		for _, r := range s {
			if carrierOf(r) == nil {
				esc.WriteRune(r)
				continue
			}
			for _, u := range utf16.Encode([]rune{r}) {
				fmt.Fprintf(&esc, map[bool]string{false: `\u%04x`, true: `\u%04X`}[r%2 == 1], u)
			}
		}
		want, n := stripHidden(s)
		if got, m := stripEscapedHidden(esc.String()); got != want || m != n {
			t.Errorf("stripEscapedHidden(%q): removed %d, want %d; mismatch (-want +got):\n%s", esc.String(), m, n, cmp.Diff(want, got))
		}
	})
}

// FuzzUnescapeJSON: JSON text as encoding/json writes it, once or nested
// in a JSON string, reads back as the text it encodes (a backslash in the
// text left out: its escape is ambiguous to the reading); any input reads
// without a panic, valid UTF-8 into valid UTF-8.
func FuzzUnescapeJSON(f *testing.F) {
	for _, s := range []string{`rotate keys\n\nAKIA`, `<a href=\"x\">`, `\u00e9\ud83d\ude00`, `https:\/\/u:p@h`, `\\`, `\u12`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got := unescapeJSON("[" + s); utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Errorf("unescapeJSON(%q) = %q: not UTF-8", "["+s, got)
		}
		text := strings.ToValidUTF8(strings.ReplaceAll(s, `\`, ""), "")
		once, _ := json.Marshal([]string{text})
		twice, _ := json.Marshal([]string{string(once)})
		want := `["` + text + `"]`
		for _, in := range []string{string(once), strings.TrimSuffix(strings.TrimPrefix(string(twice), `["`), `"]`)} {
			if got := unescapeJSON(in); got != want {
				t.Errorf("unescapeJSON(%q) mismatch (-want +got):\n%s", in, cmp.Diff(want, got))
			}
		}
	})
}

func FuzzMaskString(f *testing.F) {
	for _, r := range secretRules {
		for _, ex := range slices.Concat(r.mask, r.keep) {
			f.Add(ex, uint(len(ex)/2), uint64(len(ex)))
		}
	}
	const alnum = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	f.Fuzz(func(t *testing.T, s string, pos uint, seed uint64) {
		if !strings.ContainsAny(s, "\u017f\u212a") { // ſ and K fold to s and k in (?i); triggers fold ASCII only
			got, gotNames := maskString(s)
			want, wantNames := referenceMask(s)
			if diff := cmp.Diff(want, got); diff != "" || !slices.Equal(gotNames, wantNames) {
				t.Errorf("maskString(%q): rules %q, want %q, mismatch (-want +got):\n%s", s, gotNames, wantNames, diff)
			}
		}
		rng := rand.New(rand.NewPCG(seed, 0))
		token := []byte("ghp_")
		for range 36 {
			token = append(token, alnum[rng.IntN(len(alnum))])
		}
		p := int(pos % uint(len(s)+1))
		if out, _ := maskString(s[:p] + string(token) + s[p:]); strings.Contains(out, string(token)) {
			t.Errorf("token %s survives in %q", token, out)
		}
	})
}

// benchCorpus returns about 1 MB of Gitea-like JSON (issues with prose bodies
// and commits with SHAs and URLs), deterministically.
func benchCorpus(b *testing.B) []byte {
	rng := rand.New(rand.NewPCG(1, 2))
	words := strings.Fields(`the a an to of and in is it for on with this that we should fix bug issue when after before
		release build test fails error log output config server client request response user repository branch merge
		commit push pull review comment label milestone token password expired reset update docs “quoted” it’s — naïve
		日本語 see https://gitea.example.com/o/r/issues/12 #12 @alice CI workflow runner cache migration database schema
		timeout retry panic stack trace nil pointer dereference version upgrade downgrade`)
	sha := func() string { return fmt.Sprintf("%016x%016x%08x", rng.Uint64(), rng.Uint64(), rng.Uint32()) }
	prose := func(n int) string {
		var sb strings.Builder
		for i := range n {
			if i > 0 && i%14 == 0 {
				sb.WriteString("\r\n")
			} else if i > 0 {
				sb.WriteString(" ")
			}
			sb.WriteString(words[rng.IntN(len(words))])
		}
		return sb.String()
	}
	const base = "https://gitea.example.com"
	user := func() map[string]any {
		id := rng.IntN(500)
		login := fmt.Sprintf("user%d", id)
		return map[string]any{"id": id, "login": login, "full_name": "User " + login, "email": login + "@example.com",
			"avatar_url": base + "/avatars/" + sha()[:32], "html_url": base + "/" + login, "created": "2024-01-02T03:04:05Z"}
	}
	var items []any
	size := 0
	for i := 0; size < 1<<20; i++ {
		var item map[string]any
		if i%2 == 0 {
			item = map[string]any{"id": 1000 + i, "number": i, "url": fmt.Sprintf("%s/api/v1/repos/o/r/issues/%d", base, i),
				"html_url": fmt.Sprintf("%s/o/r/issues/%d", base, i), "title": prose(8), "body": prose(40 + rng.IntN(300)),
				"user": user(), "labels": []any{map[string]any{"id": 1, "name": "bug", "color": "ee0701"}},
				"state": "open", "comments": rng.IntN(20), "created_at": "2024-05-06T07:08:09Z", "updated_at": "2024-05-07T07:08:09Z",
				"assignees": nil, "pull_request": nil, "repository": map[string]any{"id": 7, "name": "r", "owner": "o", "full_name": "o/r"}}
		} else {
			s := sha()
			item = map[string]any{"sha": s, "url": base + "/api/v1/repos/o/r/git/commits/" + s, "html_url": base + "/o/r/commit/" + s,
				"commit": map[string]any{"message": prose(5+rng.IntN(30)) + "\n\nReviewed-on: " + base + "/o/r/pulls/3",
					"author": map[string]any{"name": "Alice", "email": "alice@example.com", "date": "2024-05-06T07:08:09Z"},
					"tree":   map[string]any{"sha": sha(), "url": base + "/api/v1/repos/o/r/git/trees/" + s}},
				"parents": []any{map[string]any{"sha": sha(), "url": base + "/api/v1/repos/o/r/git/commits/" + s}},
				"author":  user(), "stats": map[string]any{"total": 12, "additions": 10, "deletions": 2}}
		}
		j, _ := json.Marshal(item)
		size += len(j) + 1
		items = append(items, item)
	}
	raw, err := json.Marshal(items)
	if err != nil {
		b.Fatal(err)
	}
	return raw
}

// BenchmarkResultPasses runs each string pass of the result pipeline, and
// scrubString (all three), on the text of a 1 MB Gitea-like JSON list.
func BenchmarkResultPasses(b *testing.B) {
	raw := string(benchCorpus(b))
	r := newRedactor("0123456789abcdef0123456789abcdef01234567", "fedcba9876543210fedcba9876543210fedcba98",
		"bearer-secret-for-mcp-clients", "gto_abcdefghijklmnopqrstuvwxyz234567abcdefghijklmnopqrst")
	for _, bc := range []struct {
		name string
		fn   func()
	}{
		{"strip", func() { stripHidden(raw) }},
		{"redact", func() { r.redact(raw) }},
		{"maskString", func() { maskString(raw) }},
		{"scrub", func() { scrubString(raw, r, true) }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				bc.fn()
			}
		})
	}
}
