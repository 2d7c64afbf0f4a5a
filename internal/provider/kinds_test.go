package provider

import (
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"testing"
)

// Kinds is the list `run --retry-errors --kinds` checks values against: it
// must name every ErrorKind constant declared here but KindCanceled (never
// stored), so a new kind cannot be forgotten.
func TestKindsListsEveryStoredKind(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "provider.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	declared := 0
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok {
			return true
		}
		if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "ErrorKind" {
			return true
		}
		for i, name := range vs.Names {
			lit := vs.Values[i].(*ast.BasicLit).Value
			kind := ErrorKind(lit[1 : len(lit)-1])
			declared++
			if name.Name == "KindCanceled" {
				if slices.Contains(Kinds(), kind) {
					t.Errorf("Kinds lists %s, which is never stored", kind)
				}
				continue
			}
			if !slices.Contains(Kinds(), kind) {
				t.Errorf("Kinds does not list %s (%s)", kind, name.Name)
			}
		}
		return true
	})
	if declared == 0 || len(Kinds()) != declared-1 {
		t.Errorf("%d kinds declared, Kinds lists %d", declared, len(Kinds()))
	}
}
