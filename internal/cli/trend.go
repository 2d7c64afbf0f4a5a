package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newTrendCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "trend",
		Short:  "Weekly pass rates of scored traces per model, with drops flagged",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("trend: not built yet")
		},
	}
}
