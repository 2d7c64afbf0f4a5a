// Package examples holds the bundled example evals as files, so the binary
// carries them: `assay init` scaffolds a new eval from the quickstart, or
// (--template) from one of the templates, which share the quickstart's
// cases and prompt (all but tools, which brings its own). It holds data
// only and imports nothing of assay.
package examples

import "embed"

// Quickstart is the ticket-triage example: spec, cases, system prompt and
// two models' recorded outputs (replayed, so it runs with no key and no
// network). Paths are under "quickstart/".
//
//go:embed quickstart
var Quickstart embed.FS

// Templates holds what each `assay init --template` kind adds to (or
// replaces in) the quickstart's files: "templates/<kind>/" holds its spec
// and the files only it needs (exec: app.py; judge: the rubric; tools: all
// its files — three specs, cases, prompts, tool schemas, recorded calls
// and conversations, the tools' recorded results).
//
//go:embed templates
var Templates embed.FS
