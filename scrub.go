package main

// The scrubbing walk (README, "Results"): the streaming pass over a JSON
// answer that runs redaction, masking and hidden-character removal on every
// string (redact.go), turns file contents to text or base64 within bounds
// (withholding, as null, bytes it cannot read: compressed or archived data,
// a secret only a hidden-character or UTF-16 reading shows; and the data of
// git binary patches), and cuts long lists and texts; and the JSON scanner
// it, compact.go and the OpenAPI reader share. It decides nothing about
// access: it never drops a member it cannot classify and never returns JSON
// it did not re-encode.

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"mime"
	"regexp"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// scrubber runs the string passes of the pipeline (scrubString, which gives
// their order and why) over one result and collects what it did.
type scrubber struct {
	red       *redactor
	mask      bool
	base      string         // if set, strings that start with this URL are made relative
	maxBinary int            // MAX_BINARY_BYTES
	rules     []string       // masking rules that matched, sorted
	hidden    int            // hidden characters removed from prose
	marked    map[string]int // invisible characters marked in file text, by code point and carrier
	files     *fileReport    // base64 file content fields met
	fileMax   int            // longest decoded file text, as a JSON string; 0: no limit
	fileCut   int            // decoded file texts cut to fileMax
}

// fileReport says what became of the base64 file content fields of an
// answer (fileFields): decoded to text, kept as base64, or left out.
type fileReport struct {
	Decoded []string `json:"decoded_to_text,omitempty"` // fields whose base64 became text, e.g. ContentsResponse.content
	Text    int      `json:"text"`                      // values delivered as text
	Binary  int      `json:"binary,omitempty"`          // values kept as base64 (not UTF-8)
	Omitted int      `json:"omitted_over_max_binary_bytes,omitempty"`
	Sealed  int      `json:"omitted_unreadable,omitempty"` // compressed, or a secret split or in UTF-16: the passes cannot read it (binary)
}

// file scrubs file text: as str, except that invisible characters are shown
// as markers (<U+202E>) and counted, not removed, so that a review sees them.
// Text where a secret shows only once they are removed is scrubbed as prose:
// a marker must not split a secret from redaction.
func (sc *scrubber) file(s string) string {
	s = withholdPatches(s)
	hidden := sc.hidden
	out := sc.str(s)
	if sc.hidden == hidden {
		return out
	}
	stripped, _ := stripHidden(s)
	if clean, rules, _ := scrubString(stripped, sc.red, sc.mask); clean != stripped || len(rules) > 0 {
		return out
	}
	sc.hidden = hidden
	if sc.marked == nil {
		sc.marked = map[string]int{}
	}
	return sc.str(markHidden(s, sc.marked))
}

// sealedMagic are signatures of compressed archives and documents (zip and
// its end record, xz, zstd, 7z, rar, PDF, git bundles and packs, a bzip2
// block): redaction and masking cannot read what they hold. They are looked
// for anywhere, so that a byte before one cannot hide it; too short a
// signature (zlib's two bytes) would withhold images and programs by chance.
var sealedMagic = []string{"PK\x03\x04", "PK\x05\x06", "\xfd7zXZ\x00", "\x28\xb5\x2f\xfd", "7z\xbc\xaf\x27\x1c", "Rar!\x1a\x07", "%PDF-",
	"# v2 git bundle\n", "# v3 git bundle\n", "PACK\x00\x00\x00", "1AY&SY"}

// compressed reports whether b holds a compressed archive or document anywhere:
// one of sealedMagic, or a gzip header (its magic and method, flags without
// their reserved bits, a known extra flag and operating system).
func compressed(b []byte) bool {
	if slices.ContainsFunc(sealedMagic, func(m string) bool { return bytes.Contains(b, []byte(m)) }) {
		return true
	}
	for i := 0; ; i++ {
		j := bytes.Index(b[i:], []byte("\x1f\x8b\x08"))
		if j < 0 || i+j+10 > len(b) {
			return false
		}
		if h := b[i+j:]; h[3]&0xe0 == 0 && (h[8] == 0 || h[8] == 2 || h[8] == 4) && (h[9] <= 13 || h[9] == 255) {
			return true
		}
		i += j
	}
}

