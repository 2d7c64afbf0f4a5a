package cli

import (
	"context"
	"fmt"

	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/store/sqlite"
)

// openStore opens the store at g.DB.
func openStore(ctx context.Context, g *Globals) (store.Store, error) {
	db, err := sqlite.Open(ctx, g.DB)
	if err != nil {
		return nil, fmt.Errorf("opening store %s: %w", g.DB, err)
	}
	return db, nil
}
