package store

import (
	"context"
	"errors"

	"github.com/assay-eval/assay/internal/record"
)

// ErrQueueExists is CreateQueue's answer when the run already has a queue
// of that name.
var ErrQueueExists = errors.New("a labeling queue of that name already exists for the run")

// QueueProgress is how far one queue's labeling has come.
type QueueProgress struct {
	RunID   string `json:"run_id"`
	Name    string `json:"name"`
	Judge   string `json:"judge,omitempty"`
	Items   int    `json:"items"`
	Labeled int    `json:"labeled"` // items with a label (pass, fail or skip) in the queue
	Pass    int    `json:"pass"`
	Fail    int    `json:"fail"`
	Skip    int    `json:"skip"`
}

// Labels is what a store keeps of people's labels: labeling queues over a
// run's outputs and the labels given in them (or imported).
type Labels interface {
	// CreateQueue stores a queue with its items (one transaction);
	// ErrQueueExists when the run has a queue of that name.
	CreateQueue(ctx context.Context, q *record.Queue) error
	// Queue returns a run's queue with its items in position order;
	// ErrNotFound when there is none.
	Queue(ctx context.Context, runID, name string) (*record.Queue, error)
	// Queues returns the progress of every queue of a run ("" for every
	// run), oldest first.
	Queues(ctx context.Context, runID string) ([]QueueProgress, error)
	// PutLabels stores labels in one transaction; a label with the same run,
	// case, target, epoch, queue and labeler as a stored one replaces it
	// (so importing a file twice stores nothing twice). It returns how many
	// labels were new or changed.
	PutLabels(ctx context.Context, labels []record.Label) (int, error)
	// UndoLabel deletes the labeler's most recent label in a run's queue and
	// returns it; ErrNotFound when the labeler has none there.
	UndoLabel(ctx context.Context, runID, queue, labeler string) (*record.Label, error)
	// Labels streams the labels of a run ("" for every run) ordered by run,
	// creation time, queue, case, target, epoch and labeler.
	Labels(ctx context.Context, runID string, fn func(record.Label) error) error
}
