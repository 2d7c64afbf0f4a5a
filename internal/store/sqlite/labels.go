package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// CreateQueue implements store.Labels: the queue and its items in one
// transaction.
func (d *DB) CreateQueue(ctx context.Context, q *record.Queue) error {
	if q.RunID == "" || q.Name == "" {
		return errors.New("creating a labeling queue: run and name are required")
	}
	strata, err := json.Marshal(q.Strata)
	if err != nil {
		return fmt.Errorf("creating labeling queue %q: %w", q.Name, err)
	}
	if q.Strata == nil {
		strata = []byte("[]")
	}
	return d.write(ctx, fmt.Sprintf("creating labeling queue %q of run %s", q.Name, q.RunID), func(tx *sql.Tx) error {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM label_queues WHERE run_id = ? AND name = ?`, q.RunID, q.Name).Scan(&one)
		if err == nil {
			return store.ErrQueueExists
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ?`, q.RunID).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %q: %w", q.RunID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO label_queues (run_id, name, judge, size, seed, strata, created) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			q.RunID, q.Name, q.Judge, q.Size, int64(q.Seed), string(strata), micros(q.Created)); err != nil {
			return err
		}
		ins, err := tx.PrepareContext(ctx, `INSERT INTO queue_items (run_id, queue, position, case_id, target, epoch, output_hash, stratum, weight)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		for _, it := range q.Items {
			if _, err := ins.ExecContext(ctx, q.RunID, q.Name, it.Position, it.CaseID, it.Target, it.Epoch, it.OutputHash, it.Stratum, it.Weight); err != nil {
				return fmt.Errorf("item at position %d: %w", it.Position, err)
			}
		}
		return nil
	})
}

// Queue implements store.Labels.
func (d *DB) Queue(ctx context.Context, runID, name string) (*record.Queue, error) {
	var q *record.Queue
	err := d.read(ctx, func(tx *sql.Tx) error {
		var seed int64
		var strata string
		var created sql.NullInt64
		q = &record.Queue{RunID: runID, Name: name, Items: []record.QueueItem{}}
		err := tx.QueryRowContext(ctx, `SELECT judge, size, seed, strata, created FROM label_queues WHERE run_id = ? AND name = ?`, runID, name).
			Scan(&q.Judge, &q.Size, &seed, &strata, &created)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no labeling queue %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		q.Seed, q.Created = uint64(seed), fromMicros(created)
		if err := json.Unmarshal([]byte(strata), &q.Strata); err != nil {
			return fmt.Errorf("strata: %w", err)
		}
		if len(q.Strata) == 0 {
			q.Strata = nil
		}
		rows, err := tx.QueryContext(ctx, `SELECT position, case_id, target, epoch, output_hash, stratum, weight FROM queue_items
			WHERE run_id = ? AND queue = ? ORDER BY position`, runID, name)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var it record.QueueItem
			if err := rows.Scan(&it.Position, &it.CaseID, &it.Target, &it.Epoch, &it.OutputHash, &it.Stratum, &it.Weight); err != nil {
				return err
			}
			q.Items = append(q.Items, it)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("reading labeling queue %q of run %s: %w", name, runID, err)
	}
	return q, nil
}

// Queues implements store.Labels. An item counts as labeled when it has a
// label in its queue by anyone; Pass, Fail and Skip count the labels given
// in the queue to its items (with one labeler they add up to Labeled).
func (d *DB) Queues(ctx context.Context, runID string) ([]store.QueueProgress, error) {
	var out []store.QueueProgress
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT run_id, name, judge FROM label_queues WHERE ?1 = '' OR run_id = ?1 ORDER BY created, rowid`, runID)
		if err != nil {
			return err
		}
		err = each(ctx, rows, func() error {
			var p store.QueueProgress
			if err := rows.Scan(&p.RunID, &p.Name, &p.Judge); err != nil {
				return err
			}
			out = append(out, p)
			return nil
		})
		if err != nil {
			return err
		}
		for i := range out {
			p := &out[i]
			err := tx.QueryRowContext(ctx, `SELECT count(*),
				count(*) FILTER (WHERE EXISTS (SELECT 1 FROM labels l WHERE l.run_id = i.run_id AND l.case_id = i.case_id
					AND l.target = i.target AND l.epoch = i.epoch AND l.queue = i.queue))
				FROM queue_items i WHERE i.run_id = ? AND i.queue = ?`, p.RunID, p.Name).Scan(&p.Items, &p.Labeled)
			if err != nil {
				return err
			}
			err = tx.QueryRowContext(ctx, `SELECT
				count(*) FILTER (WHERE l.verdict = 'pass'),
				count(*) FILTER (WHERE l.verdict = 'fail'),
				count(*) FILTER (WHERE l.verdict = 'skip')
				FROM labels l WHERE l.run_id = ?1 AND l.queue = ?2 AND EXISTS (SELECT 1 FROM queue_items i
					WHERE i.run_id = ?1 AND i.queue = ?2 AND i.case_id = l.case_id AND i.target = l.target AND i.epoch = l.epoch)`,
				p.RunID, p.Name).Scan(&p.Pass, &p.Fail, &p.Skip)
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the labeling queues: %w", err)
	}
	return out, nil
}

