package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requireRows makes a package of the module without a row in the table a
// failure ("add a row for X").
const requireRows = true

// TestImportTable holds every package of the module to its row of
// ARCHITECTURE.md's package table.
func TestImportTable(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(root, "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows, err := parseTable(string(md))
	if err != nil {
		t.Fatalf("reading the package table:\n%v", err)
	}
	graph := listGraph(t, root)
	for _, p := range check(rows, graph, checkOptions{RequireRows: requireRows}) {
		t.Error(p)
	}
}

// listGraph runs `go list -deps` over the module: every package it builds,
// with its non-test imports.
func listGraph(t *testing.T, root string) map[string]*pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-e", "-deps", "-json=ImportPath,Standard,Imports,Error", "./...")
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps ./...: %v\n%s", err, stderr.Bytes())
	}
	graph := map[string]*pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p struct {
			pkg
			ImportPath string
			Error      *struct{ Err string }
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("reading go list's output: %v", err)
		}
		if p.Error != nil && strings.HasPrefix(p.ImportPath, module) {
			t.Errorf("go list: %s: %s", p.ImportPath, p.Error.Err)
		}
		p.pkg.Path = p.ImportPath
		graph[p.ImportPath] = &p.pkg
	}
	return graph
}
