package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

// newProbeCommand is a placeholder until the command is built.
func newProbeCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "probe",
		Hidden: true,
		RunE:   func(cmd *cobra.Command, args []string) error { return errors.New("probe: not built yet") },
	}
}