// PutLabels implements store.Labels: an upsert on the label's key (run,
// case, target, epoch, queue, labeler) that counts the rows it inserted or
// changed.
func (d *DB) PutLabels(ctx context.Context, labels []record.Label) (int, error) {
	if len(labels) == 0 {
		return 0, nil
	}
	n := 0
	err := d.write(ctx, "storing labels", func(tx *sql.Tx) error {
		n = 0
		get, err := tx.PrepareContext(ctx, `SELECT id, output_hash, verdict, reason, corrected, created FROM labels
			WHERE run_id = ? AND case_id = ? AND target = ? AND epoch = ? AND queue = ? AND labeler = ?`)
		if err != nil {
			return err
		}
		defer get.Close()
		ins, err := tx.PrepareContext(ctx, `INSERT INTO labels (run_id, case_id, target, epoch, output_hash, queue, labeler, verdict, reason, corrected, created)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`)
		if err != nil {
			return err
		}
		defer ins.Close()
		upd, err := tx.PrepareContext(ctx, `UPDATE labels SET output_hash = ?, verdict = ?, reason = ?, corrected = ?, created = ? WHERE id = ?`)
		if err != nil {
			return err
		}
		defer upd.Close()
		for i := range labels {
			l := &labels[i]
			var id int64
			var hash, verdict, reason, corrected string
			var created sql.NullInt64
			err := get.QueryRowContext(ctx, l.RunID, l.CaseID, l.Target, l.Epoch, l.Queue, l.Labeler).Scan(&id, &hash, &verdict, &reason, &corrected, &created)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				_, err = ins.ExecContext(ctx, l.RunID, l.CaseID, l.Target, l.Epoch, l.OutputHash, l.Queue, l.Labeler, l.Verdict, l.Reason, l.Corrected, micros(l.Created))
				if err != nil {
					return fmt.Errorf("%s: %w", describeLabel(l), err)
				}
				n++
			case err != nil:
				return fmt.Errorf("%s: %w", describeLabel(l), err)
			case hash != l.OutputHash || verdict != l.Verdict || reason != l.Reason || corrected != l.Corrected || created != micros(l.Created):
				if _, err := upd.ExecContext(ctx, l.OutputHash, l.Verdict, l.Reason, l.Corrected, micros(l.Created), id); err != nil {
					return fmt.Errorf("%s: %w", describeLabel(l), err)
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

func describeLabel(l *record.Label) string {
	return fmt.Sprintf("label by %q of %s", l.Labeler, describeResult(resultKey{l.RunID, l.CaseID, l.Target, l.Epoch}))
}

const labelColumns = `run_id, case_id, target, epoch, output_hash, queue, labeler, verdict, reason, corrected, created`

func scanLabel(s scanner, l *record.Label) error {
	var created sql.NullInt64
	if err := s.Scan(&l.RunID, &l.CaseID, &l.Target, &l.Epoch, &l.OutputHash, &l.Queue, &l.Labeler, &l.Verdict, &l.Reason, &l.Corrected, &created); err != nil {
		return err
	}
	l.Created = fromMicros(created)
	return nil
}

// UndoLabel implements store.Labels: the labeler's label in the queue with
// the latest creation time (the latest stored among equal times) is
// deleted.
func (d *DB) UndoLabel(ctx context.Context, runID, queue, labeler string) (*record.Label, error) {
	var l record.Label
	err := d.write(ctx, fmt.Sprintf("undoing the last label of %q in queue %q of run %s", labeler, queue, runID), func(tx *sql.Tx) error {
		var id int64
		row := tx.QueryRowContext(ctx, `SELECT id, `+labelColumns+` FROM labels WHERE run_id = ? AND queue = ? AND labeler = ?
			ORDER BY created DESC, id DESC LIMIT 1`, runID, queue, labeler)
		err := scanLabel(idScanner{row, &id}, &l)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("no label to undo: %w", store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM labels WHERE id = ?`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// idScanner scans a leading id column before the label's columns.
type idScanner struct {
	s  scanner
	id *int64
}

func (s idScanner) Scan(dest ...any) error { return s.s.Scan(append([]any{s.id}, dest...)...) }

// Labels implements store.Labels.
func (d *DB) Labels(ctx context.Context, runID string, fn func(record.Label) error) error {
	err := d.read(ctx, func(tx *sql.Tx) error {
		rows, err := tx.QueryContext(ctx, `SELECT `+labelColumns+` FROM labels WHERE ?1 = '' OR run_id = ?1
			ORDER BY run_id, created, queue, case_id, target, epoch, labeler`, runID)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var l record.Label
			if err := scanLabel(rows, &l); err != nil {
				return err
			}
			return fn(l)
		})
	})
	if err != nil {
		return fmt.Errorf("reading labels: %w", err)
	}
	return nil
}
