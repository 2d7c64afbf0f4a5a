package spec

import (
	"fmt"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/token"
)

// Overlays (assay run spec.yaml -f staging.yaml) are merged into the spec's
// YAML tree before it is decoded, so an overlay's values are checked like
// the spec's own: mappings merge key by key (recursively), a scalar or a
// list replaces what the spec wrote, and targets: merges by name (an
// overlay target whose name the spec has merges into that target; a new
// name is appended). The tokens of overlay k have their lines moved up by
// k×lineBase, so every position the decoder and validator record says
// which file it is in; Problemf and the final problems map them back.
const lineBase = 1 << 24

// overlaySource is one overlay file as read.
type overlaySource struct {
	File string
	Src  []byte
}

// shiftLines moves every token under n down by delta lines.
func shiftLines(n ast.Node, delta int) {
	seen := map[*token.Position]bool{}
	shift := func(tk *token.Token) {
		if tk == nil || tk.Position == nil || seen[tk.Position] {
			return
		}
		seen[tk.Position] = true
		tk.Position.Line += delta
	}
	if tk := n.GetToken(); tk != nil {
		first := tk
		for first.Prev != nil {
			first = first.Prev
		}
		for t := first; t != nil; t = t.Next {
			shift(t)
		}
	}
	ast.Walk(visitor(func(n ast.Node) {
		shift(n.GetToken())
		if l, ok := n.(*ast.LiteralNode); ok {
			shift(l.Start)
		}
	}), n)
}

type visitor func(ast.Node)

func (v visitor) Visit(n ast.Node) ast.Visitor {
	if n != nil {
		v(n)
	}
	return v
}

// fileOf maps a (possibly shifted) line to the file it is in and its line
// there.
func fileOf(specFile string, overlays []string, line int) (string, int) {
	k := line / lineBase
	if k < 1 || k > len(overlays) {
		return specFile, line
	}
	return overlays[k-1], line - k*lineBase
}

// relocate moves problems at shifted lines to their overlay file.
func relocate(ps Problems, specFile string, overlays []string) {
	for i := range ps {
		if ps[i].File == specFile {
			ps[i].File, ps[i].Line = fileOf(specFile, overlays, ps[i].Line)
		}
	}
}

// merger merges overlay trees into the spec's.
type merger struct {
	d *decoder
}

// mapping returns n as a mapping node the merge can change in place, or
// nil when it is not one. An alias is not followed: merging into its anchor
// would change every other place that repeats it.
func asMapping(n ast.Node) *ast.MappingNode {
	for i := 0; i < 64 && n != nil; i++ {
		switch m := n.(type) {
		case *ast.TagNode:
			n = m.Value
		case *ast.AnchorNode:
			n = m.Value
		case *ast.MappingNode:
			return m
		default:
			return nil
		}
	}
	return nil
}

// merge merges the overlay mapping ov into base (both at path).
func (mg *merger) merge(base, ov *ast.MappingNode, path string) {
	seen := map[string]loc{}
	for _, kv := range ov.Values {
		if kv == nil || kv.Key == nil {
			continue
		}
		if _, ok := kv.Key.(*ast.MergeKeyNode); ok {
			mg.d.problem(nodeLoc(kv.Key), "write the keys out in an overlay", "an overlay cannot use a merge key (<<)")
			continue
		}
		key, ok := mg.d.keyText(kv.Key)
		if !ok {
			mg.d.problem(nodeLoc(kv.Key), "", "keys in %s must be plain text", orTop(path))
			continue
		}
		if first, dup := seen[key]; dup {
			mg.d.problem(nodeLoc(kv.Key), "", "duplicate key %s in %s (first at line %d)", quoteName(key), orTop(path), first.Line%lineBase)
			continue
		}
		seen[key] = nodeLoc(kv.Key)
		kp := join(path, key)
		var target *ast.MappingValueNode
		for _, bkv := range base.Values {
			if bkv == nil || bkv.Key == nil {
				continue
			}
			if _, merge := bkv.Key.(*ast.MergeKeyNode); merge {
				continue
			}
			if bk, ok := mg.d.keyText(bkv.Key); ok && bk == key {
				target = bkv
			}
		}
		if target == nil {
			base.Values = append(base.Values, kv)
			continue
		}
		if kp == "targets" {
			if mg.mergeTargets(target, kv) {
				continue
			}
		}
		bm, om := asMapping(target.Value), asMapping(kv.Value)
		if bm != nil && om != nil {
			mg.merge(bm, om, kp)
			continue
		}
		if mv, ok := target.Value.(*ast.MappingValueNode); ok && om != nil {
			m := singleMapping(mv)
			target.Value = m
			mg.merge(m, om, kp)
			continue
		}
		target.Value = kv.Value
	}
}

// mergeTargets merges an overlay's targets list into the spec's by name;
// false when either side is not a list (the overlay's value then replaces
// the spec's and the decoder reports what is wrong with it).
func (mg *merger) mergeTargets(base, ov *ast.MappingValueNode) bool {
	bs, ok1 := base.Value.(*ast.SequenceNode)
	os, ok2 := ov.Value.(*ast.SequenceNode)
	if !ok1 || !ok2 {
		return false
	}
	for _, item := range os.Values {
		om := asMapping(item)
		if mv, ok := item.(*ast.MappingValueNode); ok {
			om = singleMapping(mv)
		}
		name := ""
		if om != nil {
			for _, kv := range om.Values {
				if k, ok := mg.d.keyText(kv.Key); ok && k == "name" {
					name, _ = scalarString(mg.d.resolve(kv.Value))
				}
			}
		}
		if name == "" {
			mg.d.problem(nodeLoc(item), "an overlay's target merges into the spec's target of the same name: give it name:", "an overlay's target needs a name")
			continue
		}
		merged := false
		for i, b := range bs.Values {
			bm := asMapping(b)
			if mv, ok := b.(*ast.MappingValueNode); ok {
				bm = singleMapping(mv)
				bs.Values[i] = bm
			}
			if bm == nil {
				continue
			}
			for _, kv := range bm.Values {
				if k, ok := mg.d.keyText(kv.Key); ok && k == "name" {
					if n, _ := scalarString(mg.d.resolve(kv.Value)); n == name {
						mg.merge(bm, om, fmt.Sprintf("targets[%d]", i))
						merged = true
					}
				}
			}
			if merged {
				break
			}
		}
		if !merged {
			bs.Values = append(bs.Values, om)
		}
	}
	return true
}
