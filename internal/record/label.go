package record

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"time"
)

// Label verdicts: what a person said of one output.
const (
	LabelPass = "pass"
	LabelFail = "fail"
	LabelSkip = "skip"
)

// Label is one person's verdict on one output of a run, given blind in a
// labeling queue (or imported). OutputHash names the output labeled
// (LabelOutputHash of the result): a label whose hash no longer matches the
// stored result judged an output that is gone (a --retry-errors replaced it)
// and is not counted.
type Label struct {
	RunID      string `json:"run_id"`
	CaseID     string `json:"case_id"`
	Target     string `json:"target"`
	Epoch      int    `json:"epoch"`
	OutputHash string `json:"output_hash"`
	// Queue is the labeling queue the label was given in ("" when none).
	Queue   string `json:"queue,omitempty"`
	Labeler string `json:"labeler"`
	Verdict string `json:"verdict"` // LabelPass, LabelFail or LabelSkip
	// Reason is required for a fail: what is wrong with the output.
	Reason string `json:"reason,omitempty"`
	// Corrected is the output as it should have been ("" when not given).
	Corrected string    `json:"corrected,omitempty"`
	Created   time.Time `json:"created"`
}

// Key is the result the label is of.
func (l *Label) Key() Key { return Key{CaseID: l.CaseID, Target: l.Target, Epoch: l.Epoch} }

// Queue is a named, seeded sample of a run's outputs shown blind to a
// labeler: Items in their shuffled order.
type Queue struct {
	RunID string `json:"run_id"`
	Name  string `json:"name"` // unique within a run
	// Judge is the scorer whose verdict stratified the sample and is shown
	// once an item is labeled ("" when none).
	Judge string `json:"judge,omitempty"`
	Size  int    `json:"size"` // the sample size asked for (Items may be fewer)
	Seed  uint64 `json:"seed"`
	// Strata names what the sample was stratified by, in order: "target",
	// "judge", "slice:<tag key>".
	Strata  []string    `json:"strata,omitempty"`
	Created time.Time   `json:"created"`
	Items   []QueueItem `json:"items"`
}

// QueueItem is one output in a queue, at its shuffled position (from 0).
// Weight is the item's inverse selection probability within its stratum
// (stratum size / items drawn from it), so estimates over a queue can be
// weighted back to the run.
type QueueItem struct {
	Position   int     `json:"position"`
	CaseID     string  `json:"case_id"`
	Target     string  `json:"target"`
	Epoch      int     `json:"epoch"`
	OutputHash string  `json:"output_hash"`
	Stratum    string  `json:"stratum,omitempty"`
	Weight     float64 `json:"weight,omitempty"`
}

// Key is the result the item shows.
func (q *QueueItem) Key() Key { return Key{CaseID: q.CaseID, Target: q.Target, Epoch: q.Epoch} }

// LabelOutputHash is the hash that ties a label to the output it judged:
// the first 16 hex digits of the SHA-256 of the reply's text, followed
// (when the reply called tools) by a NUL and its tool calls as JSON.
func LabelOutputHash(r *Result) string {
	h := sha256.New()
	h.Write([]byte(r.Raw))
	if len(r.ToolCalls) > 0 {
		b, _ := json.Marshal(r.ToolCalls)
		h.Write([]byte{0})
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}
