package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newPromoteCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "promote",
		Short:  "Turn failing or labeled-bad traces into dataset cases",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("promote: not built yet")
		},
	}
}
