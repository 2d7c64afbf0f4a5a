package postgres

import (
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store/storetest"
)

func TestDumpConformance(t *testing.T) {
	storetest.RunDump(t, func(t *testing.T, now func() time.Time) storetest.DumpStore { return openTemp(t, WithClock(now)) })
}
