package export

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"
)

// A Parquet writer buffers a row group in memory before writing it: a
// row group ends at parquetRowGroup rows or once its values reach
// parquetGroupBytes, so memory stays flat however large the run and its
// outputs.
const (
	parquetRowGroup   = 8192
	parquetGroupBytes = 8 << 20
)

// parquetWriter writes a Parquet file whose schema is built from the
// export's columns: strings (JSON columns as JSON-typed strings), int64,
// double and boolean leaves, optional where a value may be null, Snappy
// compressed. Parquet orders a group's columns by name.
type parquetWriter struct {
	w     *parquet.GenericWriter[any]
	cols  []column
	index []int // column i's leaf index in the schema
	batch []parquet.Row
	// bytes counts the string and JSON bytes of the row group so far.
	bytes int
}

func newParquet(w io.Writer, c Columns) (*parquetWriter, error) {
	cols := c.columns()
	group := parquet.Group{}
	for _, col := range cols {
		var n parquet.Node
		switch col.kind {
		case kString:
			n = parquet.String()
		case kJSON:
			n = parquet.JSON()
		case kInt:
			n = parquet.Int(64)
		case kFloat:
			n = parquet.Leaf(parquet.DoubleType)
		case kBool:
			n = parquet.Leaf(parquet.BooleanType)
		}
		if col.optional {
			n = parquet.Optional(n)
		}
		if _, dup := group[col.name]; dup {
			return nil, fmt.Errorf("export: two columns named %q", col.name)
		}
		group[col.name] = n
	}
	schema := parquet.NewSchema("assay_export", group)
	pw := &parquetWriter{
		w: parquet.NewGenericWriter[any](w, schema,
			parquet.Compression(&parquet.Snappy),
			parquet.MaxRowsPerRowGroup(parquetRowGroup),
			parquet.CreatedBy("assay", "", "")),
		cols: cols,
	}
	for _, col := range cols {
		leaf, ok := schema.Lookup(col.name)
		if !ok {
			return nil, fmt.Errorf("export: column %q is not in the Parquet schema", col.name)
		}
		pw.index = append(pw.index, leaf.ColumnIndex)
	}
	return pw, nil
}

func (p *parquetWriter) Write(r *Row) error {
	row := make(parquet.Row, len(p.cols))
	for i, col := range p.cols {
		v := col.get(r)
		ci := p.index[i]
		var pv parquet.Value
		switch v := v.(type) {
		case nil:
			row[ci] = parquet.NullValue().Level(0, 0, ci)
			continue
		case json.RawMessage:
			pv = parquet.ByteArrayValue(v)
			p.bytes += len(v)
		case string:
			pv = parquet.ByteArrayValue([]byte(v))
			p.bytes += len(v)
		default:
			pv = parquet.ValueOf(v)
		}
		def := 0
		if col.optional {
			def = 1
		}
		row[ci] = pv.Level(0, def, ci)
	}
	p.batch = append(p.batch, row)
	if len(p.batch) == 256 || p.bytes >= parquetGroupBytes {
		if err := p.flush(); err != nil {
			return err
		}
	}
	if p.bytes >= parquetGroupBytes {
		p.bytes = 0
		return p.w.Flush() // ends the row group
	}
	return nil
}

func (p *parquetWriter) flush() error {
	if len(p.batch) == 0 {
		return nil
	}
	_, err := p.w.WriteRows(p.batch)
	p.batch = p.batch[:0]
	return err
}

func (p *parquetWriter) Close() error {
	if err := p.flush(); err != nil {
		return err
	}
	return p.w.Close()
}

// ReadParquet reads an exported Parquet file back, calling fn with each
// row as a map from column name to value (string, int64, float64, bool,
// or nil for a null; JSON columns as their text).
func ReadParquet(r io.ReaderAt, size int64, fn func(map[string]any) error) error {
	f, err := parquet.OpenFile(r, size)
	if err != nil {
		return err
	}
	cols := f.Schema().Columns()
	names := make([]string, len(cols))
	kinds := make([]parquet.Kind, len(cols))
	for i, path := range cols {
		leaf, _ := f.Schema().Lookup(path...)
		names[i] = path[0]
		kinds[i] = leaf.Node.Type().Kind()
	}
	rd := parquet.NewReader(f)
	defer rd.Close()
	buf := make([]parquet.Row, 128)
	for {
		n, err := rd.ReadRows(buf)
		for _, row := range buf[:n] {
			m := make(map[string]any, len(names))
			for _, v := range row {
				ci := v.Column()
				if v.IsNull() {
					m[names[ci]] = nil
					continue
				}
				switch kinds[ci] {
				case parquet.ByteArray:
					m[names[ci]] = string(v.ByteArray())
				case parquet.Int64:
					m[names[ci]] = v.Int64()
				case parquet.Double:
					m[names[ci]] = v.Double()
				case parquet.Boolean:
					m[names[ci]] = v.Boolean()
				default:
					m[names[ci]] = v.String()
				}
			}
			if err := fn(m); err != nil {
				return err
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
