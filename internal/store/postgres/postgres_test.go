package postgres

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/pgtest"
	"github.com/assay-eval/assay/internal/store/storetest"
	"github.com/jackc/pgx/v5/pgconn"
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
	for _, u := range []string{"postgres://bob:s3cret@db:5432/assay", "postgres://bob@db/assay?password=s3cret&sslmode=disable",
		// net/url reads the password as part of a fragment; pgx connects with it.
		"postgres://#db?password=s3cret"} {
		if got := Redact(u); strings.Contains(got, "s3cret") {
			t.Errorf("Redact(%q) = %q: the password shows", u, got)
		}
	}
}

// A password from PGPASSWORD is not the URL's: a URL whose database or
// user happens to share its text is shown as written (its search_path
// and all), while a password written in the URL is still hidden.
func TestRedactKeepsAURLWithoutAPassword(t *testing.T) {
	t.Setenv("PGPASSFILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("PGPASSWORD", "postgres")
	u := "postgres://assay@127.0.0.1:5432/postgres?search_path=team&sslmode=disable"
	if got := Redact(u); got != u {
		t.Errorf("Redact(%q) = %q; want it unchanged (its password is PGPASSWORD's)", u, got)
	}
	t.Setenv("PGPASSWORD", "s3cret")
	if got := Redact("postgres://#db?password=s3cret"); strings.Contains(got, "s3cret") {
		t.Errorf("Redact shows the URL's password with PGPASSWORD set to it: %q", got)
	}
}

// Whatever URL a user passes, the password pgx would connect with never
// shows in Redact's text (what every message names the store by). pgx's
// own parser is the oracle for what the password is.
func FuzzRedact(f *testing.F) {
	f.Setenv("PGPASSWORD", "")
	f.Setenv("PGPASSFILE", filepath.Join(f.TempDir(), "none"))
	f.Setenv("PGSERVICEFILE", filepath.Join(f.TempDir(), "none"))
	for _, seed := range []string{
		"postgres://bob:s3cret@db:5432/assay",
		"postgresql://bob@db/assay?password=s3cret&sslmode=disable",
		"postgres://bob:p%40ss%2Fw0rd@db/assay",
		"postgres://bob:s3cret@h1:5432,h2:5433/assay?search_path=x",
		"postgres://bob:p@ss@db/assay",
		"postgres://db/assay?password=a&password=s3cret",
		"postgres://bob:s3cret@[::1]:5432/assay",
		"postgres:///assay?host=/tmp&password=s3cret",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		if !IsURL(raw) {
			return
		}
		cfg, err := pgconn.ParseConfig(raw)
		if err != nil || len(cfg.Password) < 4 {
			return
		}
		pw := cfg.Password
		red := Redact(raw)
		// A password that is also the user, host, database or another
		// parameter shows as that, not as the password.
		// So does one that shows only inside their URL-escaped forms (host
		// "\x80000" is written %80000).
		named := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database, User: url.User(cfg.User)}
		others := []string{cfg.User, cfg.Host, cfg.Database, strconv.Itoa(int(cfg.Port)), named.String(), "postgres://(unparsable URL)", "xxxxx"}
		for _, fb := range cfg.Fallbacks {
			others = append(others, fb.Host)
		}
		for k, v := range cfg.RuntimeParams {
			others = append(others, k, v)
		}
		for _, o := range others {
			if strings.Contains(o, pw) {
				return
			}
		}
		if showsSecret(red, pw) {
			t.Errorf("Redact(%q) = %q shows the password %q", raw, red, pw)
		}
	})
}
