package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newScoreTracesCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "score-traces SPEC --sample S",
		Short:  "Score a trace sample with the spec's reference-free scorers",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("score-traces: not built yet")
		},
	}
}
