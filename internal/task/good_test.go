package task

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/provider"
	"github.com/assay-eval/assay/internal/spec"
)

func TestGoodMinimalDefaults(t *testing.T) {
	tk, err := Load("testdata/good/minimal/assay.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	sp := tk.Spec
	if sp.Dataset.ID != "line" || sp.Dataset.Format != "jsonl" {
		t.Errorf("dataset defaults: id %q format %q, want line, jsonl", sp.Dataset.ID, sp.Dataset.Format)
	}
	if sp.Run.Epochs != 1 || sp.Run.Timeout.D() != 60*time.Second || sp.Run.Retries != 6 {
		t.Errorf("run defaults: %+v, want epochs 1, timeout 60s, retries 6", sp.Run)
	}
	if got := sp.Targets[0].Limits.Concurrency; got != 8 {
		t.Errorf("limits.concurrency default = %d, want 8", got)
	}
	if sp.Output.Format != "text" {
		t.Errorf("output.format default = %q, want text", sp.Output.Format)
	}
	if sp.Name != "assay" {
		t.Errorf("name defaults to the file's base name: got %q", sp.Name)
	}
	// Paths stay as written, relative to the spec's directory.
	if sp.Dataset.Path != "../../common/qa.jsonl" || sp.Resolve(sp.Dataset.Path) != filepath.Join("testdata", "common", "qa.jsonl") {
		t.Errorf("dataset.path = %q", sp.Dataset.Path)
	}
	if tk.Dataset.Path != filepath.Join("testdata", "common", "qa.jsonl") {
		t.Errorf("dataset info path = %q, want it usable from the working directory", tk.Dataset.Path)
	}
	if tk.Dataset.Count != 3 || strings.Join(tk.Dataset.Fields, ",") != "answer,question" {
		t.Errorf("dataset info: count %d fields %v", tk.Dataset.Count, tk.Dataset.Fields)
	}
	if tk.Scorers == nil || tk.Prompt == nil {
		t.Fatal("scorers or prompt not compiled")
	}
	var ids []string
	if err := dataset.Each(sp, func(c *dataset.Case) error { ids = append(ids, c.ID); return nil }); err != nil {
		t.Fatal(err)
	}
	if strings.Join(ids, ",") != "1,2,3" {
		t.Errorf("ids by line = %v, want 1,2,3", ids)
	}
}

func TestGoodFull(t *testing.T) {
	tk, err := Load("testdata/good/full/assay.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	sp := tk.Spec
	if sp.Dataset.Format != "csv" {
		t.Errorf("format from .csv = %q", sp.Dataset.Format)
	}
	if sp.Run.Retries != 0 {
		t.Errorf("run.retries written as 0 must stay 0, got %d", sp.Run.Retries)
	}
	if sp.Output.Format != "regex" {
		t.Errorf("output.format with extract = %q, want regex", sp.Output.Format)
	}
	if sp.Targets[0].Limits.Concurrency != 16 || sp.Targets[1].Limits.Concurrency != 8 {
		t.Errorf("concurrency = %d, %d; want 16 (written), 8 (default)", sp.Targets[0].Limits.Concurrency, sp.Targets[1].Limits.Concurrency)
	}
	if sp.TargetTimeout(&sp.Targets[1]) != 5*time.Second || sp.TargetTimeout(&sp.Targets[0]) != 60*time.Second {
		t.Errorf("target timeouts wrong")
	}
	if *sp.Targets[0].Params.MaxTokens != 512 || *sp.Targets[0].Params.Temperature != 0 {
		t.Errorf("params = %+v", sp.Targets[0].Params)
	}
	if sp.Targets[1].Replay.Path != "data/recorded.jsonl" {
		t.Errorf("replay path = %q", sp.Targets[1].Replay.Path)
	}
	if sp.Prompt.User != "Question: {{.question}}\n" || sp.Prompt.UserFile != "prompts/user.txt" {
		t.Errorf("user prompt from file: %q (%q)", sp.Prompt.User, sp.Prompt.UserFile)
	}
	if !strings.HasPrefix(sp.Prompt.System, "You are a careful assistant.") {
		t.Errorf("system prompt from file: %q", sp.Prompt.System)
	}
	wantTags := []string{"bucket", "length", "Difficulty Level"}
	var gotTags []string
	for _, tg := range sp.Dataset.Tags {
		gotTags = append(gotTags, tg.Key)
	}
	if !reflect.DeepEqual(gotTags, wantTags) {
		t.Errorf("tags in written order = %v, want %v", gotTags, wantTags)
	}

	var cases []*dataset.Case
	if err := dataset.Each(sp, func(c *dataset.Case) error { cases = append(cases, c); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(cases) != 3 {
		t.Fatalf("%d cases, want 3", len(cases))
	}
	c1, c2, c3 := cases[0], cases[1], cases[2]
	if c1.ID != "c1" || c1.Line != 2 || c2.Line != 3 || c3.Line != 5 {
		t.Errorf("ids/lines: %s@%d %s@%d %s@%d; a CSV case's line is where its record starts", c1.ID, c1.Line, c2.ID, c2.Line, c3.ID, c3.Line)
	}
	if c2.Vars["question"] != "A question\nspanning two lines, with a comma" {
		t.Errorf("multi-line quoted field = %q", c2.Vars["question"])
	}
	if c1.Expected != "4" {
		t.Errorf("expected = %#v, want the CSV string \"4\"", c1.Expected)
	}
	if !reflect.DeepEqual(c2.Tags, map[string]string{"bucket": "edge", "length": "long", "Difficulty Level": "hard"}) {
		t.Errorf("tags = %v", c2.Tags)
	}
	if !c2.HasWeight || c2.Weight != 2.5 || c3.HasWeight {
		t.Errorf("weights: c2 %v/%v c3 has=%v", c2.Weight, c2.HasWeight, c3.HasWeight)
	}

	// The case's text is data: a template in it is shown as written.
	msgs, err := tk.Prompt.Render(c3.Vars)
	if err != nil {
		t.Fatal(err)
	}
	want := []provider.Message{
		{Role: "system", Content: sp.Prompt.System},
		{Role: "user", Content: "Question: Say \"hi\" {{.answer}}\n"},
	}
	if !reflect.DeepEqual(msgs, want) {
		t.Errorf("render = %#v, want %#v", msgs, want)
	}
}

// copyTree copies a fixture directory so it can be loaded from elsewhere.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(target)
		if err != nil {
			return err
		}
		defer out.Close()
		_, err = io.Copy(out, in)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestHashesAreMachineIndependent(t *testing.T) {
	a, err := Load("testdata/good/full/assay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "elsewhere", "deeper")
	copyTree(t, "testdata/good/full", dir)
	b, err := Load(filepath.Join(dir, "assay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if a.Spec.Hash != b.Spec.Hash || a.Dataset.Hash != b.Dataset.Hash || a.Spec.PromptHash() != b.Spec.PromptHash() {
		t.Errorf("hashes differ by location: spec %s vs %s, dataset %s vs %s", a.Spec.Hash, b.Spec.Hash, a.Dataset.Hash, b.Dataset.Hash)
	}
	for _, h := range []string{a.Spec.Hash, a.Dataset.Hash, a.Spec.PromptHash()} {
		if !strings.HasPrefix(h, "sha256:") || len(h) != len("sha256:")+64 {
			t.Errorf("hash %q is not sha256:<hex>", h)
		}
	}

	// Editing a prompt file changes the spec hash and the prompt hash,
	// though the spec's own bytes did not change.
	if err := os.WriteFile(filepath.Join(dir, "prompts", "user.txt"), []byte("Q: {{.question}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load(filepath.Join(dir, "assay.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Spec.Hash == a.Spec.Hash || c.Spec.PromptHash() == a.Spec.PromptHash() {
		t.Error("changing a file:// prompt must change the spec and prompt hashes")
	}
	if c.Dataset.Hash != a.Dataset.Hash {
		t.Error("the dataset hash must not depend on the prompt")
	}
}

func TestProblemsNeverEchoAKey(t *testing.T) {
	_, err := Load("testdata/bad/openai_problems.yaml")
	if err == nil {
		t.Fatal("want problems")
	}
	if strings.Contains(err.Error(), "abc123secret") {
		t.Errorf("a problem repeats the value of api_key_env (it may be a key): %v", err)
	}
}

func TestMissingSpecFileIsAnError(t *testing.T) {
	_, err := Load("testdata/does-not-exist.yaml")
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Load of a missing file: %v, want a not-exist error", err)
	}
	var ps spec.Problems
	if errors.As(err, &ps) {
		t.Errorf("a missing spec file is an I/O error, not spec problems")
	}
}

// A tool-calling task loads whole: message templates, a history per case
// (a CSV cell's JSON text, sent as written after the system message), the
// tools (inline and from a file) and a structured reply's schema.
func TestGoodToolsTask(t *testing.T) {
	tk, err := Load("testdata/good/tools/assay.yaml")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	sp := tk.Spec
	if len(sp.Tools) != 2 || sp.Tools[0].Name != "book" || sp.Tools[1].Name != "weather" || sp.Tools[1].File != "tools.json" {
		t.Fatalf("tools = %+v", sp.Tools)
	}
	if sp.ToolChoice != "required" || sp.ResponseFormat == nil || sp.ResponseFormat.Name != "booking" || !sp.ResponseFormat.Strict {
		t.Fatalf("tool_choice %q, response_format %+v", sp.ToolChoice, sp.ResponseFormat)
	}
	var got [][]provider.Message
	err = dataset.Each(sp, func(c *dataset.Case) error {
		msgs, err := tk.Prompt.Render(c.Vars)
		got = append(got, msgs)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]provider.Message{
		{{Role: "system", Content: "You book trips for Ann."}, {Role: "user", Content: "Book Paris for 2 nights"}},
		{
			{Role: "system", Content: "You book trips for Bob."},
			{Role: "user", Content: "Weather in {{.customer}}'s Paris?"},
			{Role: "assistant", ToolCalls: []provider.ToolCall{{ID: "c1", Name: "weather", Arguments: `{"city":"Paris"}`}}},
			{Role: "tool", ToolCallID: "c1", Content: "sunny"},
			{Role: "user", Content: "And Lyon?"},
		},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("rendered:\n%+v\nwant:\n%+v", got, want)
	}
}
