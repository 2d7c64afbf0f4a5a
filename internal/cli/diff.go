package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDiffCommand is a placeholder until the command is built.
func newDiffCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "diff",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("diff: not built yet") },
	}
}
