package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newDriftCommand is a placeholder until the command is built.
func newDriftCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "drift",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("drift: not built yet") },
	}
}
