package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/examples"
)

type initOptions struct {
	Dir      string
	Force    bool
	Template string
	JSON     bool
}

func (o *initOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite files that already exist")
	cmd.Flags().BoolVar(&o.JSON, "json", false, "print what was written and the next steps as JSON")
	cmd.Flags().StringVar(&o.Template, "template", "", "scaffold one kind of eval: "+strings.Join(initTemplateNames(), ", ")+" (default: the quickstart)")
}

// initTemplate is one kind of eval `assay init --template` writes: the
// quickstart's files it shares (its cases and prompt), then the files of
// templates/<name>/ (its spec, and what only it needs).
type initTemplate struct {
	shared []string // quickstart files, relative to quickstart/
	// own: the template brings all its files (its own cases and prompt)
	// and shares none of the quickstart's.
	own   bool
	about string // what it is, for the message after writing it
	next  string // what to do before `assay run`, if anything
	// more names further specs it writes beside assay.yaml, each run and
	// reported after it.
	more []string
}

var initTemplates = map[string]initTemplate{
	"replay": {about: "two models' recorded answers, replayed (no key, no network)"},
	"openai": {shared: []string{"cases.jsonl", "prompts/system.txt"},
		about: "two OpenAI models, called live", next: "export OPENAI_API_KEY=... (the spec names the variable, never the key)"},
	"exec": {shared: []string{"cases.jsonl", "prompts/system.txt"},
		about: "your own program as a target (app.py: JSON on stdin and stdout; needs python3), runs offline"},
	"judge": {shared: []string{"cases.jsonl", "prompts/system.txt", "recorded.jsonl"},
		about: "an LLM judge grading two replayed models", next: "export OPENAI_API_KEY=... for the grader (or point its base_url at `assay mock`)"},
	"tools": {own: true,
		about: "a support agent's tool calls: two models' recorded calls, replayed with no key and no network",
		more:  []string{"plans.yaml", "agent.yaml"}},
}

func initTemplateNames() []string {
	names := make([]string, 0, len(initTemplates))
	for n := range initTemplates {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func newInitCommand(g *Globals) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold a working eval (spec, cases, prompt; recorded outputs, a program, a judge or tool calls)",
		Long: `Write a working eval into DIR (default: the current directory).

Without --template: assay.yaml, cases.jsonl, prompts/system.txt and
recorded.jsonl — two models' recorded answers to 26 support tickets,
replayed, so it runs at once with no API key and no network.

--template picks a kind, the first four on the same 26 tickets:
  replay   that same example: recorded outputs, replayed (offline)
  openai   two OpenAI models called live (needs OPENAI_API_KEY to run)
  exec     your own program as a target: app.py reads the case as JSON on
           stdin and prints its reply as JSON (offline; needs python3)
  judge    an LLM judge grading two replayed models (the grader needs
           OPENAI_API_KEY, or assay mock)
  tools    a support agent calling tools (lookup_order, refund, escalate):
           two models' recorded calls, replayed (offline), scored on the
           tool chosen and each argument (assay.yaml: one call per message),
           on the whole set of calls (plans.yaml: several, or none), and as
           an agent loop whose tools answer from recorded results
           (agent.yaml: conversations replayed turn by turn; needs python3)

Edit it into your own: your cases, your prompt, your parser and scorers, and
your targets. docs/spec.md in the assay repository documents every key.

Existing files are never overwritten unless --force; nothing is written when
any would be.`,
		Args: rangeArgs(0, 1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			if _, ok := initTemplates[o.Template]; o.Template != "" && !ok {
				return usageError{fmt.Errorf("unknown --template %q (templates are: %s)", o.Template, strings.Join(initTemplateNames(), ", "))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Dir = "."
			if len(args) == 1 {
				o.Dir = args[0]
			}
			return runInit(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// initFile is one file to write: its path under the target directory, and
// where it comes from.
type initFile struct {
	rel string
	src fs.FS
	at  string
}

// initFiles lists what a template writes (the quickstart without one).
func initFiles(template string) ([]initFile, error) {
	const root = "quickstart"
	var quick []string
	err := fs.WalkDir(examples.Quickstart, root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			quick = append(quick, strings.TrimPrefix(p, root+"/"))
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("init: reading the bundled example: %w", err)
	}
	tpl, ok := initTemplates[template]
	if template == "" || (ok && tpl.shared == nil && !tpl.own) {
		files := make([]initFile, 0, len(quick))
		for _, f := range quick {
			files = append(files, initFile{rel: f, src: examples.Quickstart, at: root + "/" + f})
		}
		return files, nil
	}
	var files []initFile
	for _, f := range tpl.shared {
		files = append(files, initFile{rel: f, src: examples.Quickstart, at: root + "/" + f})
	}
	dir := "templates/" + template
	err = fs.WalkDir(examples.Templates, dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, initFile{rel: strings.TrimPrefix(p, dir+"/"), src: examples.Templates, at: p})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("init: reading the bundled template %s: %w", template, err)
	}
	return files, nil
}

func runInit(_ context.Context, g *Globals, o *initOptions) error {
	files, err := initFiles(o.Template)
	if err != nil {
		return err
	}
	if !o.Force {
		var exist []string
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(o.Dir, f.rel)); err == nil {
				exist = append(exist, filepath.Join(o.Dir, f.rel))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("init: %w", err)
			}
		}
		if len(exist) > 0 {
			return fmt.Errorf("init: %s already exist(s); nothing was written (use --force to overwrite, or init another directory)", strings.Join(exist, ", "))
		}
	}
	for _, f := range files {
		b, err := fs.ReadFile(f.src, f.at)
		if err != nil {
			return fmt.Errorf("init: reading the bundled example: %w", err)
		}
		dst := filepath.Join(o.Dir, filepath.FromSlash(f.rel))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	spec := filepath.Join(o.Dir, "assay.yaml")
	what := "an example eval"
	if o.Template != "" {
		what = fmt.Sprintf("the %s template (%s)", o.Template, initTemplates[o.Template].about)
	}
	next := []string{"assay validate " + spec}
	if n := initTemplates[o.Template].next; n != "" {
		next = append(next, n)
	}
	next = append(next, "assay run "+spec, "assay report latest")
	for _, m := range initTemplates[o.Template].more {
		next = append(next, "assay run "+filepath.Join(o.Dir, m), "assay report latest")
	}
	if o.JSON {
		out := struct {
			Dir      string   `json:"dir"`
			Template string   `json:"template,omitempty"`
			Spec     string   `json:"spec"`
			Files    []string `json:"files"`
			Next     []string `json:"next"`
		}{Dir: o.Dir, Template: o.Template, Spec: spec, Next: next}
		for _, f := range files {
			out.Files = append(out.Files, f.rel)
		}
		return writeJSONOut(g.Stdout, out)
	}
	fmt.Fprintf(g.Stdout, "Wrote %s to %s (%d files).\nNext:\n", what, o.Dir, len(files))
	for _, n := range next {
		fmt.Fprintf(g.Stdout, "  %s\n", n)
	}
	return nil
}
