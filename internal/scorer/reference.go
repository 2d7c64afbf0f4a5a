package scorer

import (
	"sort"

	"github.com/assay-eval/assay/internal/record"
)

// TypeParams maps each scorer type to the parameters it takes besides the
// common ones (name, type, primary, weight, allow_empty). docs/spec.md
// documents every one, and a test holds the two in step.
func TypeParams() map[string][]string {
	ts := scorerTypes()
	out := make(map[string][]string, len(ts))
	for n, info := range ts {
		out[n] = append([]string(nil), info.Params...)
	}
	return out
}

// CELVariables returns the variables a cel scorer's expression may read
// and the keys of its meta map, each sorted (docs/spec.md lists them).
func CELVariables() (vars, meta []string) {
	env, err := newCELEnv()
	if err == nil {
		for _, v := range env.Variables() {
			vars = append(vars, v.Name())
		}
	}
	m, _ := celVars(&Input{Result: &record.Result{}}, nil)["meta"].(map[string]any)
	for k := range m {
		meta = append(meta, k)
	}
	sort.Strings(vars)
	sort.Strings(meta)
	return vars, meta
}
