package main

// Hidden text (README, "Results", step 3): the code points that display as
// nothing a reader notices and so can carry text a reviewer cannot see
// (invisibleCarriers, each with its examples), removed from every string
// before redaction and masking (stripHidden, in scrubString), counted, or
// marked where a file's text keeps them visible (markHidden); and their
// literal JSON escapes (stripEscapedHidden). Every removal is counted, none
// is silent. JSON text is also read with its escapes decoded (unescapeJSON,
// one of textViews).

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// stripEscapedHidden removes from s the literal JSON escapes of
// invisibleCarriers, \u0001, or \udb40\udc49 for a surrogate pair, each
// backslash with the run of them before it (JSON nested more than once). It
// returns the text and how many it removed.
func stripEscapedHidden(s string) (string, int) {
	var spans [][2]int
	at := 0 // the end of the last escape removed
	for i := 0; ; {
		k := strings.Index(s[i:], `\u`)
		if k < 0 {
			break
		}
		start, end := i+k, i+k+6
		for start > at && s[start-1] == '\\' {
			start--
		}
		r, ok := hex4(s, i+k+2)
		if ok && utf16.IsSurrogate(r) { // the other half, after its own run of backslashes
			j := end
			for j < len(s) && s[j] == '\\' {
				j++
			}
			if r2, ok2 := hex4(s, j+1); j > end && j < len(s) && s[j] == 'u' && ok2 {
				r, end = utf16.DecodeRune(r, r2), j+5
			}
		}
		if !ok || carrierOf(r) == nil {
			i += k + 2
			continue
		}
		spans = append(spans, [2]int{start, end})
		at, i = end, end
	}
	if spans == nil {
		return s, 0
	}
	return replaceSpans(s, spans, ""), len(spans)
}

// invisibleCarrier is a range of code points that display as nothing (or as
// nothing a reader notices) and so can carry text a reviewer cannot see.
type invisibleCarrier struct {
	lo, hi  rune
	name    string
	example string // text with one of them, as an attacker or a legitimate text uses it
}

