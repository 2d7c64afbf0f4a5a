package sqlite

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkOpenNew opens and closes a store on a new file: the schema
// created through every migration, as each test and each first run does.
func BenchmarkOpenNew(b *testing.B) {
	dir := b.TempDir()
	ctx := context.Background()
	for i := 0; b.Loop(); i++ {
		d, err := Open(ctx, filepath.Join(dir, fmt.Sprintf("assay-%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		if err := d.Close(); err != nil {
			b.Fatal(err)
		}
	}
}
