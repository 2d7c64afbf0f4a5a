// Package pgtest gives tests a PostgreSQL store of their own: a fresh,
// empty schema in the throwaway cluster named by ASSAY_TEST_POSTGRES
// (.ci/postgres starts one and prints its URL), dropped when the test ends.
// Without that variable a test that needs PostgreSQL skips, except under
// CI=true, where it fails: CI must never pass by not testing the team's
// store.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env is the variable that names the test cluster.
const Env = "ASSAY_TEST_POSTGRES"

// Base returns the cluster's URL, skipping the test (failing it under
// CI=true) when there is none.
func Base(t testing.TB) string {
	t.Helper()
	u := os.Getenv(Env)
	if u == "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is not set: CI must run the PostgreSQL tests (.ci/run starts a cluster with .ci/postgres)", Env)
		}
		t.Skipf("%s is not set: start a throwaway cluster with `.ci/postgres start DIR` and export the URL it prints", Env)
	}
	return u
}

// URL creates a new, empty schema in the test cluster and returns a URL
// whose connections use it (search_path), so a store opened on it sees
// nothing of any other test's. The schema is dropped when the test ends.
func URL(t testing.TB) string {
	t.Helper()
	base := Base(t)
	var rnd [6]byte
	_, _ = rand.Read(rnd[:])
	schema := "t_" + hex.EncodeToString(rnd[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("connecting to the test cluster (%s): %v", Env, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("creating schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
			return
		}
		defer conn.Close(context.Background())
		if _, err := conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		t.Fatalf("%s: %v", Env, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}