// invisibleCarriers are the hidden-text characters: Unicode's
// Default_Ignorable_Code_Point (DerivedCoreProperties.txt), which includes the
// bidi controls of Trojan Source (CVE-2021-42574), every format character
// (category Cf: the interlinear annotation and Egyptian format controls
// among them) and every control character but tab, newline and carriage
// return (a NUL or DEL inside a secret would split it from masking, and
// shows as nothing). Sorted, not overlapping. In prose they are removed
// (stripHidden), in file text shown as markers (markHidden).
var invisibleCarriers = []invisibleCarrier{
	{0x0000, 0x0008, "control character", "ghp_R2d2\x00C3po"},
	{0x000B, 0x000C, "control character", "page\fbreak\v"},
	{0x000E, 0x001F, "control character", "\x1b[8mhidden"},
	{0x007F, 0x009F, "control character", "to\x7fken\u0085"},
	{0x00AD, 0x00AD, "soft hyphen", "pass\u00adword"},
	{0x034F, 0x034F, "combining grapheme joiner", "ad\u034fmin"},
	{0x0600, 0x0605, "prepended concatenation mark", "\u06001\u0605"},
	{0x061C, 0x061C, "bidi control", "\u061c1 + 2"},
	{0x06DD, 0x06DD, "prepended concatenation mark", "\u06dd12"},
	{0x070F, 0x070F, "syriac abbreviation mark", "a\u070fb"},
	{0x0890, 0x0891, "prepended concatenation mark", "\u08901"},
	{0x08E2, 0x08E2, "prepended concatenation mark", "\u08e21"},
	{0x115F, 0x1160, "hangul filler", "x\u115f\u1160y"},
	{0x17B4, 0x17B5, "khmer inherent vowel", "a\u17b4b"},
	{0x180B, 0x180F, "mongolian variation selector or vowel separator", "a\u180eb"},
	{0x200B, 0x200D, "zero-width character", "ig\u200bnore"},
	{0x200E, 0x200F, "bidi control", "a\u200fb"},
	{0x202A, 0x202E, "bidi control", "access_level != \"user\u202e \u202b// Check if admin\u202c\" {"},
	{0x2060, 0x2060, "zero-width character", "word\u2060joiner"},
	{0x2061, 0x2065, "invisible operator", "f\u2061(x)\u2062y\u2063z\u2064w"},
	{0x2066, 0x2069, "bidi control", "\u2067abc\u2069"},
	{0x206A, 0x206F, "deprecated format character", "a\u206ab"},
	{0x3164, 0x3164, "hangul filler", "\u3164"},
	{0xFE00, 0xFE0F, "variation selector", "I\ufe09G\ufe0eN"},
	{0xFEFF, 0xFEFF, "zero-width character", "\ufeffhello"},
	{0xFFA0, 0xFFA0, "hangul filler", "a\uffa0b"},
	{0xFFF0, 0xFFF8, "unassigned ignorable", "a\ufff0b"},
	{0xFFF9, 0xFFFB, "interlinear annotation", "\ufff9base\ufffahidden note\ufffb"},
	{0x110BD, 0x110BD, "kaithi number sign", "\U000110bd1"},
	{0x110CD, 0x110CD, "kaithi number sign", "\U000110cd1"},
	{0x13430, 0x1343F, "egyptian hieroglyph format control", "ghp_R2d2\U00013430C3po"},
	{0x1BCA0, 0x1BCA3, "shorthand format control", "a\U0001bca0b"},
	{0x1D173, 0x1D17A, "musical format control", "a\U0001d173b"},
	{0xE0000, 0xE007F, "tag", "hi\U000e0049\U000e0047\U000e004e\U000e007f"},
	{0xE0080, 0xE00FF, "unassigned ignorable", "a\U000e0080b"},
	{0xE0100, 0xE01EF, "variation selector", "x\U000e0149\U000e0147"},
	{0xE01F0, 0xE0FFF, "unassigned ignorable", "a\U000e0ff0b"},
}

// invisibleSeconds has, for each first byte of the UTF-8 encoding of an
// invisible carrier, a bit for each second byte (a continuation byte, 0x80 to
// 0xBF) that one of them has, and every bit for a carrier of one byte: two
// loads rule out almost every other text. hiddenBMP is the carriers of the
// Basic Multilingual Plane as a bitmap (binaryViews).
var invisibleSeconds, hiddenBMP = func() (t [256]uint64, bmp [1 << 16 / 64]uint64) {
	var b [utf8.UTFMax]byte
	for _, c := range invisibleCarriers {
		for r := c.lo; r <= c.hi; r++ {
			if r < 1<<16 {
				bmp[r/64] |= 1 << (r % 64)
			}
			if utf8.EncodeRune(b[:], r) == 1 {
				t[b[0]] = ^uint64(0)
			} else {
				t[b[0]] |= 1 << (b[1] & 0x3f)
			}
		}
	}
	return t, bmp
}()

// stripHidden removes the invisibleCarriers from s. It returns the text and
// how many it removed.
func stripHidden(s string) (string, int) { return replaceHidden(s, nil) }

// maxMarked bounds the code points markHidden names in marked; the others are
// counted together under "other", so that the report stays within the room
// the envelope keeps for it.
const maxMarked = 8

// markHidden replaces each of the invisibleCarriers in s with a visible
// marker such as <U+202E>, and counts each in marked under its code point and
// carrier name.
func markHidden(s string, marked map[string]int) string {
	out, _ := replaceHidden(s, func(r rune) string {
		marker := fmt.Sprintf("<U+%04X>", r)
		key := marker[1:len(marker)-1] + " " + carrierOf(r).name
		if _, named := marked[key]; !named && len(marked) >= maxMarked {
			key = "other"
		}
		marked[key]++
		return marker
	})
	return out
}

