package main

// The readings of a text (README, "Results", step 3): forms in which Gitea
// or git writes a text so that a secret in it shows only once it is read
// another way (textViews: JSON escapes, mail headers, HTML entities, cut hunk
// headers and diffstat names, quoted paths, Unicode blanks, URL escapes,
// YAML block scalars, base64 values).
// scrubString (redact.go) delivers a text so read where that shows a secret
// to redaction or masking; binaryViews (hidden.go) withholds bytes where it
// does.

import (
	"encoding/base64"
	"html"
	"io"
	"mime"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// textView is another reading of a text, in which a secret its characters
// do not show may show; Gitea or git writes the text so.
type textView struct {
	name    string
	read    func(string) string
	bytes   string // a text with none of these bytes reads the same ("": any may not)
	example string // a secret that shows only so read
}

// textViews are the readings scrubString and binaryViews try.
var textViews = []textView{{
	// JSON inside a JSON string (an activity's content: a push's commits)
	// and JSON returned as text (a file) keep its escapes: a key after \n
	// is not at a word's start, nor one after \u003c, and \/ is no slash.
	name: "JSON escapes", read: unescapeJSON, bytes: "\\",
	example: `[{"Sha1":"1","Message":"rotate keys\n\nAKIAIOSFODNN7EXAMPLE\n","AuthorName":"a"}]`,
}, {
	// git format-patch writes a .patch's subject and author as mail
	// headers: folded where long, in RFC 2047 encoded words where not ASCII.
	name: "mail headers", read: mailHeaders, bytes: "\n",
	example: "From 1 Mon Sep 17 00:00:00 2001\nSubject: [PATCH] Authorization: token\n 0123456789abcdef0123456789abcdef01234567 =?UTF-8?q?=C3=A9_GH=3Dghp=5FR2d2C3poLukeLeiaHanSolo0123456789AbCd?=",
}, {
	// A commit_ref comment's body is HTML: the first line of the commit
	// message, escaped (html.EscapeString); so is an HTML file.
	name: "HTML entities", read: unescapeHTML, bytes: "&",
	example: `<a href="/o/r/commit/1">Refs #1: password=&#34;correct horse battery&#34;</a>`,
}, {
	// git writes the line a hunk is in after its header, cut to 80 bytes
	// without a mark (xdiff's func_line): the cut gets one, for the rules'
	// cut keys.
	name: "hunk headers", read: markHunkCuts, bytes: "@",
	example: "@@ -11,3 +11,4 @@ export GH_CREDENTIAL_FOR_THE_STAGING_DEPLOYMENT_PIPELINE_JOB_NUMBER=ghp_R2d2C3po\n  step",
}, {
	// git writes a path in a diff's headers and a patch's diffstat in C
	// quotes where it holds a control character: DEL as \177, BEL as \a.
	name: "quoted paths", read: unquotePaths, bytes: `"`,
	example: "diff --git \"a/GH=ghp_R2d2C3po\\177LukeLeiaHanSolo0123456789AbCd\" \"b/GH=ghp_R2d2C3po\\177LukeLeiaHanSolo0123456789AbCd\"\n",
}, {
	// Blanks other than a space and fullwidth punctuation are not the
	// separators of an assignment or a header to the rules.
	name: asciiFormsView, read: asciiForms, bytes: "\xc2\xe2\xe3\xef",
	example: "staging password\uff1ahunter2hunter2, Authorization:\u00a0token 0123456789abcdef0123456789abcdef01234567",
}, {
	// A wiki page's sub_url and html_url hold its title URL-escaped.
	name: "URL escapes", read: unescapeURL, bytes: "%",
	example: "/o/r/wiki/staging-password%3A-hunter2hunter2",
}, {
	// YAML writes a value on the lines after its key, as a block (key: |,
	// key: >-), as Helm charts' values often hold a password; a diff of the
	// file writes each line after '+', '-' or a space.
	name: "YAML blocks", read: joinYAMLBlocks, bytes: "|>",
	example: "db:\n  password: |-\n    correct-horse-battery-staple\n",
}, {
	// A Kubernetes Secret's data, a Docker config's auth (user:password)
	// and an .npmrc's _auth hold their values in base64.
	name: "base64 values", read: decodeBase64Values,
	example: "data:\n  credentials: W2RlZmF1bHRdCmF3c19hY2Nlc3Nfa2V5X2lkID0gQUtJQVIyRDJDM1BPTFVLRTAxMjMK\n",
}}

// viewBytes maps each byte to the textViews (a bit each, by index) whose
// bytes hold it, and viewsAlways holds those without bytes.
var viewBytes, viewsAlways = func() (t [256]uint16, always uint16) {
	for i, v := range textViews {
		for _, c := range []byte(v.bytes) {
			t[c] |= 1 << i
		}
		if v.bytes == "" {
			always |= 1 << i
		}
	}
	return t, always
}()

// readsOf returns the textViews (a bit each) that may read s differently:
// those with bytes that s holds one of, and those without bytes. A short
// text is read byte by byte, a long one searched for each byte, faster.
func readsOf(s string) uint16 {
	in := viewsAlways
	if len(s) < 256 {
		for i := 0; i < len(s); i++ {
			in |= viewBytes[s[i]]
		}
		return in
	}
	for i, v := range textViews {
		for j := 0; in&(1<<i) == 0 && j < len(v.bytes); j++ {
			if strings.IndexByte(s, v.bytes[j]) >= 0 {
				in |= 1 << i
			}
		}
	}
	return in
}

// yamlBlock matches a YAML key whose value is a block scalar (|, >, with a
// chomping and an indentation indicator, and a comment), up to the
// indentation of the block's first line. In a diff, git writes each line
// after '+', '-' or a space: the first line of a removed key's block (group
// 1) is the next removed one, past added lines; of any other key's (group 2),
// the next added one, past removed lines. yamlRemoved matches, in a diff,
// the key of a line of both sides (group 1) and its indicator (2), the added
// lines after it (3) and the block's first removed line (4, its text 5).
var yamlBlock, yamlRemoved = regexp.MustCompile(`(?m)^(?:(-` + yamlKey + `)[ \t]*` + yamlIndicator + `(?:\r?\n\+[^\n]*)*\r?\n-?|` +
	`((?:[^\n:#-][^\n:#]*[^\s:#]|[^\s:#-])[ \t]*:)[ \t]*` + yamlIndicator + `(?:\r?\n-[^\n]*)*\r?\n\+?)[ \t]+`),
	regexp.MustCompile(`(?m)^((?:[^\n:#+-][^\n:#]*[^\s:#]|[^\s:#+-])[ \t]*:)([ \t]*` + yamlIndicator + `)((?:\r?\n\+[^\n]*)*)(\r?\n)-[ \t]+([^\r\n]*)`)

// yamlKey is a YAML key up to its ':', yamlIndicator a block scalar's
// indicator after it, to the end of the line.
const yamlKey, yamlIndicator = `[^\n:#]*[^\s:#][ \t]*:`, `[|>][1-9]?[+-]?[1-9]?[ \t]*(?:#[^\n]*)?`

// joinYAMLBlocks returns s with the first line of each YAML block scalar
// joined to its key's line: "password: |-\n    s3cr3t" reads "password: s3cr3t".
// git writes a file's lines in a diff after '+', '-' or a space: a block's
// first removed line is read on a copy of its key's line, and the first added
// one on the key's line ("  password: |-\n-    old\n+    new" reads
// "  password: old\n  password: new").
func joinYAMLBlocks(s string) string {
	for i := strings.IndexByte(s, ':'); i >= 0; i = indexByteFrom(s, ':', i+1) {
		j := i + 1 // any blanks before the indicator, as yamlBlock reads them
		for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
			j++
		}
		if j == len(s) || s[j] != '|' && s[j] != '>' {
			continue
		}
		j++ // past the indicator: its chomping and indentation, blanks, then a line's end or a comment
		for j < len(s) && strings.IndexByte("123456789+- \t", s[j]) >= 0 {
			j++
		}
		if j < len(s) && (s[j] == '\n' || s[j] == '\r' || s[j] == '#') {
			if strings.Contains(s, "\n-") {
				s = yamlRemoved.ReplaceAllString(s, "$1 $5$4$1$2$3")
			}
			return yamlBlock.ReplaceAllString(s, "$1$2 ")
		}
	}
	return s
}

