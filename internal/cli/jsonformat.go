package cli

import (
	"fmt"

	"github.com/spf13/cobra"
)

// Every command that prints a result takes --format. The commands that
// have printed JSON under --json since before --format existed keep it:
// on them --format text|json is added here, and --json is the same as
// --format json (giving both with different values is a usage error).
// TestEveryCommandTakesFormatJSON holds the whole command tree to it.

// jsonFormats are the values of --format on a command that has --json.
var jsonFormats = []string{"text", "json"}

// addJSONFormats adds --format to every command under root that has a
// --json switch and no --format of its own.
func addJSONFormats(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, s := range c.Commands() {
			walk(s)
		}
		if c.Flags().Lookup("json") != nil && c.Flags().Lookup("format") == nil {
			addJSONFormat(c)
		}
	}
	walk(root)
}

func addJSONFormat(cmd *cobra.Command) {
	var format string
	cmd.Flags().StringVar(&format, "format", "text", "output format: text or json (--json is the same as --format json)")
	prev := cmd.PreRunE
	cmd.PreRunE = func(c *cobra.Command, args []string) error {
		if err := checkFormat(format, jsonFormats); err != nil {
			return err
		}
		js := c.Flags().Lookup("json")
		if c.Flags().Changed("format") {
			if js.Changed && js.Value.String() == "true" && format != "json" {
				return usageError{fmt.Errorf("--json and --format %s disagree: --json is --format json", format)}
			}
			if err := js.Value.Set(fmt.Sprint(format == "json")); err != nil {
				return err
			}
		}
		if prev != nil {
			return prev(c, args)
		}
		return nil
	}
}
