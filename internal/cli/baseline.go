package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newBaselineCommand is a placeholder until the command is built.
func newBaselineCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "baseline",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("baseline: not built yet") },
	}
}
