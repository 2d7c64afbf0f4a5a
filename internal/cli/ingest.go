package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newIngestCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "ingest FILE...",
		Short:  "Store JSONL logs as traces, mapped by the spec's traces: section",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("ingest: not built yet")
		},
	}
}