// replaceHidden replaces each of the invisibleCarriers in s with repl of it
// (nil: nothing) and returns the text and how many it replaced.
func replaceHidden(s string, repl func(rune) string) (string, int) {
	var b strings.Builder
	n, at := 0, 0 // s[:at] is written or replaced
	for i := 0; i < len(s); i++ {
		if m := invisibleSeconds[s[i]]; m == 0 || s[i] >= utf8.RuneSelf && (i+1 == len(s) || m&(1<<(s[i+1]&0x3f)) == 0) {
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if carrierOf(r) == nil {
			continue
		}
		if n == 0 {
			b.Grow(len(s) + 16)
		}
		b.WriteString(s[at:i])
		if repl != nil {
			b.WriteString(repl(r))
		}
		n, i, at = n+1, i+size-1, i+size
	}
	if n == 0 {
		return s, 0
	}
	b.WriteString(s[at:])
	return b.String(), n
}

// carrierOf returns the row of invisibleCarriers that holds r, or nil, by
// binary search.
func carrierOf(r rune) *invisibleCarrier {
	i, _ := slices.BinarySearchFunc(invisibleCarriers, r, func(c invisibleCarrier, r rune) int { return int(c.hi - r) })
	if i < len(invisibleCarriers) && invisibleCarriers[i].lo <= r {
		return &invisibleCarriers[i]
	}
	return nil
}

// unescapeJSON returns s, if it is JSON text (an object or a list: JSON
// inside a JSON string, a file of JSON) or a diff (isDiff; one of a file of
// JSON: git writes its lines after '+', '-' or a space), with its
// string escapes decoded: \n, \t, \/, \" and the others, and \u0067 (a
// surrogate pair as one character), each with the run of backslashes before
// it (JSON nested more than once); other backslashes stay. Other text
// (source code) is returned as is.
func unescapeJSON(s string) string {
	if i := skipSpace(s, 0); i == len(s) || s[i] != '{' && s[i] != '[' && !isDiff(s[i:]) || strings.IndexByte(s, '\\') < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		j := i
		for j < len(s) && s[j] == '\\' {
			j++
		}
		if j == len(s) {
			return string(append(b, s[i:]...))
		}
		if j == i { // up to the next backslash
			k := strings.IndexByte(s[i:], '\\')
			if k < 0 {
				return string(append(b, s[i:]...))
			}
			b, i = append(b, s[i:i+k]...), i+k-1
			continue
		}
		if c := strings.IndexByte(`"/bfnrt`, s[j]); c >= 0 {
			b, i = append(b, "\"/\b\f\n\r\t"[c]), j
		} else if r, ok := hex4(s, j+1); s[j] == 'u' && ok {
			i = j + 4
			k := i + 1 // the other half of a surrogate pair, after its own run of backslashes
			for k < len(s) && s[k] == '\\' {
				k++
			}
			if r2, ok2 := hex4(s, k+1); utf16.IsSurrogate(r) && k > i+1 && k < len(s) && s[k] == 'u' && ok2 {
				r, i = utf16.DecodeRune(r, r2), k+4
			}
			b = utf8.AppendRune(b, r)
		} else {
			b, i = append(b, s[i:j+1]...), j
		}
	}
	return string(b)
}

// isDiff reports whether s starts as a diff does that Gitea answers: a .diff
// (diff --git), a .patch (a mail of git format-patch) or a review comment's
// diff_hunk (its hunk header). Only its start is read: a whole file would cost
// a pass.
func isDiff(s string) bool {
	return strings.HasPrefix(s, "diff --git ") || strings.HasPrefix(s, "From ") || strings.HasPrefix(s, "@@ -")
}

// asciiFormsView names the reading asciiForms in textViews.
const asciiFormsView = "ASCII forms"

