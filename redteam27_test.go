package main

import (
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
