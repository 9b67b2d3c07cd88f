package main

import (
	"strings"
	"testing"
)

// TestNamedSecret: a JSON member whose name Gitea took from stored text is
// masked where the name says its value is a secret (an issue form's
// api_key, an Actions variable's data by its name), as generic_secret
// masks name: "value"; Gitea's own token_last_eight and short values are left
// alone.
func TestNamedSecret(t *testing.T) {
	t.Parallel()
	in := `[{"name":"DEPLOY_TOKEN","data":"0a1b2c3d4e5f60718293a4b5c6d7e8f901234567"},{"name":"REGION","data":"eu-central-1"},` +
		`{"name":"db_password","data":"short"},` +
		`{"attributes":{"label":"Target","api_key":"Zx9Qw8Er7Ty6Ui5Op4As"}},{"id":1,"name":"ci","sha1":"","token_last_eight":"3f4e5d6c"}]`
	want := `[{"name":"DEPLOY_TOKEN","data":"[MASKED]"},{"name":"REGION","data":"eu-central-1"},` +
		`{"name":"db_password","data":"short"},` +
		`{"attributes":{"label":"Target","api_key":"[MASKED]"}},{"id":1,"name":"ci","sha1":"","token_last_eight":"3f4e5d6c"}]`
	sc := &scrubber{red: newRedactor(), mask: true}
	out, _, _, ok := sc.json([]byte(in), 100, 1<<20)
	if !ok || string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if len(sc.rules) != 1 || sc.rules[0] != "generic_secret" {
		t.Errorf("rules %v, want [generic_secret]", sc.rules)
	}
	for name, want := range map[string]bool{"api_key": true, "X-API-KEY": true, "stripe_secret": true, "passwd": true, "token_last_eight": false, "tokenizer": false, "": false} {
		if got := namedSecret(name, "abcdefgh12345678"); got != want {
			t.Errorf("namedSecret(%q) = %v, want %v", name, got, want)
		}
	}
}

// TestTargetCut: a symbolic link's target of 1024 bytes, as Gitea cuts it,
// is read as cut for the rules' cut keys, and delivered so only where that
// masks one.
func TestTargetCut(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ target, want string }{
		{strings.Repeat("x", 1000) + "/GH=ghp_R2d2C3poLukeLeia", strings.Repeat("x", 1000) + "/GH=ghp_[MASKED]..."},
		{strings.Repeat("x", 1024), strings.Repeat("x", 1024)},
		{strings.Repeat("x", 999) + "/GH=ghp_R2d2C3poLukeLeia", strings.Repeat("x", 999) + "/GH=ghp_R2d2C3poLukeLeia"}, // whole: not cut
	} {
		sc := &scrubber{red: newRedactor(), mask: true}
		out, _, _, _ := sc.json([]byte(`{"type":"symlink","target":"`+tc.target+`"}`), 100, 1<<20)
		if want := `{"type":"symlink","target":"` + tc.want + `"}`; string(out) != want {
			t.Errorf("target of %d bytes: got %s", len(tc.target), out[max(0, len(out)-60):])
		}
	}
}

// TestUnquotePaths: the C quotes of a path in a diff's headers are read
// decoded where that shows a secret (DEL as \177, BEL as \a, a zero-width
// space as its UTF-8 bytes); a diff whose quoted strings show none is
// delivered as it is.
func TestUnquotePaths(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"diff --git \"a/GH=ghp_R2d2C3po\\177LukeLeiaHanSolo0123456789AbCd\" \"b/x\"\n":         "diff --git \"a/GH=ghp_[MASKED]\" \"b/x\"\n",
		" \"GH=ghp_R2d2C3po\\aLukeLeiaHanSolo0123456789AbCd\" | 1 +\ndiff --git \"a/x\" b/y\n": " \"GH=ghp_[MASKED]\" | 1 +\ndiff --git \"a/x\" b/y\n",
		"diff --git \"a/ghp_R2d2C3po\\342\\200\\213LukeLeiaHanSolo0123456789AbCd\" b/x\n":      "diff --git \"a/ghp_[MASKED]\" b/x\n",
		"diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\n+printf(\"\\033[0m\\\\\\\"\");\n": "diff --git \"a/caf\\303\\251\" \"b/caf\\303\\251\"\n+printf(\"\\033[0m\\\\\\\"\");\n",
	} {
		if got, _, _ := scrubString(in, newRedactor(), true); got != want {
			t.Errorf("scrubString(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWikiTitle: a wiki page's title, which Gitea shows with the dashes of
// its file name as blanks, is read with its blanks as dashes where that
// shows a secret; other titles, and titles that show none, are left alone.
func TestWikiTitle(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`[{"title":"token glpat xYz123AbC456dEf789gH","html_url":"/o/r/wiki/token-glpat-xYz123AbC456dEf789gH"}]`: `[{"title":"token-glpat-[MASKED]","html_url":"/o/r/wiki/token-glpat-[MASKED]"}]`,
		`[{"title":"staging notes","html_url":"/o/r/wiki/staging-notes"}]`:                                       `[{"title":"staging notes","html_url":"/o/r/wiki/staging-notes"}]`,
		`[{"title":"token glpat xYz123AbC456dEf789gH","html_url":"/o/r/issues/1"}]`:                              `[{"title":"token glpat xYz123AbC456dEf789gH","html_url":"/o/r/issues/1"}]`,
	} {
		sc := &scrubber{red: newRedactor(), mask: true}
		if out, _, _, _ := sc.json([]byte(in), 100, 1<<20); string(out) != want {
			t.Errorf("got %s, want %s", out, want)
		}
	}
}
