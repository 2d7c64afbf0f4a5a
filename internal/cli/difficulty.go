package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newDifficultyCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "difficulty [RUN…]",
		Short:  "Each case's difficulty and each target's ability on one axis",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("difficulty: not built yet")
		},
	}
}
