package cli

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/spec"
)

// overlayUsage is the help of -f/--file, on every command that loads a spec.
const overlayUsage = "overlay FILE merged over the spec (repeatable, later files win): mappings merge key by key, lists are replaced, targets merge by name"

// addOverlayFlag adds -f/--file to a command that loads a spec.
func addOverlayFlag(cmd *cobra.Command, files *[]string) {
	cmd.Flags().StringArrayVarP(files, "file", "f", nil, overlayUsage)
}

// specOptions is how a command loads its spec: ${VAR} from the command's
// environment, the overlays it was given, the providers of g's registry.
func specOptions(g *Globals, overlays []string) spec.Options {
	return spec.Options{Getenv: g.Getenv, Overlays: overlays, Providers: g.providers().Infos()}
}

// storedOverlays are the overlay files a run's spec was loaded with, from
// its stored config (none for a run stored before overlays existed).
func storedOverlays(config []byte) []string {
	var c struct {
		Overlays []string `json:"overlays"`
	}
	if json.Unmarshal(config, &c) != nil {
		return nil
	}
	return c.Overlays
}
