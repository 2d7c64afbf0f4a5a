package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newGateCommand is a placeholder until the command is built.
func newGateCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "gate",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("gate: not built yet") },
	}
}
