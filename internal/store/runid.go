package store

import (
	"errors"
)

// ErrAmbiguousID is returned by Store.GetRun when an ID prefix matches more
// than one run. The error names the prefix and some of the runs it matches.
var ErrAmbiguousID = errors.New("ambiguous run ID prefix")
