package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestInfraCheck(t *testing.T) {
	ours, theirs, sep := strings.Repeat("<", 7)+" HEAD\n", strings.Repeat(">", 7)+" feature\n", strings.Repeat("=", 7)
	tests := []struct {
		name  string
		files map[string]string // relative path -> content; a trailing "/" makes a directory
		err   string
	}{
		{"clean checkout", map[string]string{".git/": "", "main.go": "package main\n", "config.json": "{}"}, ""},
		{"no .git", map[string]string{"main.go": "package main\n", "config.json": "{}"}, ""},
		{"merge in progress", map[string]string{".git/MERGE_HEAD": "abc\n", "config.json": "{}"}, "unfinished merge or rebase in SRC (MERGE_HEAD exists)"},
		{"rebase-merge", map[string]string{".git/rebase-merge/": "", "config.json": "{}"}, "(rebase-merge exists)"},
		{"rebase-apply", map[string]string{".git/rebase-apply/": "", "config.json": "{}"}, "(rebase-apply exists)"},
		{"cherry-pick", map[string]string{".git/CHERRY_PICK_HEAD": "abc\n", "config.json": "{}"}, "(CHERRY_PICK_HEAD exists)"},
		{"worktree gitdir, relative", map[string]string{".git": "gitdir: ../main/.git/worktrees/wt\n", "../main/.git/worktrees/wt/MERGE_HEAD": "x", "config.json": "{}"}, "(MERGE_HEAD exists)"},
		{"worktree gitdir, clean", map[string]string{".git": "gitdir: ../main/.git/worktrees/wt\n", "../main/.git/worktrees/wt/HEAD": "x", "config.json": "{}"}, ""},
		{"bad .git file", map[string]string{".git": "nonsense\n", "config.json": "{}"}, ".git is a file without a gitdir: line"},
		{"marker in go file", map[string]string{"main.go": "package main\n" + ours + "var a = 1\n", "config.json": "{}"}, "conflict marker in SRC/main.go at line 2"},
		{"separator in go file", map[string]string{"x.go": "a\n" + sep + "\r\nb\n", "config.json": "{}"}, "conflict marker in SRC/x.go at line 2"},
		{"theirs in go file", map[string]string{"x.go": theirs, "config.json": "{}"}, "conflict marker in SRC/x.go at line 1"},
		{"lookalikes", map[string]string{"x.go": "// " + ours + sep + "=\n" + sep + " x\n" + strings.Repeat(">", 7) + "\n", "config.json": "{}"}, ""},
		{"markers in other files", map[string]string{"README.md": ours, "sub/y.go": ours, "config.json": "{}"}, ""},
		{"marker in config", map[string]string{"config.json": "{\n" + ours + "}\n"}, "conflict marker in SRC/config.json at line 2"},
		{"missing config", map[string]string{}, "cannot read SRC/config.json"},
	}
	for _, tt := range tests {
		root := t.TempDir()
		src := filepath.Join(root, "src")
		os.MkdirAll(src, 0o755)
		for name, content := range tt.files {
			p := filepath.Join(src, name)
			if strings.HasSuffix(name, "/") {
				os.MkdirAll(p, 0o755)
				continue
			}
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, []byte(content), 0o600)
		}
		err := infraCheck(filepath.Join(src, "config.json"), src)
		want := strings.ReplaceAll(tt.err, "SRC", src)
		if !errContains(err, want) {
			t.Errorf("%s: infraCheck = %v, want error containing %q", tt.name, err, want)
			continue
		}
		if err != nil && (!strings.HasPrefix(err.Error(), "infra_stop: ") || !strings.HasSuffix(err.Error(), infraRecovery)) {
			t.Errorf("%s: infraCheck = %v, want infra_stop: ... %s", tt.name, err, infraRecovery)
		}
	}
	if err := infraCheck("", ""); err != nil {
		t.Errorf(`infraCheck("", "") = %v`, err)
	}
	if err := infraCheck("", filepath.Join(t.TempDir(), "gone")); !errContains(err, "infra_stop: cannot read the source directory") {
		t.Errorf("missing source directory: infraCheck = %v", err)
	}
}