// asciiForms returns s with its Unicode blanks (U+00A0 no-break space, as a
// Mac's Option-Space types it, U+2000-200A, U+202F, U+205F, U+3000) as
// spaces and its fullwidth forms (U+FF01-FF5E, as a Chinese or Japanese
// input method types "password：") as the ASCII characters they stand for;
// s itself, bytes that are not UTF-8 included, where it has none.
func asciiForms(s string) string {
	found := false
	for _, lead := range []byte{0xc2, 0xe2, 0xe3, 0xef} { // the first bytes of their UTF-8
		for i := strings.IndexByte(s, lead); i >= 0 && !found; i = indexByteFrom(s, lead, i+1) {
			found = asciiForm(s[i:]) != 0
		}
	}
	if !found {
		return s
	}
	b, last := make([]byte, 0, len(s)), 0
	for i := 0; i < len(s); i++ {
		if s[i] < 0xc2 { // no lead byte of theirs
			continue
		}
		if c := asciiForm(s[i:]); c != 0 {
			_, n := utf8.DecodeRuneInString(s[i:])
			b, last, i = append(append(b, s[last:i]...), c), i+n, i+n-1
		}
	}
	return string(append(b, s[last:]...))
}

// asciiForm returns the ASCII character the blank or fullwidth form s
// starts with stands for, 0 for none.
func asciiForm(s string) byte {
	switch r, _ := utf8.DecodeRuneInString(s); {
	case r == 0xa0 || r >= 0x2000 && r <= 0x200a || r == 0x202f || r == 0x205f || r == 0x3000:
		return ' '
	case r >= 0xff01 && r <= 0xff5e:
		return byte(r - 0xfee0)
	}
	return 0
}

// indexByteFrom is strings.IndexByte of s from i on, -1 for none.
func indexByteFrom(s string, c byte, i int) int {
	if k := strings.IndexByte(s[i:], c); k >= 0 {
		return i + k
	}
	return -1
}

// binaryViews are the texts that bytes s may hold where the passes, reading
// s byte for byte, would find no secret: s read as UTF-8 without its hidden
// characters and its bytes that are not UTF-8 (a Latin-1 soft hyphen), so
// too in each of textViews, and, if s has a zero byte, s read as UTF-16 in
// either byte order, from an even or odd offset, without its hidden
// characters (surrogates too). Each is
// kept to its ASCII, fullwidth forms as theirs, anything else a space: the secrets the passes know are
// ASCII, and a pass over bytes stays cheap (BenchmarkBinaryContent).
func binaryViews(s string) []string {
	visible := func(view []byte, r rune) []byte { // an ASCII character as itself, a hidden one as nothing, any other a space
		switch {
		case r < 1<<16 && hiddenBMP[r/64]&(1<<(r%64)) != 0 || r >= 1<<16 && carrierOf(r) != nil:
			return view
		case r < utf8.RuneSelf:
			return append(view, byte(r))
		case r >= 0xff01 && r <= 0xff5e: // a fullwidth form as its ASCII (asciiForms; a blank is a space already)
			return append(view, byte(r-0xfee0))
		}
		return append(view, ' ')
	}
	utf8View := func(s string) string {
		view := make([]byte, 0, len(s))
		for i, r := range s {
			if r != utf8.RuneError || strings.HasPrefix(s[i:], "\ufffd") { // bytes that are not UTF-8 go
				view = visible(view, r)
			}
		}
		return string(view)
	}
	views := []string{utf8View(s)}
	for _, v := range textViews {
		if v.name == asciiFormsView { // utf8View reads them
			continue
		}
		if d := v.read(s); d != s {
			views = append(views, utf8View(d))
		}
	}
	if strings.IndexByte(s, 0) < 0 {
		return views
	}
	view := make([]byte, 0, len(s)/2)
	for _, at := range [][2]int{{0, 1}, {1, 0}, {1, 2}, {2, 1}} { // of the low and the high byte of the first unit
		view = view[:0]
		for i := 0; at[0]+2*i < len(s) && at[1]+2*i < len(s); i++ {
			if u := rune(s[at[0]+2*i]) | rune(s[at[1]+2*i])<<8; !utf16.IsSurrogate(u) {
				view = visible(view, u)
			}
		}
		views = append(views, string(view))
	}
	return views
}
