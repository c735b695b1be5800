package chaos

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// faultMaps are the maps of a State that only State.Apply may change.
var faultMaps = map[string]bool{"Cut": true, "Net": true, "Clocks": true, "Paused": true}

// allowedWriters are the functions outside state.go and kind.go that write
// those maps anyway, each with its reason. The list is meant to shrink.
var allowedWriters = map[string]string{
	"check/timeline.go:fill": "copies a snapshot the replay already made through State.Apply into a reused State",
}

// TestOnlyStateApplyChangesTheFaultsInForce scans the module's non-test Go
// files for an assignment into, delete from or clear of a Cut, Net,
// Clocks or Paused map outside state.go and kind.go: a fault's
// effect on the world is written once, in its kind. The scan is by name,
// without types — a map of another type with one of these names would
// need a rename or an entry above.
func TestOnlyStateApplyChangesTheFaultsInForce(t *testing.T) {
	root := ".."
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if rel == "chaos/state.go" || rel == "chaos/kind.go" {
			return nil
		}
		file, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
		if err != nil {
			return err
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok {
				continue
			}
			where := rel + ":" + fn.Name.Name
			for _, w := range faultWrites(fn) {
				if _, ok := allowedWriters[where]; ok {
					seen[where] = true
					continue
				}
				t.Errorf("%s writes a State's %s map: only State.Apply (a kind's apply in chaos/kind.go) changes the faults in force; apply a chaos.Fault instead", where, w)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for where := range allowedWriters {
		if !seen[where] {
			t.Errorf("%s is allowed to write the fault maps but no longer does: take it off allowedWriters", where)
		}
	}
}

// faultWrites lists the fault maps fn writes: m.F[k] = v, delete(m.F, k),
// clear(m.F).
func faultWrites(fn *ast.FuncDecl) []string {
	var out []string
	field := func(e ast.Expr) (string, bool) {
		sel, ok := e.(*ast.SelectorExpr)
		if ok && faultMaps[sel.Sel.Name] {
			return sel.Sel.Name, true
		}
		return "", false
	}
	ast.Inspect(fn, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				if ix, ok := l.(*ast.IndexExpr); ok {
					if f, ok := field(ix.X); ok {
						out = append(out, f)
					}
				}
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && (id.Name == "delete" || id.Name == "clear") && len(n.Args) > 0 {
				if f, ok := field(n.Args[0]); ok {
					out = append(out, f)
				}
			}
		}
		return true
	})
	return out
}
