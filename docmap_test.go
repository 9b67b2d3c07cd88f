package main

// The reading map and the environment table of main.go's doc comment are
// checked here against the code, so that neither can drift: every non-test
// Go file is in the map, every file in the map exists, and every environment
// variable the code reads is in the table and nothing else is.

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// docSection returns the indented rows of the doc comment section of main.go
// headed "# title": the first word of each row that starts one (a tab and a
// non-space), in order.
func docSection(t *testing.T, title string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "main.go", nil, parser.ParseComments|parser.PackageClauseOnly)
	if err != nil {
		t.Fatal(err)
	}
	if f.Doc == nil {
		t.Fatal("main.go has no doc comment")
	}
	var rows []string
	in := false
	for line := range strings.SplitSeq(f.Doc.Text(), "\n") {
		if strings.HasPrefix(line, "# ") {
			in = line == "# "+title
			continue
		}
		if in && strings.HasPrefix(line, "\t") && len(line) > 1 && line[1] != ' ' && line[1] != '\t' {
			rows = append(rows, strings.Fields(line)[0])
		}
	}
	if len(rows) == 0 {
		t.Fatalf("main.go's doc comment has no rows under %q", "# "+title)
	}
	return rows
}

// sourceFiles parses the non-test Go files of dir, by file name.
func sourceFiles(t *testing.T, dir string) (*token.FileSet, map[string]*ast.File) {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	files := map[string]*ast.File{}
	for _, name := range names {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		if files[filepath.Base(name)], err = parser.ParseFile(fset, name, nil, 0); err != nil {
			t.Fatal(err)
		}
	}
	return fset, files
}

// TestReadingMap checks that main.go's reading map names every non-test Go
// file of the package once, and no file that does not exist.
func TestReadingMap(t *testing.T) {
	t.Parallel()
	mapped := docSection(t, "Reading map")
	_, files := sourceFiles(t, ".")
	seen := map[string]bool{}
	for _, name := range mapped {
		if seen[name] {
			t.Errorf("main.go reading map: %s is listed twice", name)
		}
		seen[name] = true
		if files[name] == nil {
			t.Errorf("main.go reading map: %s does not exist (renamed or removed? update the map)", name)
		}
	}
	for name := range files {
		if !seen[name] {
			t.Errorf("main.go reading map: %s is missing: add a row saying what it decides", name)
		}
	}
}

// envNameShape is the shape of an environment variable's name in a table of names.
var envNameShape = regexp.MustCompile(`^[A-Z][A-Z0-9]*(_[A-Z0-9]+)+$`)

// dynamicEnv is the one environment read whose name comes from configuration
// rather than the code: a profile's token_source_name. Its row in the table
// is the field's name.
const dynamicEnv = "token_source_name"

// envReads returns every environment variable the code reads, each with
// the position of one read: calls of os.Getenv, os.LookupEnv and of any
// function value named getenv with a constant name, and tables of names
// ranged over by a loop whose body passes the element (or one of its fields)
// to such a call. Any other read, such as a name computed at run time,
// is reported in bad.
func envReads(t *testing.T, dir string) (reads map[string]string, bad []string) {
	t.Helper()
	fset, files := sourceFiles(t, dir)
	consts := map[string]string{} // package-level and local string constants
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			if g, ok := n.(*ast.GenDecl); ok && g.Tok == token.CONST {
				for _, spec := range g.Specs {
					vs := spec.(*ast.ValueSpec)
					for i, name := range vs.Names {
						if i < len(vs.Values) {
							if s, ok := stringLit(vs.Values[i]); ok {
								consts[name.Name] = s
							}
						}
					}
				}
			}
			return true
		})
	}
	reads = map[string]string{}
	add := func(name string, pos token.Pos) {
		if _, ok := reads[name]; !ok {
			reads[name] = fset.Position(pos).String()
		}
	}
	for _, f := range files {
		// Loops over a literal table whose element reaches a getenv call.
		ast.Inspect(f, func(n ast.Node) bool {
			rs, ok := n.(*ast.RangeStmt)
			if !ok {
				return true
			}
			lit, ok := rs.X.(*ast.CompositeLit)
			elem, ok2 := rs.Value.(*ast.Ident)
			if !ok || !ok2 {
				return true
			}
			ast.Inspect(rs.Body, func(n ast.Node) bool {
				if call, ok := n.(*ast.CallExpr); ok && isEnvRead(call) && len(call.Args) > 0 && mentions(call.Args[0], elem.Name) {
					ast.Inspect(lit, func(n ast.Node) bool {
						if s, ok := stringLit(n); ok && envNameShape.MatchString(s) {
							add(s, n.Pos())
						}
						return true
					})
				}
				return true
			})
			return true
		})
		ast.Inspect(f, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && (sel.Sel.Name == "Environ" || sel.Sel.Name == "ExpandEnv") {
					bad = append(bad, fset.Position(n.Pos()).String()+": os."+sel.Sel.Name+" reads names the table cannot list")
				}
			}
			// os.Expand reads the environment only with a mapping that does.
			if call, ok := n.(*ast.CallExpr); ok && len(call.Args) == 2 {
				if sel, ok := call.Fun.(*ast.SelectorExpr); ok {
					if x, ok := sel.X.(*ast.Ident); ok && x.Name == "os" && sel.Sel.Name == "Expand" {
						fn, ok := call.Args[1].(*ast.FuncLit)
						if !ok {
							bad = append(bad, fset.Position(n.Pos()).String()+": os.Expand with a named mapping reads names the table cannot list")
						} else {
							ast.Inspect(fn, func(m ast.Node) bool {
								if c, ok := m.(*ast.CallExpr); ok && isEnvRead(c) {
									bad = append(bad, fset.Position(c.Pos()).String()+": os.Expand's mapping reads the environment")
								}
								return true
							})
						}
					}
				}
			}
			call, ok := n.(*ast.CallExpr)
			if !ok || !isEnvRead(call) || len(call.Args) == 0 {
				return true
			}
			arg := call.Args[0]
			if s, ok := stringLit(arg); ok {
				add(s, arg.Pos())
			} else if id, ok := arg.(*ast.Ident); ok && consts[id.Name] != "" {
				add(consts[id.Name], arg.Pos())
			} else if sel, ok := arg.(*ast.SelectorExpr); ok && sel.Sel.Name == "TokenSourceName" {
				add(dynamicEnv, arg.Pos())
			} else if !inTableLoop(f, call) {
				bad = append(bad, fset.Position(arg.Pos()).String()+": the name read is not a constant; read a constant or a literal table of names")
			}
			return true
		})
	}
	return reads, bad
}

