package spec

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
)

// MaxExpandedBytes bounds the size of a spec once its aliases are expanded.
// An alias repeats its anchor's whole value, so a small file can describe a
// huge one (a 128 KiB anchor aliased 25,000 times is 3 GiB); the bound is far
// above any real spec and is checked on the syntax tree before anything is
// decoded.
const MaxExpandedBytes = 8 << 20

// aliasExpansion walks the syntax tree in document order, adding up the
// bytes of every scalar with each alias counted as its anchor's full value.
// It stops at the first alias that takes the total past MaxExpandedBytes.
type aliasExpansion struct {
	anchors map[string]int64 // expanded size of each anchor defined so far
	total   int64
	over    ast.Node // the alias that crossed the bound
}

// checkExpansion reports, at the alias that crosses it, a spec that expands
// past MaxExpandedBytes.
func checkExpansion(file string, root ast.Node) Problems {
	e := &aliasExpansion{anchors: map[string]int64{}}
	e.size(root)
	if e.over == nil {
		return nil
	}
	at := nodeLoc(e.over)
	return Problems{{File: file, Line: at.Line, Col: at.Col,
		Msg:  fmt.Sprintf("aliases expand the spec past %d MiB; at most %d MiB is allowed after expansion", MaxExpandedBytes>>20, MaxExpandedBytes>>20),
		Hint: "an alias repeats its anchor's whole value; move long text to a file:// reference or repeat fewer times"}}
}

// size returns the expanded size of n (each node counts at least one byte,
// so aliases of empty values add up too) and adds its own bytes to the
// running total; after the bound is crossed it returns at once.
func (e *aliasExpansion) size(n ast.Node) int64 {
	if n == nil || e.over != nil {
		return 0
	}
	var own int64 = 1
	switch m := n.(type) {
	case *ast.DocumentNode:
		return e.size(m.Body)
	case *ast.TagNode:
		return e.size(m.Value)
	case *ast.AnchorNode:
		sz := e.size(m.Value)
		if name := anchorName(m.Name); name != "" {
			e.anchors[name] = sz
		}
		return sz
	case *ast.AliasNode:
		sz := e.anchors[anchorName(m.Value)]
		e.total += sz
		if e.total > MaxExpandedBytes {
			e.over = m
		}
		return sz
	case *ast.MappingNode:
		e.total++
		for _, v := range m.Values {
			own += e.size(v)
		}
		return own
	case *ast.MappingValueNode:
		return e.size(m.Key) + e.size(m.Value)
	case *ast.MappingKeyNode:
		return e.size(m.Value)
	case *ast.SequenceNode:
		e.total++
		for _, v := range m.Values {
			own += e.size(v)
		}
		return own
	case *ast.LiteralNode:
		if m.Value != nil {
			own += int64(len(m.Value.Value))
		}
	default:
		if tk := n.GetToken(); tk != nil {
			own += int64(len(tk.Value))
		}
	}
	e.total += own
	if e.total > MaxExpandedBytes {
		e.over = n
	}
	return own
}
