package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newCollectCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "collect",
		Short:  "Receive OpenTelemetry GenAI traces over OTLP/HTTP and store them",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("collect: not built yet")
		},
	}
}
