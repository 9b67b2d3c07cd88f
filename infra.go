package main

// Runtime isolation (README, "Execution profiles"): the server refuses to run
// from a checkout in the middle of a merge or rebase, or with conflict markers
// in its config or Go sources.

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// infraRecovery is the recovery advice every infra_stop error ends with.
const infraRecovery = "to recover: resolve the conflicts or abort (git merge --abort / git rebase --abort), restart the gitea mcp server, then retry the task"

// unfinishedGitStates are the gitdir entries an unfinished merge, rebase, cherry-pick or revert leaves.
var unfinishedGitStates = []string{"MERGE_HEAD", "rebase-merge", "rebase-apply", "CHERRY_PICK_HEAD", "REVERT_HEAD"}

// infraCheck returns an error starting with "infra_stop: " when the config file
// (configPath, "" = none) has conflict markers, or when the checkout at
// sourceDir ("" = not checked) has an unfinished merge or rebase or conflict
// markers in its top-level non-test *.go files. A .git file pointing to a gitdir
// (worktrees, submodules) is followed.
func infraCheck(configPath, sourceDir string) error {
	var found []string
	if configPath != "" {
		found = append(found, conflictMarkers(configPath)...)
	}
	if sourceDir != "" {
		if gitDir, err := gitDirOf(sourceDir); err != nil {
			found = append(found, err.Error())
		} else if gitDir != "" {
			for _, name := range unfinishedGitStates {
				if _, err := os.Stat(filepath.Join(gitDir, name)); err == nil {
					found = append(found, fmt.Sprintf("unfinished merge or rebase in %s (%s exists)", sourceDir, name))
				}
			}
		}
		files, err := filepath.Glob(filepath.Join(sourceDir, "*.go"))
		if err != nil {
			found = append(found, err.Error())
		}
		for _, f := range files {
			if !strings.HasSuffix(f, "_test.go") { // tests are not part of the server
				found = append(found, conflictMarkers(f)...)
			}
		}
	}
	if len(found) == 0 {
		return nil
	}
	return fmt.Errorf("infra_stop: %s; %s", strings.Join(found, "; "), infraRecovery)
}

// gitDirOf returns the git directory of the checkout at dir, "" when dir has no .git.
func gitDirOf(dir string) (string, error) {
	dotGit := filepath.Join(dir, ".git")
	st, err := os.Stat(dotGit)
	switch {
	case os.IsNotExist(err):
		if _, err := os.Stat(dir); err != nil {
			return "", fmt.Errorf("cannot read the source directory: %v", err)
		}
		return "", nil
	case err != nil:
		return "", fmt.Errorf("cannot read %s: %v", dotGit, err)
	case st.IsDir():
		return dotGit, nil
	}
	data, err := os.ReadFile(dotGit)
	if err != nil {
		return "", fmt.Errorf("cannot read %s: %v", dotGit, err)
	}
	target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir:")
	target = strings.TrimSpace(target)
	if !ok || target == "" {
		return "", fmt.Errorf("%s is a file without a gitdir: line", dotGit)
	}
	if !filepath.IsAbs(target) {
		target = filepath.Join(dir, target)
	}
	return target, nil
}

// conflictMarkers reports the first conflict marker line of file, or why it cannot be read.
// Markers: "<<<<<<< " or ">>>>>>> " at the start of a line, "=======" alone on a line.
func conflictMarkers(file string) []string {
	data, err := os.ReadFile(file)
	if err != nil {
		return []string{fmt.Sprintf("cannot read %s: %v", file, err)}
	}
	for i, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSuffix(line, []byte("\r"))
		if bytes.HasPrefix(line, []byte("<<<<<<< ")) || bytes.HasPrefix(line, []byte(">>>>>>> ")) || string(line) == "=======" {
			return []string{fmt.Sprintf("conflict marker in %s at line %d", file, i+1)}
		}
	}
	return nil
}
