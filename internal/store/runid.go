package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// ErrAmbiguousID is returned by Store.GetRun when an ID prefix matches more
// than one run. The error names the prefix and some of the runs it matches.
var ErrAmbiguousID = errors.New("ambiguous run ID prefix")

// runIDTime is the layout of the time part of a run ID.
const runIDTime = "20060102-150405"

// NewRunID returns a new ID for a run started at now: the UTC time to the
// second, a dash and six random hex digits from crypto/rand, e.g.
// "20261202-113512-3fa9c1". IDs of runs started in different seconds sort as
// strings in the order the runs started; IDs are safe in file names, URLs and
// shells, and any unique prefix of one names the run.
func NewRunID(now time.Time) string {
	var b [3]byte
	// crypto/rand.Read never returns an error: it fills b or crashes the program.
	_, _ = rand.Read(b[:])
	return now.UTC().Format(runIDTime) + "-" + hex.EncodeToString(b[:])
}
