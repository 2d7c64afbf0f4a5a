package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/examples"
)

type initOptions struct {
	Dir   string
	Force bool
}

func (o *initOptions) AddFlags(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&o.Force, "force", false, "overwrite files that already exist")
}

func newInitCommand(g *Globals) *cobra.Command {
	o := &initOptions{}
	cmd := &cobra.Command{
		Use:   "init [DIR]",
		Short: "Scaffold a working example eval (spec, cases, prompt, recorded outputs)",
		Long: `Write a working example eval into DIR (default: the current directory):
assay.yaml, cases.jsonl, prompts/system.txt and recorded.jsonl — two models'
recorded answers to 26 support tickets, replayed, so it runs at once with no
API key and no network. Edit it into your own: your cases, your prompt, your
parser and scorers, and live targets (provider: openai, anthropic or exec).

Existing files are never overwritten unless --force; nothing is written when
any would be.`,
		Args: rangeArgs(0, 1),
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

func runInit(_ context.Context, g *Globals, o *initOptions) error {
	const root = "quickstart"
	var files []string
	err := fs.WalkDir(examples.Quickstart, root, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, strings.TrimPrefix(p, root+"/"))
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("init: reading the bundled example: %w", err)
	}
	if !o.Force {
		var exist []string
		for _, f := range files {
			if _, err := os.Lstat(filepath.Join(o.Dir, f)); err == nil {
				exist = append(exist, filepath.Join(o.Dir, f))
			} else if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("init: %w", err)
			}
		}
		if len(exist) > 0 {
			return fmt.Errorf("init: %s already exist(s); nothing was written (use --force to overwrite, or init another directory)", strings.Join(exist, ", "))
		}
	}
	for _, f := range files {
		b, err := fs.ReadFile(examples.Quickstart, root+"/"+f)
		if err != nil {
			return fmt.Errorf("init: reading the bundled example: %w", err)
		}
		dst := filepath.Join(o.Dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return fmt.Errorf("init: %w", err)
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			return fmt.Errorf("init: %w", err)
		}
	}
	spec := filepath.Join(o.Dir, "assay.yaml")
	fmt.Fprintf(g.Stdout, `Wrote an example eval to %s (%d files).
Next:
  assay validate %s
  assay run %s
  assay report latest
`, o.Dir, len(files), spec, spec)
	return nil
}
