package postgres

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/storetest"
)

// openTemp opens a store in a fresh schema of the test cluster, closed when
// the test ends.
func openTemp(t *testing.T, opts ...Option) *DB {
	t.Helper()
	d, err := Open(context.Background(), pgtest.URL(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, now func() time.Time) store.Store { return openTemp(t, WithClock(now)) })
}

func TestOpenTwiceMigratesOnce(t *testing.T) {
	u := pgtest.URL(t)
	ctx := context.Background()
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			d, err := Open(ctx, u)
			if err == nil {
				d.Close()
			}
			errs <- err
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenExisting(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	v, err := d.schemaVersion(ctx)
	if err != nil || v != SchemaVersion() {
		t.Fatalf("schema version %d, %v; want %d", v, err, SchemaVersion())
	}
}

func TestOpenExistingRefusesAnEmptySchema(t *testing.T) {
	_, err := OpenExisting(context.Background(), pgtest.URL(t))
	if !errors.Is(err, ErrNoStore) {
		t.Fatalf("OpenExisting on an empty schema: %v, want ErrNoStore", err)
	}
}

func TestRedactHidesThePassword(t *testing.T) {
	for _, u := range []string{"postgres://bob:s3cret@db:5432/assay", "postgres://bob@db/assay?password=s3cret&sslmode=disable"} {
		if got := Redact(u); strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q: the password shows", u, got)
		}
	}
}
