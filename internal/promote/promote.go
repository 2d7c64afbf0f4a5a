// Package promote owns `assay promote`: failing or labeled-bad production
// traces turned into dataset cases (input, context, the failure reason, the
// expected value left for a labeler), deduplicated against the dataset by
// content and near-duplicates, appended as a new dataset version with their
// provenance.
package promote

// Result is what `assay promote` did.
type Result struct {
	Dataset string `json:"dataset"`
	Added   int    `json:"added"`
}
