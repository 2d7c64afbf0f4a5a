package store

import (
	"encoding/base64"
	"encoding/json"
)

// Cursor is a position in a run's results in dataset order, as both stores
// make it for BrowseResults (so a cursor means the same to each). Known is
// a position among results of recorded cases (by line, case, target,
// epoch), otherwise among the rest (by case, target, epoch; Start: before
// the first of them). Whole means after every result of case Case;
// otherwise after the result Case, Target, Epoch.
//
// Case and Target keep their bytes through Encode and DecodeCursor: IDs
// need not be UTF-8 (a CSV dataset's ID column), and a cursor that turned
// them into U+FFFD would stand before the case it left and never move on.
type Cursor struct {
	Known  bool
	Start  bool
	Whole  bool
	Line   int
	Case   string
	Target string
	Epoch  int
}

// cursorVersion marks the cursors this version makes; an older version's
// (whose IDs were JSON text) is ErrBadCursor.
const cursorVersion = 2

// cursorWire is a Cursor as encoded: the IDs as bytes (base64 in JSON).
type cursorWire struct {
	V      int    `json:"v"`
	Known  bool   `json:"k"`
	Start  bool   `json:"s,omitempty"`
	Whole  bool   `json:"w,omitempty"`
	Line   int    `json:"l,omitempty"`
	Case   []byte `json:"c"`
	Target []byte `json:"t,omitempty"`
	Epoch  int    `json:"e,omitempty"`
}

// Encode makes the cursor's text (URL-safe).
func (c Cursor) Encode() string {
	b, _ := json.Marshal(cursorWire{V: cursorVersion, Known: c.Known, Start: c.Start, Whole: c.Whole, Line: c.Line,
		Case: []byte(c.Case), Target: []byte(c.Target), Epoch: c.Epoch})
	return base64.RawURLEncoding.EncodeToString(b)
}

// DecodeCursor reads a cursor Encode made: nil for "" (the start), and
// ErrBadCursor for anything else.
func DecodeCursor(s string) (*Cursor, error) {
	if s == "" {
		return nil, nil
	}
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return nil, ErrBadCursor
	}
	var w cursorWire
	if err := json.Unmarshal(b, &w); err != nil || w.V != cursorVersion {
		return nil, ErrBadCursor
	}
	return &Cursor{Known: w.Known, Start: w.Start, Whole: w.Whole, Line: w.Line, Case: string(w.Case), Target: string(w.Target), Epoch: w.Epoch}, nil
}

// CursorPosition says where a cursor stands (see Browse.CursorPosition).
func CursorPosition(cursor string) (caseID string, line int, ok bool) {
	c, err := DecodeCursor(cursor)
	if err != nil || c == nil {
		return "", 0, false
	}
	if !c.Known {
		return c.Case, 0, true
	}
	return c.Case, c.Line, true
}
