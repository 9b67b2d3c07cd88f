package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// TestTranscripts replays each testdata/rpc/*.in against the built server
// over real pipes, one client line at a time, and compares the transcript
// (client lines "> ", server lines "< ") with the .golden file.
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/rpc/*.in")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/rpc")
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			in, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			c := startClient(t)
			var got bytes.Buffer
			for _, line := range strings.Split(strings.TrimSuffix(string(in), "\n"), "\n") {
				if strings.HasPrefix(line, "#") {
					got.WriteString(line + "\n")
					continue
				}
				got.WriteString("> " + line + "\n")
				c.send(line)
				for range expectedReplies(line) {
					got.WriteString("< " + string(c.recv()) + "\n")
				}
			}
			golden := strings.TrimSuffix(file, ".in") + ".golden"
			if *update {
				if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run go test -run TestTranscripts -update)", err)
			}
			if diff := cmp.Diff(string(want), got.String()); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// expectedReplies is how many lines the server answers to a client line: one
// for a request, a malformed line or a batch; none for a notification.
func expectedReplies(line string) int {
	var m map[string]any
	if json.Unmarshal([]byte(line), &m) != nil {
		return 1
	}
	if _, ok := m["id"]; ok || m["jsonrpc"] != "2.0" || m["method"] == nil {
		return 1
	}
	return 0
}
