package toolrun

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/assay-eval/assay/internal/isolation"
	"github.com/assay-eval/assay/internal/spec"
)

// The isolation package keeps its own name for the spec-directory variable
// (it imports nothing of assay): it must be the spec's.
func TestSpecDirVarAgrees(t *testing.T) {
	if isolation.SpecDirVar != spec.SpecDirVar {
		t.Errorf("isolation.SpecDirVar %q, spec.SpecDirVar %q", isolation.SpecDirVar, spec.SpecDirVar)
	}
}

// BenchmarkReplayCall: one call answered from a 10,000-line file.
func BenchmarkReplayCall(b *testing.B) {
	dir := b.TempDir()
	var sb strings.Builder
	for i := range 10000 {
		fmt.Fprintf(&sb, `{"tool": "lookup", "arguments": {"id": %d, "fields": ["status"]}, "result": "order %d shipped"}`+"\n", i, i)
	}
	if err := os.WriteFile(filepath.Join(dir, "calls.jsonl"), []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	hs, err := Build(&spec.Agent{Tools: map[string]spec.ToolHandler{"lookup": {Replay: "calls.jsonl"}}}, dir, nil)
	if err != nil {
		b.Fatal(err)
	}
	c := Call{CaseID: "1", Tool: "lookup", Arguments: `{"fields": ["status"], "id": 4242}`}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := hs["lookup"].Call(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkExecCall: one call of a program that prints its stdin (the
// test binary re-executed: process start, directory made and removed).
func BenchmarkExecCall(b *testing.B) {
	exe, err := os.Executable()
	if err != nil {
		b.Fatal(err)
	}
	hs, err := Build(&spec.Agent{Tools: map[string]spec.ToolHandler{"lookup": {Exec: []string{exe, helperFlag, "stdin"}}}}, b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	c := simpleCall()
	for b.Loop() {
		if _, err := hs["lookup"].Call(context.Background(), c); err != nil {
			b.Fatal(err)
		}
	}
}