// minBase64 is the length of the shortest value decodeBase64Values reads: 16
// characters of base64 are 12 bytes, fewer than a secret the rules know and
// its name.
const minBase64 = 16

// base64Chars are the characters of base64's standard and URL alphabets.
var base64Chars = func() (t [256]bool) {
	for _, c := range "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_" {
		t[c] = true
	}
	return t
}()

// decodeBase64Values returns s with each value after a ':' or '=' (blanks
// and a quote between them skipped), and s itself if it is one (a JSON
// member's value, an Actions variable's data; not a commit id, whose hex is
// base64 too), that is base64 of at least minBase64 characters, in either
// alphabet, padded or not, of UTF-8 text, replaced by that text, itself so
// read twice more (a Docker config's auth in a Kubernetes Secret's data).
// In a text that decodes base64 where it uses it (echo … | base64 -d,
// b64decode("…"), atob("…")), a value after a blank, a parenthesis or a
// quote is read so too. Base64 of bytes that are not UTF-8 is left.
func decodeBase64Values(s string) string { return decodeBase64In(s, 3) }

// decodeBase64In is decodeBase64Values reading depth levels of base64.
func decodeBase64In(s string, depth int) string {
	if depth == 0 || len(s) < minBase64 {
		return s
	}
	var spans [][2]int
	if k := base64End(s, 0); k > 0 && skipSpace(s, k) == len(s) && strings.Trim(s[:k], "0123456789abcdef") != "" { // a whole value, not a commit id
		spans = append(spans, [2]int{0, k})
	}
	seps := ":="
	if decodesBase64(s) {
		seps = ":= (\"'"
	}
	for _, sep := range []byte(seps) {
		for i := strings.IndexByte(s, sep); i >= 0; i = indexByteFrom(s, sep, i+1) {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
				j++
			}
			if j < len(s) && (s[j] == '"' || s[j] == '\'') {
				j++
			}
			if k := base64End(s, j); k > 0 {
				spans = append(spans, [2]int{j, k})
			}
		}
	}
	if spans == nil {
		return s
	}
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	var b strings.Builder
	at := 0 // s[:at] is written
	for _, sp := range spans {
		if sp[0] < at {
			continue
		}
		if d, ok := base64Text(s[sp[0]:sp[1]]); ok {
			b.WriteString(s[at:sp[0]])
			b.WriteString(decodeBase64In(d, depth-1))
			at = sp[1]
		}
	}
	if at == 0 {
		return s
	}
	b.WriteString(s[at:])
	return b.String()
}

