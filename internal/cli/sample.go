package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newSampleCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "sample",
		Short:  "Draw a recorded, reproducible sample of stored traces",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("sample: not built yet")
		},
	}
}
