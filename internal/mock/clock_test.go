package mock

import (
	"testing"
	"time"
)

// A reply's creation time is read from the clock the server is given
// (`assay mock` passes the process's one clock), not the wall clock.
func TestCreatedReadsTheGivenClock(t *testing.T) {
	at := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	_, base := start(t, Options{Now: func() time.Time { return at }})
	var cc struct {
		Created int64 `json:"created"`
	}
	readJSON(t, post(t, base+"/v1/chat/completions", chatBody), &cc)
	if cc.Created != at.Unix() {
		t.Errorf("created %d, want %d (the given clock)", cc.Created, at.Unix())
	}
}
