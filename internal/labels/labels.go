// Package labels owns people's labels of a run's outputs: labeling queues
// sampled from a run (stratified, seeded, shuffled) and the JSONL format
// labels are exported and imported in. It reads records through
// record.Reader and never imports the store.
package labels

import (
	"context"
	"errors"
	"io"
	"time"

	"github.com/assay-eval/assay/internal/record"
)

// QueueSpec is what a labeler asks for.
type QueueSpec struct {
	Name string
	Size int
	Seed uint64
	// Judge is the scorer whose verdict stratifies (and is revealed after
	// labeling); "" none.
	Judge string
	// Slices are tag keys to stratify by (the run's cases' tags).
	Slices []string
}

// NewQueue samples a queue from a run's results in its latest scoring.
func NewQueue(ctx context.Context, r record.Reader, run *record.Run, q QueueSpec, now time.Time) (*record.Queue, error) {
	return nil, errors.New("labels: NewQueue not implemented yet")
}

// Check says what is wrong with a label.
func Check(l *record.Label) error { return nil }

// Write writes labels as JSONL, one record.Label per line.
func Write(w io.Writer, labels []record.Label) error { return errors.New("labels: Write not implemented yet") }

// Read reads JSONL labels; errors name NAME:LINE:COL and what is valid.
func Read(r io.Reader, name string, fn func(record.Label) error) error {
	return errors.New("labels: Read not implemented yet")
}
