package scorer

import (
	"encoding/json"
	"fmt"
)

// The helpers below make every scorer fail closed on its own, also when it
// is called directly rather than through a Set.

// parsedAnswer returns the parsed output, or the failing verdict when there
// is none: a parse error is loud unparseable; an empty output or answer is
// loud empty unless allowEmpty.
func parsedAnswer(in *Input, allowEmpty bool) (any, Verdict, bool) {
	if !allowEmpty && isEmptyRaw(in.Raw) {
		return nil, loud(KindEmpty, "the output is empty"), false
	}
	if in.ParseErr != nil {
		return nil, loud(KindUnparseable, "%s", clip(in.ParseErr.Error(), 300)), false
	}
	if !allowEmpty && isEmptyValue(in.Parsed) {
		return nil, loud(KindEmpty, "the parsed answer is empty (%s)", quote(in.Parsed)), false
	}
	return in.Parsed, Verdict{}, true
}

// rawAnswer returns the raw output, or the failing verdict when it is empty
// and empty is not allowed.
func rawAnswer(in *Input, allowEmpty bool) (string, Verdict, bool) {
	if !allowEmpty && isEmptyRaw(in.Raw) {
		return "", loud(KindEmpty, "the output is empty"), false
	}
	return in.Raw, Verdict{}, true
}

// expectedValue returns the case's expected value, or a loud scorer_error
// when the case has none: a missing reference never passes.
func expectedValue(in *Input) (any, Verdict, bool) {
	if in.Expected == nil {
		id := "this case"
		if in.Case != nil {
			id = "case " + in.Case.ID
		}
		return nil, loud(KindScorerError, "%s has no expected value (set dataset.expected to the field holding the answer)", id), false
	}
	return in.Expected, Verdict{}, true
}

// outputText renders a parsed output as text for text-matching scorers:
// strings as they are, other JSON values as compact JSON.
func outputText(v any) string {
	if s, ok := scalarString(v); ok {
		return s
	}
	b, err := json.Marshal(canonical(v))
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
