package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newLoadCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:    "load SPEC",
		Short:  "Find each target's knee under load (not yet)",
		Hidden: true,
		Args:   exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("assay load is not built yet")
		},
	}
	return cmd
}
