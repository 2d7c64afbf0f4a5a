package spec

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// agent: runs each case as a tool-calling loop. The decoder fills Agent
// from its yaml tags; checkAgent applies the default turn bound and holds
// the handlers to the tools the spec offers; agentHash covers it all
// (PromptHash), the files a handler reads by content.

// Bounds of agent.max_turns.
const (
	DefaultMaxTurns = 10
	MaxMaxTurns     = 100
)

// checkAgent checks agent: max_turns in 1..MaxMaxTurns (DefaultMaxTurns
// when not written); a handler for every tool offered (tools:) and no
// handler for a tool not offered; each handler exactly one of exec, replay
// and mock, with its limits and env on exec handlers only. The file a
// replay handler reads and the program an exec handler runs (when it is a
// path to a file) are recorded in Files and the hashes by content.
func (v *validator) checkAgent() {
	a := v.s.Agent
	if a == nil {
		return
	}
	if !v.written("agent.max_turns") {
		a.MaxTurns = DefaultMaxTurns
	} else if a.MaxTurns < 1 || a.MaxTurns > MaxMaxTurns {
		v.at("agent.max_turns", fmt.Sprintf("the most model calls in one case's loop: 1 to %d; %d when not set", MaxMaxTurns, DefaultMaxTurns),
			"agent.max_turns must be between 1 and %d, got %d", MaxMaxTurns, a.MaxTurns)
	}
	offered := v.toolNames
	if c := v.s.ToolChoice; c != "" && c != "auto" && c != "none" {
		// Every model call must then call a tool: no reply could end the
		// loop, and every case would fail at max_turns.
		v.at("tool_choice", "with agent: use tool_choice auto (or leave it out): the loop ends when the model answers without a call",
			"tool_choice %s forces a call on every turn, so an agent loop could only end at max_turns", shortQuote(c))
	}
	const toolsHint = "give each tool in tools: a handler under agent.tools, e.g. agent: {tools: {lookup: {exec: [./lookup.py]}}}"
	if len(v.s.toolItems) == 0 {
		v.at("agent", "add tools: (the functions the model may call) and a handler for each under agent.tools", "agent is set but the spec offers no tools")
	}
	if len(a.Tools) == 0 {
		if !v.bad["agent.tools"] {
			v.at("agent.tools", toolsHint, "agent.tools is required: a handler for every tool the spec offers")
		}
		return
	}
	for _, name := range offered {
		if _, ok := a.Tools[name]; !ok {
			v.at("agent.tools", toolsHint, "tool %s has no handler in agent.tools", shortQuote(name))
		}
	}
	for _, name := range sortedKeys(a.Tools) {
		p := "agent.tools." + name
		h := a.Tools[name]
		if len(offered) > 0 && !contains(offered, name) { // none read (no tools:, or a tools file that failed): said already
			hint := "agent.tools names the tools of tools: (" + strings.Join(offered, ", ") + ")"
			if near := nearest(name, offered); near != "" {
				hint = fmt.Sprintf("did you mean %q? %s", near, hint)
			}
			v.at(p, hint, "agent.tools.%s answers a tool the spec does not offer", name)
		}
		v.checkHandler(p, &h)
		a.Tools[name] = h
	}
}

// checkHandler checks one tool's handler.
func (v *validator) checkHandler(p string, h *ToolHandler) {
	var set []string
	if v.written(p+".exec") || len(h.Exec) > 0 {
		set = append(set, "exec")
	}
	if v.written(p+".replay") || h.Replay != "" {
		set = append(set, "replay")
	}
	if v.written(p+".mock") || h.Mock != nil {
		set = append(set, "mock")
	}
	const kinds = "a handler is one of exec: [program, args...] (run isolated like an exec target), replay: FILE.jsonl (recorded results) or mock: {result: TEXT}"
	switch len(set) {
	case 0:
		if !v.bad[p] {
			v.at(p, kinds, "%s needs a handler: exec, replay or mock", p)
		}
		return
	case 1:
	default:
		v.at(p+"."+set[1], kinds, "%s sets %s: write exactly one of exec, replay and mock", p, strings.Join(set, " and "))
		return
	}
	switch set[0] {
	case "exec":
		switch {
		case len(h.Exec) == 0:
			v.at(p+".exec", "the program and its arguments, e.g. exec: [python3, tools/lookup.py]", "%s.exec must name a program", p)
		case strings.TrimSpace(h.Exec[0]) == "":
			v.at(p+".exec[0]", "the program and its arguments, e.g. exec: [python3, tools/lookup.py]", "%s.exec[0] is empty: it is the program to run", p)
		default:
			for i, arg := range h.Exec {
				v.recordProgram(fmt.Sprintf("%s.exec[%d]", p, i), arg, i == 0)
			}
		}
	case "replay":
		if h.Replay == "" {
			v.at(p+".replay", "a JSONL file of {tool, arguments, result} lines, relative to the spec", "%s.replay must name a file", p)
		} else {
			v.recordAgentFile(p+".replay", h.Replay, true)
		}
	case "mock":
		if h.Mock == nil {
			h.Mock = &ToolMock{} // mock: {} answers every call with ""
		}
	}
	if set[0] != "exec" {
		for _, k := range []string{"timeout", "max_output_bytes", "env"} {
			if v.written(p + "." + k) {
				v.at(p+"."+k, k+" applies to exec handlers only", "%s.%s is set but the handler is %s", p, k, set[0])
			}
		}
		return
	}
	if v.written(p+".timeout") && h.Timeout <= 0 && !v.bad[p+".timeout"] {
		v.at(p+".timeout", "write a duration like 30s or 500ms (default 30s)", "%s.timeout must be greater than 0", p)
	}
	if v.written(p+".max_output_bytes") && (h.MaxOutputBytes < 1 || h.MaxOutputBytes > MaxOutputBytesCap) {
		v.at(p+".max_output_bytes", "the most bytes of a result the program may write (default 1 MiB)", "%s.max_output_bytes must be between 1 and %d, got %d", p, MaxOutputBytesCap, h.MaxOutputBytes)
	}
	v.checkEnvNames(p+".env", h.Env)
}