// isEnvRead reports whether call reads the environment: os.Getenv,
// os.LookupEnv, or a call of a function value named getenv (the server's
// configuration reader).
func isEnvRead(call *ast.CallExpr) bool {
	switch fn := call.Fun.(type) {
	case *ast.Ident:
		return strings.EqualFold(fn.Name, "getenv") || strings.EqualFold(fn.Name, "lookupEnv")
	case *ast.SelectorExpr:
		return slices.Contains([]string{"Getenv", "LookupEnv", "getenv", "lookupEnv"}, fn.Sel.Name)
	}
	return false
}

// mentions reports whether expression e uses the identifier name.
func mentions(e ast.Expr, name string) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		if id, ok := n.(*ast.Ident); ok && id.Name == name {
			found = true
		}
		return !found
	})
	return found
}

// inTableLoop reports whether call sits in a range loop over a literal table
// whose element its first argument uses (read by envReads as a table).
func inTableLoop(f *ast.File, call *ast.CallExpr) bool {
	found := false
	ast.Inspect(f, func(n ast.Node) bool {
		rs, ok := n.(*ast.RangeStmt)
		if !ok || found {
			return !found
		}
		_, lit := rs.X.(*ast.CompositeLit)
		elem, ok := rs.Value.(*ast.Ident)
		if lit && ok && rs.Body.Pos() <= call.Pos() && call.End() <= rs.Body.End() && mentions(call.Args[0], elem.Name) {
			found = true
		}
		return true
	})
	return found
}

// stringLit returns the value of a string literal.
func stringLit(n ast.Node) (string, bool) {
	b, ok := n.(*ast.BasicLit)
	if !ok || b.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(b.Value)
	return s, err == nil
}

// TestEnvironmentTable checks main.go's environment table against the
// variables the code reads. A helper adding a variable adds a row
// "NAME  meaning" under "# Environment" in main.go's doc comment.
func TestEnvironmentTable(t *testing.T) {
	t.Parallel()
	table := docSection(t, "Environment")
	reads, bad := envReads(t, ".")
	for _, b := range bad {
		t.Errorf("environment read the table cannot check: %s", b)
	}
	listed := map[string]bool{}
	for _, name := range table {
		if listed[name] {
			t.Errorf("main.go environment table: %s is listed twice", name)
		}
		listed[name] = true
		if _, ok := reads[name]; !ok {
			t.Errorf("main.go environment table: %s is listed but the code never reads it", name)
		}
	}
	for name, pos := range reads {
		if !listed[name] {
			t.Errorf("%s: the code reads %s, missing from the environment table in main.go's doc comment", pos, name)
		}
	}
}

// TestEnvReadsScanner checks the scanner of TestEnvironmentTable on code
// shaped like each way the server reads its environment, and on the reads
// it must refuse to guess.
func TestEnvReadsScanner(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := `package main

import "os"

const tokenVar = "CONST_TOKEN"

func reads(getenv func(string) string, p struct{ TokenSourceName string }, dyn string) {
	_ = os.Getenv("OS_GETENV")
	_, _ = os.LookupEnv("OS_LOOKUP")
	_ = getenv("HELPER_VAR")
	_ = getenv(tokenVar)
	_ = getenv(p.TokenSourceName)
	for _, name := range []string{"TABLE_ONE", "TABLE_TWO"} {
		_ = getenv(name)
	}
	for _, b := range []struct{ name string; n int }{{"FIELD_ONE", 1}, {"FIELD_TWO", 2}} {
		_ = getenv(b.name)
	}
	for _, w := range []string{"NOT_READ_HERE"} {
		_ = w
	}
	_ = getenv(dyn + "_X")
	_ = os.Environ()
}
`
	if err := os.WriteFile(filepath.Join(dir, "x.go"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	reads, bad := envReads(t, dir)
	var names []string
	for name := range reads {
		names = append(names, name)
	}
	slices.Sort(names)
	want := []string{"CONST_TOKEN", "FIELD_ONE", "FIELD_TWO", "HELPER_VAR", "OS_GETENV", "OS_LOOKUP", "TABLE_ONE", "TABLE_TWO", dynamicEnv}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("reads mismatch (-want +got):\n%s", diff)
	}
	if len(bad) != 2 {
		t.Errorf("want 2 unreadable reads (computed name, os.Environ), got %q", bad)
	}
}
