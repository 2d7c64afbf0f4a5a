package replay

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/assay-eval/assay/internal/lines"
)

// maxRecordBytes bounds one line of a replay file.
const maxRecordBytes = 64 << 20

// maxProblems is how many problems New lists before summarising the rest.
const maxProblems = 20

// entry locates one record in the file.
type entry struct {
	off  int64
	n    uint32
	line uint32
}

// index maps the hash of each record's join value to where the record is.
type index struct {
	entries map[key]entry
	// missing counts records that lack the output; firstMissing says why for the first.
	missing          int
	firstMissing     string
	firstMissingLine int
}

// buildIndex reads a JSONL file of records once and indexes them by join
// value. It reports every problem (up to maxProblems) with its line number;
// name is the file as the user wrote it.
func buildIndex(r io.Reader, name string, cfg recordConfig, maxRecord int) (*index, error) {
	idx := &index{entries: map[key]entry{}}
	var (
		problems []string
		dropped  int
	)
	problem := func(line int, format string, args ...any) {
		if len(problems) >= maxProblems {
			dropped++
			return
		}
		problems = append(problems, fmt.Sprintf("%s:%d: %s", name, line, fmt.Sprintf(format, args...)))
	}
	err := lines.Each(r, name, maxRecord, func(l lines.Line) error {
		switch {
		case l.TooLong:
			problem(l.No, "record is longer than %d MiB", maxRecord>>20)
		case len(bytes.TrimSpace(l.Body)) == 0:
		default:
			if err := idx.add(l.Body, l.Off, l.No, cfg); err != nil {
				problem(l.No, "%v", err)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(problems) == 0 && len(idx.entries) == 0 {
		problems = append(problems, fmt.Sprintf("%s: no records; want one JSON object per line, each with %q and %q", name, cfg.joinName, cfg.outputName))
	}
	if len(problems) == 0 && idx.missing == len(idx.entries) {
		problems = append(problems, fmt.Sprintf("%s: no record has the output %q (line %d: %s); check replay.output",
			name, cfg.outputName, idx.firstMissingLine, idx.firstMissing))
	}
	if len(problems) > 0 {
		if dropped > 0 {
			problems = append(problems, fmt.Sprintf("... and %d more problems", dropped))
		}
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return idx, nil
}

// add indexes one record.
func (idx *index) add(body []byte, off int64, line int, cfg recordConfig) error {
	rec, err := parseRecord(body, cfg)
	if err != nil {
		return err
	}
	k, err := recordKey(rec.join)
	if err != nil {
		return fmt.Errorf("%s %v", cfg.joinName, err)
	}
	h := hashKey(k)
	if prev, dup := idx.entries[h]; dup {
		return fmt.Errorf("duplicate %s %s (first at line %d); each record's %s must be unique", cfg.joinName, quoteKey(k), prev.line, cfg.joinName)
	}
	if rec.missing != "" {
		if idx.missing == 0 {
			idx.firstMissing, idx.firstMissingLine = rec.missing, line
		}
		idx.missing++
	}
	if line > 1<<32-1 {
		return fmt.Errorf("more than %d lines", uint32(1<<32-1))
	}
	idx.entries[h] = entry{off: off, n: uint32(len(body)), line: uint32(line)}
	return nil
}
