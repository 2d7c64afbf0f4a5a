package spec

import (
	"encoding/json"
	"testing"
)

// The scorers of tool calls check arguments against the tools' parameters,
// so ScorersHash covers them; a spec without tools hashes as before, and a
// tool's description (which no scorer reads) does not count.
func TestScorersHashCoversToolParameters(t *testing.T) {
	base := func() *Spec {
		return &Spec{Scorers: []Scorer{{Name: "call", Type: "tool_call"}}}
	}
	plain := base().ScorersHash()
	withTool := base()
	withTool.Tools = []Tool{{Name: "lookup", Description: "finds", Parameters: json.RawMessage(`{"type": "object"}`)}}
	described := base()
	described.Tools = []Tool{{Name: "lookup", Description: "finds things", Parameters: json.RawMessage(`{"type": "object"}`)}}
	changed := base()
	changed.Tools = []Tool{{Name: "lookup", Description: "finds", Parameters: json.RawMessage(`{"type": "object", "required": ["q"]}`)}}
	broken := base()
	broken.Tools = []Tool{{Name: "lookup", Parameters: json.RawMessage(`{not json`)}}
	if withTool.ScorersHash() == plain || changed.ScorersHash() == withTool.ScorersHash() {
		t.Error("a tool's parameters do not change the scorers hash")
	}
	if described.ScorersHash() != withTool.ScorersHash() {
		t.Error("a tool's description changed the scorers hash")
	}
	if broken.ScorersHash() == plain {
		t.Error("parameters that are not JSON hash as none")
	}
	if got := (&Spec{}).ScorersHash(); got != (&Spec{Tools: nil}).ScorersHash() {
		t.Errorf("no tools: %s", got)
	}
}
