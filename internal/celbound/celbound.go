// Package celbound bounds what a CEL expression may build: the scorers'
// expressions (scorer) and the dataset's tag expressions (dataset) compile
// in environments it guards. It imports only cel-go.
package celbound

import (
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/functions"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// MaxString bounds the strings a CEL expression (a scorer or a tag) may
// build. CEL's cost limit charges a function by the size of its result only
// after the result exists, so functions of the strings extension whose
// result can be far larger than their inputs — replace, join and format,
// and split, whose list holds a 16-byte header per piece — would allocate
// gigabytes before the limit is checked (raw.replace("a", raw) on 100 KB
// of output asks for 10 GB). Strings makes them measure the result
// first and refuse.
const MaxString = 16 << 20

// Strings returns env with replace, join, format and split guarded: a
// call whose result would exceed max bytes is an evaluation error saying
// so, raised before the result is built.
func Strings(env *cel.Env, max int) (*cel.Env, error) {
	guards := map[string]func(args []ref.Val, max int) (int, bool){
		"replace": replacedSize,
		"join":    joinedSize,
		"format":  formattedSize,
		"split":   splitSize,
	}
	var opts []cel.EnvOption
	fns := env.Functions()
	for name, size := range guards {
		fd, ok := fns[name]
		if !ok {
			continue
		}
		bindings, err := fd.Bindings()
		if err != nil {
			return nil, err
		}
		impl := map[string]*functions.Overload{}
		for _, b := range bindings {
			impl[b.Operator] = b
		}
		for _, od := range fd.OverloadDecls() {
			b, ok := impl[od.ID()]
			if !ok {
				continue
			}
			call := asFunction(b)
			if call == nil {
				continue
			}
			name, size := name, size
			guarded := cel.FunctionBinding(func(args ...ref.Val) ref.Val {
				if n, over := size(args, max); over {
					return types.NewErr("%s would build at least %d bytes; at most %d are allowed", name, n, max)
				}
				return call(args...)
			})
			var ov cel.FunctionOpt
			if od.IsMemberFunction() {
				ov = cel.MemberOverload(od.ID(), od.ArgTypes(), od.ResultType(), guarded)
			} else {
				ov = cel.Overload(od.ID(), od.ArgTypes(), od.ResultType(), guarded)
			}
			opts = append(opts, cel.Function(name, ov))
		}
	}
	return env.Extend(opts...)
}

// asFunction turns a binding of any arity into a variadic function.
func asFunction(b *functions.Overload) functions.FunctionOp {
	switch {
	case b.Function != nil:
		return b.Function
	case b.Binary != nil:
		return func(args ...ref.Val) ref.Val {
			if len(args) != 2 {
				return types.NewErr("no such overload")
			}
			return b.Binary(args[0], args[1])
		}
	case b.Unary != nil:
		return func(args ...ref.Val) ref.Val {
			if len(args) != 1 {
				return types.NewErr("no such overload")
			}
			return b.Unary(args[0])
		}
	}
	return nil
}

// replacedSize is the exact length of str.replace(old, new[, n]).
func replacedSize(args []ref.Val, max int) (int, bool) {
	if len(args) < 3 {
		return 0, false
	}
	str, ok1 := args[0].(types.String)
	old, ok2 := args[1].(types.String)
	repl, ok3 := args[2].(types.String)
	if !ok1 || !ok2 || !ok3 {
		return 0, false
	}
	count := strings.Count(string(str), string(old)) // old == "": runes + 1
	if len(args) == 4 {
		if n, ok := args[3].(types.Int); ok && n >= 0 && int64(count) > int64(n) {
			count = int(n)
		}
	}
	if len(repl) <= len(old) {
		return len(str), len(str) > max
	}
	grow := len(repl) - len(old)
	if count > 0 && grow > (max-len(str))/count {
		return len(str) + grow, true // at least; the product may not fit in an int
	}
	n := len(str) + count*grow
	return n, n > max
}

// splitSize is the bytes of the list str.split(sep[, n]) holds beyond str
// itself: one string header per piece.
func splitSize(args []ref.Val, max int) (int, bool) {
	if len(args) < 2 {
		return 0, false
	}
	str, ok1 := args[0].(types.String)
	sep, ok2 := args[1].(types.String)
	if !ok1 || !ok2 {
		return 0, false
	}
	pieces := strings.Count(string(str), string(sep)) + 1
	if len(args) == 3 {
		if n, ok := args[2].(types.Int); ok && n >= 0 && int64(pieces) > int64(n) {
			pieces = int(n)
		}
	}
	n := pieces * 16
	return n, n > max
}

// joinedSize is the exact length of list.join([sep]).
func joinedSize(args []ref.Val, max int) (int, bool) {
	if len(args) == 0 {
		return 0, false
	}
	l, ok := args[0].(traits.Lister)
	if !ok {
		return 0, false
	}
	sep := 0
	if len(args) == 2 {
		if s, ok := args[1].(types.String); ok {
			sep = len(s)
		}
	}
	n := 0
	it := l.Iterator()
	for i := 0; it.HasNext() == types.True; i++ {
		if s, ok := it.Next().(types.String); ok {
			n += len(s)
		}
		if i > 0 {
			n += sep
		}
		if n > max {
			return n, true
		}
	}
	return n, false
}

// formattedSize bounds the length of fmt.format(args) from below: every
// string, list and map in the arguments is written out at least once.
func formattedSize(args []ref.Val, max int) (int, bool) {
	n := 0
	for _, a := range args {
		n += valueSize(a, max-n)
		if n > max {
			return n, true
		}
	}
	return n, false
}

// valueSize is the bytes v takes when written out, counted until budget
// is spent.
func valueSize(v ref.Val, budget int) int {
	switch x := v.(type) {
	case types.String:
		return len(x)
	case types.Bytes:
		return len(x)
	case traits.Mapper:
		n := 2
		it := x.Iterator()
		for it.HasNext() == types.True && n <= budget {
			k := it.Next()
			n += valueSize(k, budget-n) + 2
			n += valueSize(x.Get(k), budget-n) + 2
		}
		return n
	case traits.Lister:
		n := 2
		it := x.Iterator()
		for it.HasNext() == types.True && n <= budget {
			n += valueSize(it.Next(), budget-n) + 2
		}
		return n
	}
	return 1
}