// binaryPatch is a hunk of a git binary patch: its lines are base85 of
// zlib-compressed bytes, which redaction and masking cannot read. In a diff
// of a stored patch its lines start with '+', '-' or a space; they may end
// in CRLF.
var binaryPatch = regexp.MustCompile("(?m)^([+ -]*)((?:literal|delta) [0-9]+)(\r?\n)(?:[+ -]*[A-Za-z][0-9A-Za-z!#$%&()*+;<=>?@^_`{|}~-]+\r?\n)+")

// withholdPatches replaces the data of every git binary patch hunk in s
// (text or not) with a line saying it was withheld.
func withholdPatches(s string) string {
	if !strings.Contains(s, "GIT binary patch") {
		return s
	}
	return binaryPatch.ReplaceAllString(s, "$1$2$3$1[base85 of compressed bytes, withheld: redaction and masking cannot read it]$3")
}

// binary redacts and masks secrets in the bytes of binary content, which may
// hold text (a PNG's text chunk); it returns b itself when nothing matched,
// and nil (withheld) for bytes the passes cannot read: a compressed archive
// or document (sealedMagic), or bytes in which a secret shows only in one of
// their binaryViews.
func (sc *scrubber) binary(b []byte) []byte {
	if compressed(b) {
		return nil
	}
	s, rules := redactMask(withholdPatches(string(b)), sc.red, sc.mask)
	for _, v := range binaryViews(s) {
		if masked, _ := maskString(v); sc.red.redact(v) != v || sc.mask && masked != v {
			return nil
		}
	}
	sc.note(rules...)
	if s == string(b) {
		return b
	}
	return []byte(s)
}

// str scrubs one decoded string. The instance URL goes first (its hidden
// characters removed): a key masked only after it ("…:3000AKIA…" is no word
// boundary) would be bared by a later trim.
func (sc *scrubber) str(s string) string {
	n := 0
	if sc.base != "" {
		s, n = stripHidden(s)
		s = strings.TrimPrefix(s, sc.base)
	}
	out, rules, m := scrubString(s, sc.red, sc.mask)
	sc.hidden += n + m
	sc.note(rules...)
	return out
}

// note records that masking rules matched.
func (sc *scrubber) note(rules ...string) {
	for _, r := range rules {
		if i, found := slices.BinarySearch(sc.rules, r); !found {
			sc.rules = slices.Insert(sc.rules, i, r)
		}
	}
}

// fitString returns the longest prefix of s, in whole characters, whose JSON
// string encoding (quotes included) takes at most max bytes.
func fitString(s string, max int) string {
	n := 2
	for i, r := range s {
		switch {
		case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
			n += 2
		case r < 0x20 || r == '\u2028' || r == '\u2029' || r == utf8.RuneError:
			n += 6
		default:
			n += utf8.RuneLen(r)
		}
		if n > max {
			return s[:i]
		}
	}
	return s
}

// mediaClass is how an answer's body is bounded and delivered. It is decided
// once per answer, by classifyMedia in send, and the pipeline follows it.
type mediaClass int

const (
	binaryBody mediaClass = iota // read up to MAX_BINARY_BYTES; text if its bytes are UTF-8, else base64
	jsonBody                     // read up to maxReadBytes; rewritten as JSON
	textBody                     // read up to maxReadBytes; text if UTF-8, else binary
)

// classifyMedia is the one media-type rule: a JSON media type (application/json,
// anything +json) is JSON, text/* is text, and anything else is binary,
// including an answer that declares no Content-Type or one that cannot be
// parsed: the class with the tighter bound.
func classifyMedia(contentType string) mediaClass {
	media, _, err := mime.ParseMediaType(contentType)
	switch {
	case err != nil:
		return binaryBody
	case media == "application/json" || strings.HasSuffix(media, "+json"):
		return jsonBody
	case strings.HasPrefix(media, "text/"):
		return textBody
	}
	return binaryBody
}

