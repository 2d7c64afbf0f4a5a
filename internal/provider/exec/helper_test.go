package exec

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperFlag makes the test binary act as a user's program: the tests run
// it (os.Args[0] re-executed) with a mode instead of building one.
const helperFlag = "-assay-exec-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperFlag {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	// Under -race each helper would sleep a second at exit waiting for race
	// reports; the helpers inherit this environment.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// runHelper is the test program; each mode is one behaviour of a user's program.
func runHelper(mode string, args []string) int {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	reply := func(v map[string]any) int {
		if err := json.NewEncoder(os.Stdout).Encode(v); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		return 0
	}
	var stdin []byte
	if mode != "nostdin" && mode != "sleep" {
		var err error
		if stdin, err = io.ReadAll(os.Stdin); err != nil {
			fmt.Fprintln(os.Stderr, "helper: reading stdin:", err)
			return 2
		}
	}
	switch mode {
	case "reply": // reply with the contents of a file, after checking the request
		var req map[string]any
		if err := json.Unmarshal(stdin, &req); err != nil || req["case_id"] == nil {
			fmt.Fprintf(os.Stderr, "helper: request is not the protocol's JSON: %v %q\n", err, stdin)
			return 3
		}
		text, err := os.ReadFile(arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		return reply(map[string]any{"output": string(text), "usage": map[string]int{"input": len(stdin), "output": len(text)}, "finish_reason": "stop"})
	case "calls": // reply with the tool calls in a file, after checking the request offers tools
		var req map[string]any
		if err := json.Unmarshal(stdin, &req); err != nil || req["tools"] == nil || req["tool_choice"] != "auto" {
			fmt.Fprintf(os.Stderr, "helper: request offers no tools: %v %q\n", err, stdin)
			return 3
		}
		calls, err := os.ReadFile(arg(0))
		if err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		fmt.Printf(`{"tool_calls": %s, "finish_reason": "tool_calls"}`, calls)
		return 0
	case "request": // reply with the request as received
		return reply(map[string]any{"output": string(stdin)})
	case "slow":
		d, _ := time.ParseDuration(arg(0))
		time.Sleep(d)
		return reply(map[string]any{"output": "slow"})
	case "sleep":
		d, _ := time.ParseDuration(arg(0))
		time.Sleep(d)
		return 0
	case "spawn": // start a grandchild sharing stdout, record its pid, hang
		exe, _ := os.Executable()
		child := osexec.Command(exe, helperFlag, "sleep", "60s")
		child.Stdout = os.Stdout
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		tmp := arg(0) + ".tmp"
		if err := os.WriteFile(tmp, []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			return 2
		}
		if err := os.Rename(tmp, arg(0)); err != nil {
			return 2
		}
		time.Sleep(60 * time.Second)
		return 0
	case "spawnexit": // start a grandchild sharing stdout, reply, exit 0
		exe, _ := os.Executable()
		child := osexec.Command(exe, helperFlag, "sleep", "30s")
		child.Stdout = os.Stdout
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		if err := os.WriteFile(arg(0), []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			return 2
		}
		return reply(map[string]any{"output": "replied before exit"})
	case "flood": // print without end
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 2
			}
		}
	case "sized": // a valid reply of exactly N bytes
		n, _ := strconv.Atoi(arg(0))
		body := `{"output":"x"}`
		fmt.Print(body + strings.Repeat(" ", n-len(body)))
		return 0
	case "print":
		fmt.Print(arg(0))
		return 0
	case "exit":
		code, _ := strconv.Atoi(arg(0))
		for range 200 {
			fmt.Fprintln(os.Stderr, "noise noise noise noise noise noise")
		}
		fmt.Fprintln(os.Stderr, "LAST-LINE-MARKER \x1b[31mred\x1b[0m")
		return code
	case "stderrflood":
		n, _ := strconv.Atoi(arg(0))
		line := []byte(strings.Repeat("e", 1023) + "\n")
		for written := 0; written < n; written += len(line) {
			os.Stderr.Write(line)
		}
		return reply(map[string]any{"output": "ok"})
	case "env":
		return reply(map[string]any{"output": os.Getenv(arg(0))})
	case "pwd":
		wd, _ := os.Getwd()
		return reply(map[string]any{"output": wd})
	case "environ": // reply with the whole environment as a JSON object
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		b, _ := json.Marshal(env)
		return reply(map[string]any{"output": string(b)})
	case "args": // reply with the arguments as a JSON array
		b, _ := json.Marshal(args)
		return reply(map[string]any{"output": string(b)})
	case "litter": // write where a grader might read, then report the working directory
		wd, _ := os.Getwd()
		for _, f := range []string{"expected.json", "../answers.txt", "../../assay-planted.txt"} {
			if err := os.WriteFile(f, []byte(`{"answer": "planted"}`), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
				return 2
			}
		}
		// A read-only directory with a file in it, and a file in HOME.
		if err := os.MkdirAll("locked/deeper", 0o755); err != nil {
			return 2
		}
		os.WriteFile("locked/deeper/f", []byte("x"), 0o444)
		os.Chmod("locked/deeper", 0o500)
		os.Chmod("locked", 0o500)
		os.MkdirAll(filepath.Join(os.Getenv("HOME"), ".cache", "tool"), 0o755)
		os.WriteFile(filepath.Join(os.Getenv("HOME"), ".cache", "tool", "state"), []byte("x"), 0o644)
		return reply(map[string]any{"output": wd})
	case "background": // leave a process running that does not hold stdout, then exit 0
		exe, _ := os.Executable()
		child := osexec.Command(exe, helperFlag, "sleep", "60s")
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, "helper:", err)
			return 2
		}
		if err := os.WriteFile(arg(0), []byte(strconv.Itoa(child.Process.Pid)), 0o644); err != nil {
			return 2
		}
		return reply(map[string]any{"output": "left a process behind"})
	case "nostdin":
		return reply(map[string]any{"output": "did not read"})
	case "error":
		return reply(map[string]any{"output": "", "error": arg(0)})
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}
