// Package labels owns people's labels of a run's outputs: the labeling
// queues sampled from a run (stratified, seeded, shuffled so the labeler
// sees the outputs blind and in no telling order) and the JSONL format
// labels are exported and imported in (`assay labels`). It reads records
// through record.Reader and never imports the store.
package labels