// decodesBase64 reports whether s decodes base64 where it uses it: echo … |
// base64 -d, b64decode("…"), atob("…"). Both words hold "64", rarer than
// their first bytes; atob is looked for before each '('.
func decodesBase64(s string) bool {
	if strings.Contains(s, "64") && (strings.Contains(s, "base64") || strings.Contains(s, "b64decode")) {
		return true
	}
	for i := strings.IndexByte(s, '('); i >= 0; i = indexByteFrom(s, '(', i+1) {
		if strings.HasSuffix(s[:i], "atob") {
			return true
		}
	}
	return false
}

// base64End returns the end of the base64 value at s[j:], its padding
// included, or -1 if there is none of at least minBase64 characters there.
func base64End(s string, j int) int {
	k := j
	for k < len(s) && base64Chars[s[k]] {
		k++
	}
	if k-j < minBase64 {
		return -1
	}
	for n := 0; n < 2 && k < len(s) && s[k] == '='; n++ { // padding
		k++
	}
	if k < len(s) && base64Chars[s[k]] {
		return -1
	}
	return k
}

// base64Text decodes v, base64 in either alphabet, padded or not, and
// reports whether it is UTF-8 (its hidden characters, a NUL included, are
// removed before masking, as any reading's).
func base64Text(v string) (string, bool) {
	enc := base64.StdEncoding
	if strings.ContainsAny(v, "-_") {
		enc = base64.URLEncoding
	}
	if !strings.HasSuffix(v, "=") {
		enc = enc.WithPadding(base64.NoPadding)
	}
	d, err := enc.DecodeString(v)
	if err != nil || !utf8.Valid(d) {
		return "", false
	}
	return string(d), true
}

// hunkHeader matches a diff's hunk header and what follows it on its line.
var hunkHeader = regexp.MustCompile(`(?m)^@@ -[0-9]+(?:,[0-9]+)? \+[0-9]+(?:,[0-9]+)? @@ [^\n]*`)

// markHunkCuts returns s with "..." after each hunk header line whose
// text after the header is 80 bytes, as git cuts it.
func markHunkCuts(s string) string {
	if !strings.Contains(s, "@@ -") {
		return s
	}
	return hunkHeader.ReplaceAllStringFunc(s, func(h string) string {
		if _, line, _ := strings.Cut(h[3:], "@@ "); len(strings.TrimSuffix(line, "\r")) == 80 {
			return h + "..."
		}
		return h
	})
}

