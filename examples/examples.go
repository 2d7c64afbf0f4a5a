// Package examples holds the bundled example evals as files, so the binary
// carries them: `assay init` scaffolds a new eval from the quickstart. It
// holds data only and imports nothing of assay.
package examples

import "embed"

// Quickstart is the ticket-triage example: spec, cases, system prompt and
// two models' recorded outputs (replayed, so it runs with no key and no
// network). Paths are under "quickstart/".
//
//go:embed quickstart
var Quickstart embed.FS