// body decodes and scrubs a successful answer by its class: JSON is rewritten
// string by string without building a tree and its top-level array cut to
// maxItems; a text or binary body whose bytes are UTF-8 is file text;
// other bytes are base64 of at most MAX_BINARY_BYTES. The result fits
// maxChars. JSON that is not valid, or binary too large or unreadable, is an
// error of the kind it is reported under: the answer is withheld.
func (sc *scrubber) body(ex *sent, maxItems, maxChars int) (any, *truncation, *kindError) {
	var s string // the answer as text, scrubbed
	switch {
	case len(ex.body) == 0:
		return nil, nil, nil
	case ex.class == jsonBody && !json.Valid(ex.body):
		err := json.Unmarshal(ex.body, new(json.RawMessage)) // the syntax error, found without decoding
		return nil, nil, &kindError{"malformed_response", fmt.Errorf("the answer says %s but is not valid JSON (%d bytes; %v); it is withheld", ex.header.Get("Content-Type"), len(ex.body), err)}
	case ex.class == jsonBody:
		sc.fileMax = max(maxChars-2048, maxChars/2) // room for the file object's other members
		if out, total, ends, ok := sc.json(ex.body, maxItems, maxChars); ok {
			data, t := boundJSON(out, total, ends, maxChars)
			if sc.fileCut > 0 {
				t = cmp.Or(t, &truncation{})
				t.FileText = sc.fileCut
			}
			return data, t, nil
		}
		s = sc.str(string(ex.body)) // nested deeper than maxJSONDepth: returned as text
	case utf8.Valid(ex.body):
		s = sc.file(string(ex.body))
	case len(ex.body) > sc.maxBinary:
		return nil, nil, &kindError{"payload_too_large", fmt.Errorf("binary answer of %d bytes, over MAX_BINARY_BYTES (%d); it is withheld", len(ex.body), sc.maxBinary)}
	default:
		b := sc.binary(ex.body)
		if b == nil {
			return nil, nil, &kindError{"unreadable_content", fmt.Errorf("binary answer of %d bytes that redaction and masking cannot read (compressed, or holding a secret split by hidden characters or in UTF-16); it is withheld: read the files it holds one by one", len(ex.body))}
		}
		b64 := base64.StdEncoding.EncodeToString(b)
		if len(b64)+100 > maxChars {
			return nil, nil, &kindError{"payload_too_large", fmt.Errorf("binary answer of %d bytes: its base64 (%d characters) does not fit MAX_TOOL_RESPONSE_CHARS; it is withheld", len(ex.body), len(b64))}
		}
		return map[string]any{"content_base64": b64, "content_type": ex.header.Get("Content-Type"), "size": len(ex.body)}, nil, nil
	}
	if p := fitString(s, maxChars); len(p) < len(s) {
		return p, &truncation{Chars: true}, nil
	}
	return s, nil, nil
}

// boundJSON cuts rewritten JSON to maxChars bytes: a top-level array keeps as
// many whole elements as fit; anything else becomes a prefix of its text.
func boundJSON(out []byte, total int, ends []int, maxChars int) (any, *truncation) {
	var t *truncation
	if total > len(ends) {
		t = &truncation{ItemsKept: len(ends), ItemsTotal: total}
	}
	if len(out) <= maxChars {
		return json.RawMessage(out), t
	}
	if ends != nil {
		k, _ := slices.BinarySearch(ends, maxChars) // elements whose text and ']' fit
		if k > 0 {
			return json.RawMessage(append(out[:ends[k-1]:ends[k-1]], ']')), &truncation{ItemsKept: k, ItemsTotal: total}
		}
	}
	return fitString(string(out), maxChars), &truncation{Chars: true, ItemsTotal: total}
}

// json rewrites valid JSON text: every member name and string value goes
// through str, secret members are masked whole, and a top-level array keeps
// at most maxItems elements, and none once maxChars bytes are written. It
// returns the text, the number of top-level elements, the output offset after
// each element kept (nil for a non-array), and false for JSON nested deeper
// than maxJSONDepth, which it never walks.
func (sc *scrubber) json(src []byte, maxItems, maxChars int) ([]byte, int, []int, bool) {
	out := make([]byte, 0, min(len(src), maxChars)+16)
	i := skipSpace(src, 0)
	if src[i] != '[' {
		out, ok := sc.value(out, src[i:], maxJSONDepth)
		return out, 0, nil, ok
	}
	out = append(out, '[')
	ends := []int{}
	total := 0
	for i = skipSpace(src, i+1); src[i] != ']'; {
		end, _ := skipValue(src, i)
		if total++; total <= maxItems && len(out) <= maxChars {
			if len(ends) > 0 {
				out = append(out, ',')
			}
			var ok bool
			if out, ok = sc.value(out, src[i:end], maxJSONDepth-1); !ok {
				return nil, 0, nil, false
			}
			ends = append(ends, len(out))
		}
		if i = skipSpace(src, end); src[i] == ',' {
			i = skipSpace(src, i+1)
		}
	}
	return append(out, ']'), total, ends, true
}

