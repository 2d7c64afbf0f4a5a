package cli

import (
	"errors"

	"github.com/spf13/cobra"
)

func newImportCommand(g *Globals) *cobra.Command {
	return &cobra.Command{
		Use:    "import RESPONSES.jsonl --key KEYFILE --as TARGET",
		Short:  "Read a vendor's answers to a blinded sample as a target and score them",
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return errors.New("import: not built yet")
		},
	}
}
