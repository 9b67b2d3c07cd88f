package main

import (
	"slices"
	"testing"
)

// TestDiffReadings: the readings of a file's text are made of a diff of it
// too (TestE2ERedteam25DiffReadings): a YAML block scalar's first line, after
// '+', '-' or a space, is read on its key's line, of each side (the first
// removed line on a copy of a key both sides keep), and a diff's JSON with
// its escapes decoded; a diff without a secret so read is delivered as it is.
func TestDiffReadings(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"@@ -1,2 +1,4 @@\n db:\n+  password: |-\n+    correct-horse-battery-staple\n":                                             "@@ -1,2 +1,4 @@\n db:\n+  password: [MASKED]\n",
		"@@ -2,4 +2,4 @@ db:\n   password: |-\n-    Tr0ub4dor-and-3-staging\n+    Corr3ct-horse-battery-prod\n   port: 5432\n":    "@@ -2,4 +2,4 @@ db:\n   password: [MASKED]\n   password: [MASKED]\n   port: 5432\n",
		"@@ -2,3 +2,3 @@ db:\n   password: |-\n-    the old one is revoked\n+    Corr3ct-horse-battery-prod\n":                    "@@ -2,3 +2,3 @@ db:\n   password: the old one is revoked\n   password: [MASKED]\n",
		"@@ -2,4 +2,4 @@ db:\n-  password: |-\n-    Tr0ub4dor-and-3-staging\n+  password: >\n+    Corr3ct-horse-battery-prod\n":   "@@ -2,4 +2,4 @@ db:\n-  password: [MASKED]\n+  password: [MASKED]\n",
		"@@ -1,2 +1,2 @@\n   description: |\n-    the password rotates monthly\n+    the password rotates weekly\n":               "@@ -1,2 +1,2 @@\n   description: |\n-    the password rotates monthly\n+    the password rotates weekly\n",
		"- name: db\n  password: |\n    hunter2hunter2\n- password: >-\n    correct-horse-battery\n":                              "- name: db\n  password: [MASKED]\n- password: [MASKED]\n",
		"@@ -0,0 +1 @@\n+{\"rotated\": \"the new key:\\nAKIAR2D2C3POLUKE0123\"}\n":                                                "@@ -0,0 +1 @@\n+{\"rotated\": \"the new key:\nAKIA[MASKED]\"}\n",
		"diff --git a/n.json b/n.json\n--- a/n.json\n+++ b/n.json\n@@ -1 +1 @@\n-{\"k\": \"x\\nAKIAR2D2C3POLUKE0123\"}\n":         "diff --git a/n.json b/n.json\n--- a/n.json\n+++ b/n.json\n@@ -1 +1 @@\n-{\"k\": \"x\nAKIA[MASKED]\"}\n",
		"From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] notes\n\n---\n@@ -0,0 +1 @@\n+{\"k\": \"x\\nAKIAR2D2C3POLUKE0123\"}\n": "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] notes\n\n---\n@@ -0,0 +1 @@\n+{\"k\": \"x\nAKIA[MASKED]\"}\n",
		"@@ -0,0 +1 @@\n+printf(\"done\\n\");\n": "@@ -0,0 +1 @@\n+printf(\"done\\n\");\n",
	} {
		if got := fst(scrubString(in, newRedactor(), true)); got != want {
			t.Errorf("scrubString(%q)\n = %q,\nwant %q", in, got, want)
		}
	}
}

// TestSignedURLMasked: an address's sig= is masked where Gitea lists it (a
// hook's config.url, a commit status's description;
// TestE2ERedteam25SignedURL), its address and other parameters kept.
func TestSignedURLMasked(t *testing.T) {
	t.Parallel()
	teams := "https://x.environment.api.powerplatform.com:443/powerautomate/automations/direct/workflows/8f4c/triggers/manual/paths/invoke?api-version=1&sv=1.0&sig="
	sas := "https://ci0123.blob.core.windows.net/logs/41.txt?sv=2022-11-02&sp=r&sig="
	in := `[{"id":1,"type":"msteams","config":{"content_type":"json","url":"` + teams + `Xq3vN8pL2mR7tY1wK9eH4sD6fG0jZ5cB-AuIoPxVnMl"}},` +
		`{"id":2,"status":"failure","description":"the log: ` + sas + `r2d2C3poLukeLeia%2BHanSolo0123%3D&se=2026"}]`
	want := `[{"id":1,"type":"msteams","config":{"content_type":"json","url":"` + teams + `[MASKED]"}},` +
		`{"id":2,"status":"failure","description":"the log: ` + sas + `[MASKED]&se=2026"}]`
	sc := &scrubber{red: newRedactor(), mask: true, maxBinary: 1 << 20}
	if out, _, _, ok := sc.json([]byte(in), 100, 1<<20); !ok || string(out) != want || !slices.Contains(sc.rules, "url_signature") {
		t.Errorf("scrubbed:\n%s\nwant\n%s (rules %q)", out, want, sc.rules)
	}
}

// TestChatHookOnOwnHostMasked: a Mattermost hook's id and a Rocket.Chat
// hook's token are masked in a slack hook's config.url
// (TestE2ERedteam25ChatHookOnOwnHost); Gitea's and GitHub's hook pages and
// git's hooks directory are left.
func TestChatHookOnOwnHostMasked(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"type":"slack","config":{"url":"https://chat.example.com/hooks/bywsw8zt5jgpte3nm65qjiru6h","channel":"#b"}}`:                            `{"type":"slack","config":{"url":"https://chat.example.com/hooks/[MASKED]","channel":"#b"}}`,
		`{"type":"slack","config":{"url":"https://rocket.example.com/hooks/5c7hHjLfdyiSRSKXZ/vC2GLQQ8ixg6cDvDe4D3ChmsJ5zZ7dhGfmEqtW8GKaPEzNDt"}}`: `{"type":"slack","config":{"url":"https://rocket.example.com/hooks/5c7hHjLfdyiSRSKXZ/[MASKED]"}}`,
		`{"url":"/alice/demo/settings/hooks/3","note":"see .git/hooks/pre-commit.sample"}`:                                                        `{"url":"/alice/demo/settings/hooks/3","note":"see .git/hooks/pre-commit.sample"}`,
	} {
		sc := &scrubber{red: newRedactor(), mask: true, maxBinary: 1 << 20}
		if out, _, _, ok := sc.json([]byte(in), 100, 1<<20); !ok || string(out) != want {
			t.Errorf("scrubbed %s\n = %s,\nwant %s", in, out, want)
		}
	}
}

// TestNamedEntitiesRead: a text with a named HTML entity is read decoded
// where that shows a secret (TestE2ERedteam25NamedEntities), as one with a
// numeric entity is; one without a secret so read, or with an ampersand
// that is no entity, is delivered as it is.
func TestNamedEntitiesRead(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"<code>DB_PASSWORD=&quot;Tr0ub4dor-and-3-staging&quot;</code>":       `<code>DB_PASSWORD="[MASKED]"</code>`,
		"Authorization: token&nbsp;0123456789abcdef0123456789abcdef01234567": "Authorization: token [MASKED]",
		"<p>Q&amp;A: the password rotates &mdash; ask ops</p>":               "<p>Q&amp;A: the password rotates &mdash; ask ops</p>",
		"https://x.example.com/?a=1&password=&b=2 and password=&quot;&quot;": "https://x.example.com/?a=1&password=&b=2 and password=&quot;&quot;",
	} {
		if got := fst(scrubString(in, newRedactor(), true)); got != want {
			t.Errorf("scrubString(%q)\n = %q,\nwant %q", in, got, want)
		}
	}
}