// value rewrites one valid JSON value of at most maxDepth levels; deeper
// values make it stop and return false. File content in base64 (fileFields)
// becomes text where its bytes are UTF-8.
func (sc *scrubber) value(out, b []byte, maxDepth int) ([]byte, bool) {
	var inObject [maxJSONDepth + 1]bool
	var objStart [maxJSONDepth + 1]int
	var enc [maxJSONDepth + 1]int // per object: output offset of its "encoding" value + 1, or -1 once it is to become "text"
	depth, wantKey, isValue, key, keyOut := 0, false, false, "", 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '{', '[':
			if depth++; depth > maxDepth {
				return out, false
			}
			inObject[depth], objStart[depth], wantKey, isValue, enc[depth] = c == '{', i, c == '{', false, 0
			out = append(out, c)
		case '}', ']':
			depth--
			out = append(out, c)
		case ',':
			wantKey = inObject[depth]
			out = append(out, c)
		case ':':
			isValue = true
			out = append(out, c)
		case '"':
			end, _ := skipValue(b, i)
			lit, obj, asKey, asValue := b[i:end], b[objStart[depth]:], wantKey, isValue
			wantKey, isValue, i = false, false, end-1
			if asValue && (key == "content" || key == "content_base64" || key == "encoding" || key == "sidebar" || key == "footer") {
				var done bool
				if out, done = sc.fileMember(out, key, lit, obj, &enc[depth], keyOut); done {
					continue
				}
			}
			s, _ := decodeString(lit)
			switch {
			case asKey:
				key, _ = stripHidden(s)
				keyOut = len(out)
			case asValue && key == "target" && len(s) == 1024: // a link's target, cut so by Gitea without a mark
				s += "..." // for the rules' cut keys; delivered so only where that masks one
			case asValue && key == "description" && cutDescription(s): // as a target's
				s += "..."
			case asValue && key == "title" && wikiTitle(b[end:]): // a wiki page's file name, its dashes shown as blanks
				s = strings.ReplaceAll(s, " ", "-") // for the rules; delivered so only where that masks one
			case asValue && sc.mask && s != "":
				if rule := secretMember(key, s, obj); rule != "" {
					sc.note(rule)
					out = append(out, `"`+maskedMarker+`"`...)
					continue
				}
			}
			if ns := sc.str(s); ns != s {
				out = appendString(out, ns)
			} else {
				out = append(out, lit...)
			}
		default:
			if c > ' ' {
				out = append(out, c)
			}
		}
	}
	return out, true
}

// actionsDescriptionMax is the length, in characters, to which Gitea cuts
// an Actions variable's and secret's description without a mark
// (util.TruncateRunes to VariableDescriptionMaxLength in
// models/actions/variable.go and SecretDescriptionMaxLength in
// models/secret/secret.go); teamDescriptionMax the length in bytes to which
// it cuts a team's when the team is edited, though it admits 255 characters
// (services/org/team.go UpdateTeam). A key across either cut would be too
// short for its whole pattern.
const actionsDescriptionMax, teamDescriptionMax = 4096, 255

// cutDescription reports whether the description s may be one that Gitea
// cut without a mark. A team's cut inside a character ends in U+FFFD, and
// so no key ends there.
func cutDescription(s string) bool {
	return len(s) == teamDescriptionMax || len(s) >= actionsDescriptionMax && utf8.RuneCountInString(s) == actionsDescriptionMax
}

// wikiTitle reports whether rest, the JSON after a title, goes on with an html_url to a wiki
// page: Gitea titles a page pushed as a file by its name, dashes as blanks (WebPathToUserTitle).
func wikiTitle(rest []byte) bool {
	v, ok := bytes.CutPrefix(rest, []byte(`,"html_url":"`))
	return ok && bytes.Contains(v[:max(bytes.IndexByte(v, '"'), 0)], []byte("/wiki/"))
}

// fileField is a member of Gitea's answers that carries file bytes in
// base64, found from the response definitions of the OpenAPI document. The
// object is told apart by members it has (with "encoding" saying "base64").
type fileField struct {
	definition, member string
	has                []string // members the object has
	example, want      string   // an answer holding it, and as it is delivered
}

