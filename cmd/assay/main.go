// Command assay evaluates language models on your own workload.
package main

import (
	"os"

	"github.com/assay-eval/assay/internal/cli"
)

func main() {
	os.Exit(cli.Main())
}
