package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newMismatchCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "mismatch [SPEC] --benchmark RUN|FILE --workload RUN|FILE",
		Short:  "A benchmark's difficulty against your workload's, its gaps, and its scores re-weighted to your mix",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("mismatch: not built yet")
		},
	}
}