// fileFields are where Gitea 1.26.0 answers carry file bytes in base64, in
// the order they are tried. ContentsResponse is the answer of repoGetContents,
// each element of repoGetFileContents(Post) and repoGetContentsList, the
// "content" of the FileResponse of repoCreateFile, repoUpdateFile and
// repoApplyDiffPatch, and each of the "files" of repoChangeFiles'
// FilesResponse. GitBlobResponse is GetBlob's answer; WikiPage that of
// repoGetWikiPage, repoCreateWikiPage and repoEditWikiPage, whose sidebar
// and footer are the base64 of the _Sidebar and _Footer pages (Gitea's
// routers/api/v1/repo/wiki.go, getWikiPage), not described as such.
var fileFields = []fileField{{
	definition: "ContentsResponse", member: "content", has: []string{"type", "encoding"},
	example: `{"name":"a.txt","type":"file","encoding":"base64","content":"aGkK","sha":"x"}`,
	want:    `{"name":"a.txt","type":"file","encoding":"text","content":"hi\n","sha":"x"}`,
}, {
	definition: "GitBlobResponse", member: "content", has: []string{"encoding"},
	example: `{"content":"aGkK","encoding":"base64","sha":"x","size":3}`,
	want:    `{"content":"hi\n","encoding":"text","sha":"x","size":3}`,
}, {
	definition: "WikiPage", member: "content_base64",
	example: `{"title":"Home","content_base64":"aGkK","commit_count":1}`,
	want:    `{"title":"Home","content":"hi\n","encoding":"text","commit_count":1}`,
}, {
	definition: "WikiPage", member: "sidebar", has: []string{"commit_count"},
	example: `{"title":"Home","commit_count":1,"sidebar":"aGkK"}`,
	want:    `{"title":"Home","commit_count":1,"sidebar":"hi\n"}`,
}, {
	definition: "WikiPage", member: "footer", has: []string{"commit_count"},
	example: `{"title":"Home","commit_count":1,"footer":"aGkK"}`,
	want:    `{"title":"Home","commit_count":1,"footer":"hi\n"}`,
}}

// fileMember writes the string member key: lit (a JSON string literal) of
// the object obj if it is file content or its encoding, and reports whether
// it did. Content whose bytes are UTF-8 becomes file text, and its encoding
// "text"; other bytes stay base64, redacted and masked, up to
// MAX_BINARY_BYTES, and null beyond. enc is the object's state (see value);
// keyOut where the member's name starts in out.
func (sc *scrubber) fileMember(out []byte, key string, lit, obj []byte, enc *int, keyOut int) ([]byte, bool) {
	if key == "encoding" {
		if *enc == -1 && string(lit) == `"base64"` {
			return append(out, `"text"`...), true
		}
		*enc = len(out) + 1
		return out, false
	}
	f := matchFileField(key, obj)
	if f == nil {
		return out, false
	}
	b64 := lit[1 : len(lit)-1]
	if bytes.IndexByte(b64, '\\') >= 0 { // escaped: decoded first
		s, _ := decodeString(lit)
		b64 = []byte(s)
	}
	raw, err := base64.StdEncoding.AppendDecode(nil, b64)
	if err != nil {
		return out, false
	}
	if sc.files == nil {
		sc.files = &fileReport{}
	}
	switch {
	case utf8.Valid(raw):
		sc.files.Text++
		if name := f.definition + "." + f.member; !slices.Contains(sc.files.Decoded, name) {
			sc.files.Decoded = append(sc.files.Decoded, name)
		}
		text := sc.file(string(raw))
		const b64 = `"base64"`
		switch at := *enc - 1; {
		case f.member == "content_base64":
			out = append(out[:keyOut], `"content":`...)
		case f.member != "content": // sidebar, footer: in place, the report says so
		case at >= 0 && len(out) >= at+len(b64) && string(out[at:at+len(b64)]) == b64:
			out = append(out[:at], append([]byte(`"text"`), out[at+len(b64):]...)...)
		default:
			*enc = -1
		}
		start, fits := len(out), sc.fileMax == 0 || len(text)+2 <= sc.fileMax // unless escapes make it longer
		if fits {
			out = appendString(out, text)
		}
		if sc.fileMax > 0 && (!fits || len(out)-start > sc.fileMax) {
			cut := fitString(text, sc.fileMax)
			out = appendString(out[:start], cut)
			if len(cut) < len(text) {
				sc.fileCut++
			}
		}
		if f.member == "content_base64" {
			out = append(out, `,"encoding":"text"`...)
		}
		return out, true
	case len(raw) > sc.maxBinary:
		sc.files.Omitted++
		return append(out, "null"...), true
	}
	b := sc.binary(raw)
	if b == nil {
		sc.files.Sealed++
		return append(out, "null"...), true
	}
	sc.files.Binary++
	if &b[0] != &raw[0] {
		return appendString(out, base64.StdEncoding.EncodeToString(b)), true
	}
	return append(out, lit...), true
}

