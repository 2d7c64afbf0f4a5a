package record

import (
	"regexp"
	"slices"
	"testing"
	"time"
)

func TestNewRunIDShape(t *testing.T) {
	// 11:35:12 in UTC+2 is 09:35:12 UTC: the ID is in UTC whatever the zone.
	now := time.Date(2026, 12, 2, 11, 35, 12, 999_000_000, time.FixedZone("CEST", 2*60*60))
	id := NewRunID(now)
	if !regexp.MustCompile(`^20261202-093512-[0-9a-f]{6}$`).MatchString(id) {
		t.Fatalf("NewRunID(%v) = %q, want 20261202-093512- and six lowercase hex digits", now, id)
	}
}

func TestNewRunIDUnique(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	// 200 IDs in one second out of 2^24 suffixes: a collision here means the
	// suffix is not random (probability of a chance collision is about 0.1%,
	// so allow one).
	collisions := 0
	for range 200 {
		id := NewRunID(now)
		if seen[id] {
			collisions++
		}
		seen[id] = true
	}
	if collisions > 1 {
		t.Fatalf("%d collisions among 200 IDs made in the same second", collisions)
	}
}

func TestNewRunIDSortsByTime(t *testing.T) {
	base := time.Date(2026, 9, 30, 23, 59, 58, 0, time.UTC)
	var ids []string
	// Across a second, a minute, a day and a month boundary, and a year.
	for _, d := range []time.Duration{0, time.Second, 2 * time.Second, 61 * time.Second, 25 * time.Hour, 40 * 24 * time.Hour, 400 * 24 * time.Hour} {
		ids = append(ids, NewRunID(base.Add(d)))
	}
	if !slices.IsSorted(ids) {
		t.Fatalf("IDs of successive runs do not sort in start order: %q", ids)
	}
}