// wholeStatNames returns s with each name that the diffstat of a patch (git
// format-patch's mail: a "---" line, the diffstat, then the diffs) cut at its
// start given back whole where the whole name holds a secret to r or, if mask
// is set, to the rules. git cuts a name too long for the diffstat's columns
// at its start, "..." before what is left, and from the first slash there if
// any (diff.c show_stats): a key at the start of a long file name, masked in
// the diff's headers, was left in the diffstat all but its first characters,
// which no rule reads without the key's prefix. The k-th name of a diffstat
// is that of the mail's k-th diff (git writes both from one diff queue); the
// cut name's first component is read, whole, from that diff's diff --git
// line, its C escapes decoded and its hidden characters removed. redactMask
// runs it first, so that every pass that masks a text sees the names whole.
func wholeStatNames(s string, r *redactor, mask bool) string {
	if !strings.Contains(s, "\n ...") || !strings.Contains(s, "\ndiff --git ") {
		return s
	}
	var cuts [][2]int // per name of the diffstat: the span of "..." and the rest of its first component; {-1} if not cut
	var whole []string
	var spans [][2]int
	inStat, diffs := false, 0
	for at := 0; at < len(s); {
		end := indexAnyFrom(s, at, "\n")
		switch line := s[at:end]; {
		case strings.HasPrefix(line, "From ") && strings.HasSuffix(line, " Mon Sep 17 00:00:00 2001"): // a mail
			cuts, inStat, diffs = cuts[:0], false, 0
		case line == "---" && diffs == 0:
			cuts, inStat = cuts[:0], true
		case inStat && len(line) > 1 && line[0] == ' ' && strings.Contains(line, " | "):
			cut := [2]int{-1}
			if rest, ok := strings.CutPrefix(line, " ..."); ok {
				if n := indexAnyFrom(rest, 0, " \"/"); n > 0 {
					cut = [2]int{at + 1, at + 4 + n}
				}
			}
			cuts = append(cuts, cut)
		case strings.HasPrefix(line, "diff --git "):
			inStat, diffs = false, diffs+1
			if diffs > len(cuts) || cuts[diffs-1][0] < 0 {
				break
			}
			c := cuts[diffs-1]
			if w := statComponent(line[len("diff --git "):], s[c[0]+3:c[1]]); w != "" {
				if d, _ := stripHidden(unquoteC(w)); r.redact(d) != d || mask && hasSecret(d) {
					spans, whole = append(spans, c), append(whole, d)
				}
			}
		}
		at = end + 1
	}
	if spans == nil {
		return s
	}
	var b strings.Builder
	at := 0
	for i, sp := range spans {
		b.WriteString(s[at:sp[0]])
		b.WriteString(whole[i])
		at = sp[1]
	}
	b.WriteString(s[at:])
	return b.String()
}

// statComponent returns, from the names of a diff --git line, the path
// component that ends with w (the rest of a component that a diffstat cut at
// its start), at the first place where w ends one; "" for none.
func statComponent(names, w string) string {
	for i := 0; ; {
		j := strings.Index(names[i:], w)
		if j < 0 {
			return ""
		}
		j += i
		end := j + len(w)
		if end == len(names) || names[end] == ' ' || names[end] == '"' {
			if k := strings.LastIndexAny(names[:j], " /\"") + 1; k < j {
				return names[k:end]
			}
		}
		i = j + 1
	}
}

// hasSecret reports whether the rules mask part of s.
func hasSecret(s string) bool {
	m, _ := maskString(s)
	return m != s
}

// quotedString matches a C-quoted string on one line, as git quotes a path.
var quotedString = regexp.MustCompile(`"(?:[^"\\\n]|\\.)*"`)

// unquotePaths returns a diff s (text with a quoted path after diff --git)
// with the octal escapes of its quoted strings decoded, and \a, \b, \v, \f.
func unquotePaths(s string) string {
	if !strings.Contains(s, "diff --git ") || !strings.Contains(s, `"a/`) && !strings.Contains(s, `"b/`) {
		return s
	}
	return quotedString.ReplaceAllStringFunc(s, unquoteC)
}

// unquoteC decodes the octal escapes of q, a C-quoted string or part of one,
// and \a, \b, \v, \f; \" \\ \t \n \r stay.
func unquoteC(q string) string {
	b := make([]byte, 0, len(q))
	for i := 0; i < len(q); i++ {
		if q[i] != '\\' || i+1 == len(q) {
			b = append(b, q[i])
			continue
		}
		i++
		if v, err := strconv.ParseUint(q[i:min(i+3, len(q))], 8, 8); err == nil && i+3 <= len(q) {
			b, i = append(b, byte(v)), i+2
		} else if c := strings.IndexByte("abvf", q[i]); c >= 0 {
			b = append(b, "\a\b\v\f"[c])
		} else {
			b = append(b, '\\', q[i])
		}
	}
	return string(b)
}