// matchFileField returns the row of fileFields for the member key of the
// object obj, or nil.
func matchFileField(key string, obj []byte) *fileField {
	m, _ := members(obj) // obj runs past its end: the error there is of no concern
	for k := range fileFields {
		f := &fileFields[k]
		if f.member == key && !slices.ContainsFunc(f.has, func(h string) bool {
			v, found := m[h]
			return !found || h == "encoding" && string(v) != `"base64"`
		}) {
			return f
		}
	}
	return nil
}

// secretMember returns the rule that masks a string member named key, of
// value s, whole, or "": a secret field (a webhook's authorization_header),
// the sha1 of an access token object (one that also has token_last_eight or
// scopes; a package file's sha1 is left alone), a value its name says is a
// secret (namedSecret), or an Actions variable's data, read with its name as
// generic_secret reads NAME=value in a .env file (AWS_SECRET_ACCESS_KEY,
// SECRET_KEY, DB_PASSWORD_PROD: the word need not end the name, which the
// variable's owner chose). obj starts at the enclosing object.
func secretMember(key, s string, obj []byte) string {
	if key == "sha1" {
		end, _ := skipValue(obj, 0)
		if bytes.Contains(obj[:end], []byte(`"token_last_eight":`)) || bytes.Contains(obj[:end], []byte(`"scopes":`)) {
			return "gitea_token_sha1"
		}
	}
	if secretFields[strings.ToLower(key)] {
		return "secret_field"
	}
	if key == "data" { // an Actions variable: {"name": "AWS_SECRET_ACCESS_KEY", "data": "…"}
		m, _ := members(obj)
		name, _ := decodeString(m["name"])
		if _, rules := maskString(name + ": " + string(appendString(nil, s))); name != "" && slices.Contains(rules, "generic_secret") {
			return "generic_secret"
		}
		return ""
	}
	if namedSecret(key, s) {
		return "generic_secret"
	}
	return ""
}

// jsonEscape and jsonUnescape map a byte to the letter of its one-character
// escape, and that letter back to the byte; 0 for any other byte.
var jsonEscape, jsonUnescape = [256]byte{'"': '"', '\\': '\\', '\n': 'n', '\t': 't', '\r': 'r'},
	[256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}

// appendString appends s as a JSON string, copying runs of bytes that need
// no escape whole.
func appendString(out []byte, s string) []byte {
	const hex = "0123456789abcdef"
	out = append(out, '"')
	at := 0 // s[:at] is written
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		out = append(out, s[at:i]...)
		at = i + 1
		if e := jsonEscape[c]; e != 0 {
			out = append(out, '\\', e)
		} else {
			out = append(out, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
		}
	}
	return append(append(out, s[at:]...), '"')
}

// maxJSONDepth is the deepest JSON from Gitea that is walked; deeper JSON is
// returned as text.
const maxJSONDepth = 100

// members splits a JSON object into its members without decoding their
// values: each value is the raw bytes of one JSON value, checked when it is
// decoded. Duplicate keys keep the last value, as encoding/json does.
func members(b []byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	return out, eachMember(b, func(key string, v []byte) bool { out[key] = v; return true })
}

