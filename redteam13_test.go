package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAuditIntact: a log removed, replaced, truncated or appended to by
// another writer under the server stops it (sticky), before the line is
// written; an intact one, reopened, goes on (the size read at open).
func TestAuditIntact(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name, want string
		do         func(path string) error
	}{
		{"intact", "", func(string) error { return nil }},
		{"removed", "was removed", os.Remove},
		{"replaced", "was replaced by another file", func(path string) error {
			if err := os.WriteFile(path+".new", nil, 0o600); err != nil {
				return err
			}
			return os.Rename(path+".new", path)
		}},
		{"truncated", "is 0 bytes, not the", func(path string) error { return os.Truncate(path, 0) }},
		{"appended", "written by another process", func(path string) error {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
			if err == nil {
				_, err = f.WriteString("{}\n")
				f.Close()
			}
			return err
		}},
	} {
		path := filepath.Join(t.TempDir(), "audit.log")
		for range 2 { // the second open continues the first's lines
			a, err := openAudit(path, auditKeyBytes)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.record(auditEntry{Decision: "denied"}); err != nil {
				t.Fatal(err)
			}
			a.close()
		}
		a, err := openAudit(path, auditKeyBytes)
		if err != nil {
			t.Fatal(err)
		}
		if err := tt.do(path); err != nil {
			t.Fatal(err)
		}
		err = a.record(auditEntry{Decision: "allowed"})
		if tt.want == "" && err != nil || tt.want != "" && !errContains(err, tt.want) {
			t.Errorf("%s: record = %v, want %q", tt.name, err, tt.want)
		}
		if again := a.record(auditEntry{Decision: "denied"}); tt.want != "" && (again == nil || again.Error() != err.Error()) {
			t.Errorf("%s: the next record = %v, want the first failure again", tt.name, again)
		}
		a.close()
	}
}

// TestSourceDir: the working directory is the server's checkout when its
// go.mod declares module giteamcp, however the file is laid out; another
// module, a comment naming it, or no go.mod is not.
func TestSourceDir(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	want, _ := os.Getwd()
	for mod, ok := range map[string]bool{
		"module giteamcp\n\ngo 1.26\n":       true,
		"module giteamcp\r\n\r\ngo 1.26\r\n": true,
		"// The server.\nmodule giteamcp\n":  true,
		"<<<<<<< HEAD\nmodule giteamcp\n=======\nmodule giteamcp // renamed\n>>>>>>> other\n": true,
		"module \"giteamcp\"\n":  true,
		"module giteamcpx\n":     false,
		"module example.com/x\n": false,
		"// module giteamcp\n":   false,
		"":                       false,
	} {
		if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte(mod), 0o600); err != nil {
			t.Fatal(err)
		}
		if got := sourceDir(); got != map[bool]string{true: want}[ok] {
			t.Errorf("go.mod %q: sourceDir = %q, want %q", mod, got, map[bool]string{true: want}[ok])
		}
	}
	os.Remove(filepath.Join(dir, "go.mod"))
	if got := sourceDir(); got != "" {
		t.Errorf("no go.mod: sourceDir = %q", got)
	}
}
