package spec

import (
	"path/filepath"
	"testing"
)

// A run's stored spec reads back with the run's spec path as its file and
// directory, so its relative paths resolve as they did for the run, and
// with the dataset defaults loading gives.
func TestStored(t *testing.T) {
	sp, err := Stored([]byte(`{"name":"x","dataset":{"path":"cases.CSV"},"scorers":[{"name":"j","type":"judge"}]}`), "/evals/a/assay.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := sp.Resolve(sp.Dataset.Path); got != filepath.Join("/evals/a", "cases.CSV") {
		t.Errorf("dataset resolves to %s", got)
	}
	if sp.Dataset.Format != "csv" || sp.Dataset.ID != DefaultID || len(sp.Scorers) != 1 {
		t.Errorf("format %q, id %q, %d scorers", sp.Dataset.Format, sp.Dataset.ID, len(sp.Scorers))
	}
	for _, bad := range []string{"", "{", "[]"} {
		if _, err := Stored([]byte(bad), "a.yaml"); err == nil {
			t.Errorf("Stored(%q) read", bad)
		}
	}
}
