package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newSelftestCommand is a placeholder until the command is built.
func newSelftestCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "selftest",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("selftest: not built yet") },
	}
}