// unescapeHTML returns s with its HTML entities decoded where it has one:
// numeric, as html.EscapeString writes quotes (&#34;, &#39;), or named, as
// the tools that write HTML files (a site or documentation built into a
// repository) write them (&quot;, &nbsp;), or one of legacyEntities without
// its ';', which HTML decodes too (a minifier drops it). What it decodes is
// read as asciiForms reads it: an entity's Unicode blank or fullwidth form
// (&nbsp;, &#160;, &ensp;, &#65306;) is no separator to the rules, and a
// reading is delivered only where it shows a secret by itself.
func unescapeHTML(s string) string {
	for i := strings.IndexByte(s, '&'); i >= 0; i = indexByteFrom(s, '&', i+1) {
		j := i + 1
		for j < len(s) && j-i <= 8 && (s[j]|0x20 >= 'a' && s[j]|0x20 <= 'z') {
			j++
		}
		if j < len(s) && (j == i+1 && s[j] == '#' || j > i+1 && s[j] == ';') ||
			slices.ContainsFunc(legacyEntities, func(e string) bool { return strings.HasPrefix(s[i+1:j], e) }) {
			return asciiForms(html.UnescapeString(s))
		}
	}
	return s
}

// legacyEntities are the entities html.UnescapeString decodes without a ';'
// that a secret's text may need: a quote, '&', '<', '>' (in either case, as
// HTML names them) and a blank.
var legacyEntities = []string{"quot", "amp", "lt", "gt", "nbsp", "QUOT", "AMP", "LT", "GT"}

// unescapeURL returns a URL or path s (a text without blanks or lines), or
// a text that holds a URL escaped in another's query (its "://" as
// %3A%2F%2F: a webhook's address behind a relay, in a file), with each %XX
// escape decoded; a % without two hex digits stays. Other texts with blanks
// are not read so: byte by byte, a file with a % would cost much more.
func unescapeURL(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 || (strings.IndexByte(s, '\n') >= 0 || strings.IndexByte(s, ' ') >= 0) &&
		!strings.Contains(s[i:], "%3A%2F%2F") && !strings.Contains(s[i:], "%3a%2f%2f") {
		return s
	}
	b := []byte(s[:i])
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b, i = append(b, byte(v)), i+2
				continue
			}
		}
		b = append(b, s[i])
	}
	return string(b)
}

// mailHeader matches a From or Subject header of a mail (a .patch, as git
// format-patch writes one) folded over lines: "Subject: [PATCH] Authorization:
// token\n 0a1b…"; encodedWords a run of RFC 2047 encoded words, the blanks
// between them included: "=?UTF-8?q?GH=3Dghp=5FR2d2?=\n =?UTF-8?q?C3po?=".
var mailHeader, encodedWords = regexp.MustCompile(`(?m)^(?:From|Subject): [^\n]*(?:\n[ \t][^\n]*)+`),
	regexp.MustCompile(`=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=(?:\s+=\?[^?\s]+\?[BbQq]\?[^?\s]*\?=)*`)

// wordDecoder decodes encoded words of any charset: one it does not convert
// (ISO-8859-2, as git writes for such an i18n.commitEncoding) as its bytes,
// whose ASCII, all a secret the passes know holds, is ASCII in them all.
var wordDecoder = &mime.WordDecoder{CharsetReader: func(_ string, r io.Reader) (io.Reader, error) { return r, nil }}

// mailHeaders returns the mails in s (a .patch: text with a Subject line
// after its first) with their folded From and Subject headers unfolded (their
// line ends removed) and each run of encoded words decoded and joined (Q's
// "_" is a blank, "=5F" an underscore).
func mailHeaders(s string) string {
	if !strings.Contains(s, "\nSubject: ") {
		return s
	}
	s = mailHeader.ReplaceAllStringFunc(s, func(h string) string { return strings.ReplaceAll(strings.ReplaceAll(h, "\r\n", ""), "\n", "") })
	return encodedWords.ReplaceAllStringFunc(s, func(w string) string {
		d, _ := wordDecoder.DecodeHeader(w) // never fails: every charset is read
		return d
	})
}