// eachMember calls fn with each member of the JSON object b, in order, until
// fn returns false; the members after that are not looked at.
func eachMember(b []byte, fn func(key string, v []byte) bool) error {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return errors.New("not a JSON object")
	}
	if i = skipSpace(b, i+1); i < len(b) && b[i] == '}' && skipSpace(b, i+1) == len(b) {
		return nil
	}
	for {
		if i >= len(b) || b[i] != '"' {
			return fmt.Errorf("offset %d: want a member name", i)
		}
		end, err := skipValue(b, i)
		if err != nil {
			return err
		}
		key, err := decodeString(b[i:end])
		if err != nil {
			return fmt.Errorf("offset %d: %w", i, err)
		}
		if i = skipSpace(b, end); i >= len(b) || b[i] != ':' {
			return fmt.Errorf("offset %d: want ':'", i)
		}
		i = skipSpace(b, i+1)
		if end, err = skipValue(b, i); err != nil {
			return err
		} else if end == i {
			return fmt.Errorf("offset %d: want a value", i)
		}
		if !fn(key, b[i:end]) {
			return nil
		}
		switch i = skipSpace(b, end); {
		case i < len(b) && b[i] == ',':
			i = skipSpace(b, i+1)
		case i < len(b) && b[i] == '}' && skipSpace(b, i+1) == len(b):
			return nil
		default:
			return fmt.Errorf("offset %d: want ',' or a final '}'", i)
		}
	}
}

// skipValue returns the offset just past the JSON value that starts at b[i].
// It follows strings and nesting only; the value's content is checked when it
// is decoded.
func skipValue(b []byte, i int) (int, error) {
	depth := 0
	for j := i; j < len(b); j++ {
		switch b[j] {
		case '"':
			for {
				k := bytes.IndexByte(b[j+1:], '"')
				if k < 0 {
					return 0, fmt.Errorf("offset %d: unterminated string", i)
				}
				j += k + 1
				n := 0 // backslashes before the quote
				for b[j-1-n] == '\\' {
					n++
				}
				if n%2 == 0 {
					break
				}
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 {
				return j, nil
			}
			depth--
		case ',', ':', ' ', '\t', '\n', '\r':
			if depth == 0 {
				return j, nil
			}
			continue
		default:
			continue
		}
		if depth == 0 {
			return j + 1, nil
		}
	}
	if depth > 0 || i >= len(b) {
		return 0, fmt.Errorf("offset %d: unexpected end of JSON", i)
	}
	return len(b), nil
}

// decodeString decodes a JSON string as encoding/json does (FuzzDecodeString).
// Strings without escapes are copied; escapes are decoded here, and anything
// unusual goes to encoding/json, which refuses a raw control character or quote.
func decodeString(b []byte) (string, error) {
	if len(b) < 2 || b[0] != '"' || b[len(b)-1] != '"' || !utf8.Valid(b) {
		return decodeStringJSON(b)
	}
	s := b[1 : len(b)-1]
	i := slices.IndexFunc(s, func(c byte) bool { return c < 0x20 || c == '"' || c == '\\' })
	if i < 0 {
		return string(s), nil
	}
	out := append(make([]byte, 0, len(s)), s[:i]...)
	for ; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == '"' {
			return decodeStringJSON(b)
		}
		if c != '\\' {
			out = append(out, c)
			continue
		}
		if i+1 >= len(s) {
			return decodeStringJSON(b)
		}
		i++
		if c := jsonUnescape[s[i]]; c != 0 {
			out = append(out, c)
			continue
		}
		r, ok := hex4(s, i+1)
		if s[i] != 'u' || !ok {
			return decodeStringJSON(b)
		}
		i += 4
		if utf16.IsSurrogate(r) {
			r2, ok := hex4(s, i+3)
			if ok && i+2 < len(s) && s[i+1] == '\\' && s[i+2] == 'u' && utf16.DecodeRune(r, r2) != utf8.RuneError {
				r, i = utf16.DecodeRune(r, r2), i+6
			} else {
				r = utf8.RuneError
			}
		}
		out = utf8.AppendRune(out, r)
	}
	return string(out), nil
}

// hex4 reads the four hex digits of a \u escape at s[i:].
func hex4[T string | []byte](s T, i int) (rune, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var r rune
	for j := i; j < i+4; j++ {
		c := s[j]
		d := strings.IndexByte("0123456789abcdef", c|0x20) // c|0x20 folds A-F to a-f
		if c < '0' || d < 0 {
			return 0, false
		}
		r = r<<4 | rune(d)
	}
	return r, true
}

// decodeStringJSON decodes a JSON string with encoding/json.
func decodeStringJSON(b []byte) (string, error) {
	var s string
	err := json.Unmarshal(b, &s)
	return s, err
}

// skipSpace returns the offset of the first non-space byte at or after i.
func skipSpace[T string | []byte](b T, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}
