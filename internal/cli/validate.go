package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/task"
)

func newValidateCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:   "validate SPEC",
		Short: "Check the spec, prompt, scorers and dataset; report every problem at once",
		Long: `Load the spec and everything it names (prompt files, dataset, replay files),
and report every problem at once as FILE:LINE:COL: message. Calls no model.

Exit codes: 0 valid, 4 invalid.`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runValidate(cmd.Context(), g, args[0])
		},
	}
}

func runValidate(ctx context.Context, g *Globals, path string) error {
	t, err := task.Load(path)
	if err != nil {
		return err
	}
	sp := t.Spec
	fmt.Fprintf(g.Stdout, "%s: ok — spec %q, %d cases, %d targets, %d scorers\n",
		path, sp.Name, t.Dataset.Count, len(sp.Targets), len(sp.Scorers))
	fmt.Fprintf(g.Stdout, "  spec %s\n  dataset %s\n  prompt %s\n", sp.Hash, t.Dataset.Hash, sp.PromptHash())
	for i := range sp.Targets {
		tg := &sp.Targets[i]
		if tg.Provider != "openai" && tg.Provider != "anthropic" {
			continue
		}
		if _, err := apiKey(sp, i, g.Getenv); err != nil {
			fmt.Fprintf(g.Stderr, "warning: %v\n", err)
		}
	}
	return nil
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