// checkEnvNames checks a list of variable names at path p (a target's or a
// tool handler's env:): names only, never echoed (an entry may be a pasted
// value), each once, not SpecDirVar.
func (v *validator) checkEnvNames(p string, names []string) {
	seen := map[string]int{}
	for j, name := range names {
		ep := fmt.Sprintf("%s[%d]", p, j)
		switch {
		case LooksLikeSecret(name):
			v.at(ep, pastedSecretHint("MY_API_KEY"), "%s looks like a secret value (%s) pasted where a variable NAME belongs", ep, MaskSecret(name))
		case !envName.MatchString(name):
			v.at(ep, "write the variable's name (letters, digits and _, not starting with a digit), e.g. MY_API_KEY, and export it in the environment", "%s must name an environment variable, not hold a value", ep)
		case name == SpecDirVar:
			v.at(ep, "assay sets it to the spec's directory; remove it from env", "%s: %s cannot be named", ep, SpecDirVar)
		default:
			if first, dup := seen[name]; dup {
				list := p[strings.LastIndex(p, ".")+1:] // "env"
				v.at(ep, "name each variable once", "%s: %s is already named at %s[%d]", ep, name, list, first)
				continue
			}
			seen[name] = j
		}
	}
}

// recordProgram records by content a file an exec handler runs: its
// program when that is a path (./tools/lookup.sh, relative to the spec; a
// bare name like python3 is looked up in PATH when the handler runs and
// is not read), and an argument that names a file in the spec's directory
// (python3 tools/lookup.py), so editing the script changes the hashes.
func (v *validator) recordProgram(p, arg string, program bool) {
	if program && !strings.ContainsRune(arg, '/') && !strings.ContainsRune(arg, filepath.Separator) {
		return
	}
	if !program && (arg == "" || filepath.IsAbs(arg) || !filepath.IsLocal(filepath.Clean(arg))) {
		return // a flag, or a path outside the spec's directory: not the user's script
	}
	fi, err := os.Stat(v.s.Resolve(arg))
	if program && (err != nil || fi.IsDir()) {
		why := "it is a directory, not a program"
		if err != nil {
			why = FileError(err)
		}
		v.at(p, "a path with a / is relative to the spec's directory; a bare name (python3, sh) is looked up in PATH", "%s: cannot run %s: %s", p, shortQuote(arg), why)
		return
	}
	if err != nil || !fi.Mode().IsRegular() {
		return // not a file: an argument like any other
	}
	v.recordAgentFile(p, arg, false)
}

// recordAgentFile hashes a file a handler reads (streamed: a replay file
// may be large) into Files, the spec's hash and the prompt hash; a file
// that cannot be read is a problem when required.
func (v *validator) recordAgentFile(p, rel string, required bool) {
	sum, err := fileSum(v.s.Resolve(rel))
	if err != nil {
		if required {
			v.at(p, "paths are relative to the spec's directory", "%s: cannot read %s: %s", p, shortQuote(rel), FileError(err))
		}
		return
	}
	digest := "sha256:" + hex.EncodeToString(sum)
	v.files = append(v.files, [2]string{p, digest})
	v.s.agentFiles = append(v.s.agentFiles, [2]string{p, digest})
	v.s.recordDigest(FileForPrompt, rel, digest)
}

// fileSum is the SHA-256 of a regular file's content.
func fileSum(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.IsDir() {
		return nil, &os.PathError{Op: "read", Path: p, Err: errIsDir}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return nil, err
	}
	return h.Sum(nil), nil
}

var errIsDir = fmt.Errorf("it is a directory, not a file")

// writeAgent adds the agent's configuration to a prompt hash: the turn
// bound, each handler by tool name (sorted) and the content of every file
// a handler reads. Nothing is written for a spec without agent:, so such a
// spec hashes as before.
func (s *Spec) writeAgent(h hash.Hash) {
	if s.Agent == nil {
		return
	}
	b, err := json.Marshal(s.Agent) // map keys sorted
	if err != nil {
		panic(fmt.Sprintf("spec: hashing the agent: %v", err))
	}
	writeField(h, "agent", b)
	files := append([][2]string(nil), s.agentFiles...)
	sort.Slice(files, func(i, j int) bool { return files[i][0] < files[j][0] })
	for _, f := range files {
		writeField(h, f[0], []byte(f[1]))
	}
}
