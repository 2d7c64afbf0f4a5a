package spec

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
)

// Stored is the resolved spec a run stored as JSON (record.Run.Config),
// read back: its file and directory are the spec path the run recorded,
// so dataset.path, labels.add_to and file:// paths resolve as they did for
// the run, and the dataset's format and ID get the defaults loading gives
// them (a store filled by other means may lack them).
func Stored(config []byte, specPath string) (*Spec, error) {
	if len(config) == 0 {
		return nil, fmt.Errorf("the run does not carry its resolved spec")
	}
	var sp Spec
	if err := json.Unmarshal(config, &sp); err != nil {
		return nil, fmt.Errorf("reading the run's resolved spec: %w", err)
	}
	sp.File = specPath
	sp.Dir = filepath.Dir(specPath)
	if sp.Dataset.Format == "" {
		sp.Dataset.Format = "jsonl"
		if strings.EqualFold(filepath.Ext(sp.Dataset.Path), ".csv") {
			sp.Dataset.Format = "csv"
		}
	}
	if strings.TrimSpace(sp.Dataset.ID) == "" {
		sp.Dataset.ID = DefaultID
	}
	return &sp, nil
}
