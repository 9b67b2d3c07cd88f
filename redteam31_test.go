package main

import (
	"slices"
	"strings"
	"testing"
)

// TestVariableNamesMasked: the data of each of rt31Variables
// (TestE2ERedteam31VariableNames), as Gitea answers an Actions variable, is
// masked whole, generic_secret naming it, as NAME=value is in a text; a
// variable whose name says nothing, a short value and a data member without
// a name are kept.
func TestVariableNamesMasked(t *testing.T) {
	t.Parallel()
	for name, value := range rt31Variables {
		in := `{"owner_id":0,"repo_id":2,"name":"` + name + `","data":"` + value + `","description":""}`
		sc := &scrubber{red: newRedactor(), mask: true}
		out, _ := sc.value(nil, []byte(in), maxJSONDepth)
		if want := strings.Replace(in, value, maskedMarker, 1); string(out) != want || !slices.Equal(sc.rules, []string{"generic_secret"}) {
			t.Errorf("%s: %s, %q; want %s", name, out, sc.rules, want)
		}
		if text, _ := maskString(name + "=" + value); text != name+"="+maskedMarker {
			t.Errorf("maskString(%s=...) = %q", name, text)
		}
	}
	for _, in := range []string{
		`{"name":"DEPLOY_REGION","data":"eu-central-1"}`,
		`{"name":"SECRET_SCANNING","data":"true"}`,
		`{"name":"TOKEN_TTL_SECONDS","data":"3600"}`,
		`{"data":"wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`,
	} {
		sc := &scrubber{red: newRedactor(), mask: true}
		if out, _ := sc.value(nil, []byte(in), maxJSONDepth); string(out) != in || sc.rules != nil {
			t.Errorf("%s: %s, %q", in, out, sc.rules)
		}
	}
}

// TestSubscriptsMasked: rt27Pass in each of rt31Subscripts
// (TestE2ERedteam31Subscripts) is masked, generic_secret naming it, the rest
// of the file kept; so is it with its quotes escaped, as JSON inside a JSON
// string holds a commit's message.
func TestSubscriptsMasked(t *testing.T) {
	t.Parallel()
	for path, text := range rt31Subscripts {
		want := strings.ReplaceAll(text, rt27Pass, maskedMarker)
		if got, rules, _ := scrubString(text, newRedactor(), true); got != want || !slices.Equal(rules, []string{"generic_secret"}) {
			t.Errorf("%s: scrubString = %q, %q; want %q", path, got, rules, want)
		}
	}
	in := `{"message":"os.environ[\"API_TOKEN\"] = \"` + rt27Pass + `\"\n"}`
	if got, _ := maskString(in); strings.Contains(got, rt27Pass) {
		t.Errorf("maskString(%q) = %q", in, got)
	}
}
