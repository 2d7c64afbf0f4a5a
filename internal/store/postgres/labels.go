package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

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
	return d.write(ctx, fmt.Sprintf("creating labeling queue %q of run %s", q.Name, q.RunID), func(tx pgx.Tx) error {
		if !storableID(q.RunID) {
			return fmt.Errorf("run %q: %w", q.RunID, store.ErrNotFound)
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM label_queues WHERE run_id = $1 AND name = $2)`, q.RunID, b(q.Name)).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return store.ErrQueueExists
		}
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM runs WHERE id = $1)`, q.RunID).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			return fmt.Errorf("run %q: %w", q.RunID, store.ErrNotFound)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO label_queues (run_id, name, judge, size, seed, strata, created) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
			q.RunID, b(q.Name), b(q.Judge), q.Size, int64(q.Seed), strata, micros(q.Created)); err != nil {
			return err
		}
		var batch pgx.Batch
		for _, it := range q.Items {
			// SQLite cannot store a NaN and refuses it as a NULL; PostgreSQL
			// would store it, so it is refused here.
			if math.IsNaN(it.Weight) {
				return fmt.Errorf("item at position %d: weight is NaN", it.Position)
			}
			batch.Queue(`INSERT INTO queue_items (run_id, queue, position, case_id, target, epoch, output_hash, stratum, weight)
				VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
				q.RunID, b(q.Name), it.Position, b(it.CaseID), b(it.Target), it.Epoch, it.OutputHash, b(it.Stratum), it.Weight)
		}
		return execEach(ctx, tx, &batch, func(i int) string { return fmt.Sprintf("item at position %d", q.Items[i].Position) })
	})
}

// Queue implements store.Labels.
func (d *DB) Queue(ctx context.Context, runID, name string) (*record.Queue, error) {
	if !storableID(runID) {
		return nil, fmt.Errorf("reading labeling queue %q of run %s: no labeling queue %q: %w", name, runID, name, store.ErrNotFound)
	}
	var q *record.Queue
	err := d.read(ctx, func(tx pgx.Tx) error {
		var seed int64
		var strata []byte
		var created *int64
		q = &record.Queue{RunID: runID, Name: name, Items: []record.QueueItem{}}
		err := tx.QueryRow(ctx, `SELECT judge, size, seed, strata, created FROM label_queues WHERE run_id = $1 AND name = $2`, runID, b(name)).
			Scan(bstr{&q.Judge}, &q.Size, &seed, &strata, &created)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no labeling queue %q: %w", name, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		q.Seed, q.Created = uint64(seed), fromMicros(created)
		if err := json.Unmarshal(strata, &q.Strata); err != nil {
			return fmt.Errorf("strata: %w", err)
		}
		if len(q.Strata) == 0 {
			q.Strata = nil
		}
		rows, err := tx.Query(ctx, `SELECT position, case_id, target, epoch, output_hash, stratum, weight FROM queue_items
			WHERE run_id = $1 AND queue = $2 ORDER BY position`, runID, b(name))
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var it record.QueueItem
			if err := rows.Scan(&it.Position, bstr{&it.CaseID}, bstr{&it.Target}, &it.Epoch, &it.OutputHash, bstr{&it.Stratum}, &it.Weight); err != nil {
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
// Queues are listed oldest first, then in the order stored (seq, as
// SQLite's rowid).
func (d *DB) Queues(ctx context.Context, runID string) ([]store.QueueProgress, error) {
	if !storableID(runID) {
		return nil, nil // no run has that ID
	}
	var out []store.QueueProgress
	err := d.read(ctx, func(tx pgx.Tx) error {
		out = nil
		rows, err := tx.Query(ctx, `SELECT run_id, name, judge FROM label_queues WHERE $1 = '' OR run_id = $1
			ORDER BY created NULLS FIRST, seq`, runID)
		if err != nil {
			return err
		}
		err = each(ctx, rows, func() error {
			var p store.QueueProgress
			if err := rows.Scan(&p.RunID, bstr{&p.Name}, bstr{&p.Judge}); err != nil {
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
			err := tx.QueryRow(ctx, `SELECT count(*),
				count(*) FILTER (WHERE EXISTS (SELECT 1 FROM labels l WHERE l.run_id = i.run_id AND l.case_id = i.case_id
					AND l.target = i.target AND l.epoch = i.epoch AND l.queue = i.queue))
				FROM queue_items i WHERE i.run_id = $1 AND i.queue = $2`, p.RunID, b(p.Name)).Scan(&p.Items, &p.Labeled)
			if err != nil {
				return err
			}
			err = tx.QueryRow(ctx, `SELECT
				count(*) FILTER (WHERE l.verdict = 'pass'::bytea),
				count(*) FILTER (WHERE l.verdict = 'fail'::bytea),
				count(*) FILTER (WHERE l.verdict = 'skip'::bytea)
				FROM labels l WHERE l.run_id = $1 AND l.queue = $2 AND EXISTS (SELECT 1 FROM queue_items i
					WHERE i.run_id = $1 AND i.queue = $2 AND i.case_id = l.case_id AND i.target = l.target AND i.epoch = l.epoch)`,
				p.RunID, b(p.Name)).Scan(&p.Pass, &p.Fail, &p.Skip)
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
	err := d.write(ctx, "storing labels", func(tx pgx.Tx) error {
		n = 0
		for i := range labels {
			l := &labels[i]
			var id int64
			var hash, verdict, reason, corrected string
			var created *int64
			err := tx.QueryRow(ctx, `SELECT id, output_hash, verdict, reason, corrected, created FROM labels
				WHERE run_id = $1 AND case_id = $2 AND target = $3 AND epoch = $4 AND queue = $5 AND labeler = $6`,
				l.RunID, b(l.CaseID), b(l.Target), l.Epoch, b(l.Queue), b(l.Labeler)).
				Scan(&id, &hash, bstr{&verdict}, bstr{&reason}, bstr{&corrected}, &created)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				_, err = tx.Exec(ctx, `INSERT INTO labels (run_id, case_id, target, epoch, output_hash, queue, labeler, verdict, reason, corrected, created)
					VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
					l.RunID, b(l.CaseID), b(l.Target), l.Epoch, l.OutputHash, b(l.Queue), b(l.Labeler), b(l.Verdict), b(l.Reason), b(l.Corrected), micros(l.Created))
				if err != nil {
					return fmt.Errorf("%s: %w", describeLabel(l), err)
				}
				n++
			case err != nil:
				return fmt.Errorf("%s: %w", describeLabel(l), err)
			case hash != l.OutputHash || verdict != l.Verdict || reason != l.Reason || corrected != l.Corrected || !sameMicros(created, l.Created):
				if _, err := tx.Exec(ctx, `UPDATE labels SET output_hash = $1, verdict = $2, reason = $3, corrected = $4, created = $5 WHERE id = $6`,
					l.OutputHash, b(l.Verdict), b(l.Reason), b(l.Corrected), micros(l.Created), id); err != nil {
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

// sameMicros reports whether a stored time (micros' encoding) is t's.
func sameMicros(stored *int64, t time.Time) bool {
	if stored == nil || t.IsZero() {
		return stored == nil && t.IsZero()
	}
	return *stored == t.UnixMicro()
}

func describeLabel(l *record.Label) string {
	return fmt.Sprintf("label by %q of result (case %q, target %q, epoch %d) of run %s", l.Labeler, l.CaseID, l.Target, l.Epoch, l.RunID)
}

const labelColumns = `run_id, case_id, target, epoch, output_hash, queue, labeler, verdict, reason, corrected, created`

func scanLabel(s scanner, l *record.Label) error {
	var created *int64
	if err := s.Scan(&l.RunID, bstr{&l.CaseID}, bstr{&l.Target}, &l.Epoch, &l.OutputHash, bstr{&l.Queue}, bstr{&l.Labeler},
		bstr{&l.Verdict}, bstr{&l.Reason}, bstr{&l.Corrected}, &created); err != nil {
		return err
	}
	l.Created = fromMicros(created)
	return nil
}

// UndoLabel implements store.Labels: the labeler's label in the queue with
// the latest creation time (the latest stored among equal times; a label
// without a time is older than any with one, as in SQLite) is deleted.
func (d *DB) UndoLabel(ctx context.Context, runID, queue, labeler string) (*record.Label, error) {
	var l record.Label
	if !storableID(runID) {
		return nil, fmt.Errorf("undoing the last label of %q in queue %q of run %s: no label to undo: %w", labeler, queue, runID, store.ErrNotFound)
	}
	err := d.write(ctx, fmt.Sprintf("undoing the last label of %q in queue %q of run %s", labeler, queue, runID), func(tx pgx.Tx) error {
		row := tx.QueryRow(ctx, `DELETE FROM labels WHERE id = (SELECT id FROM labels WHERE run_id = $1 AND queue = $2 AND labeler = $3
			ORDER BY created DESC NULLS LAST, id DESC LIMIT 1) RETURNING `+labelColumns, runID, b(queue), b(labeler))
		err := scanLabel(row, &l)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("no label to undo: %w", store.ErrNotFound)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return &l, nil
}

// Labels implements store.Labels: by run (bytewise), creation time (none
// first), queue, case, target, epoch and labeler, as SQLite orders them.
func (d *DB) Labels(ctx context.Context, runID string, fn func(record.Label) error) error {
	if !storableID(runID) {
		return nil // no run has that ID
	}
	err := d.read(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+labelColumns+` FROM labels WHERE $1 = '' OR run_id = $1
			ORDER BY run_id COLLATE "C", created NULLS FIRST, queue, case_id, target, epoch, labeler`, runID)
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
