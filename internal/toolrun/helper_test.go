package toolrun

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	osexec "os/exec"
	"strconv"
	"strings"
	"testing"
	"time"
)

// helperFlag makes the test binary act as a user's tool handler: the tests
// run it (the test binary re-executed) with a mode instead of building one.
const helperFlag = "-assay-tool-helper"

func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == helperFlag {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	// Under -race each helper would sleep a second at exit waiting for race
	// reports; the helpers are given GORACE by name where it matters.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	os.Exit(m.Run())
}

// runHelper is the test handler; each mode is one behaviour of a user's program.
func runHelper(mode string, args []string) int {
	arg := func(i int) string {
		if i < len(args) {
			return args[i]
		}
		return ""
	}
	switch mode {
	case "stdin": // print what was read, then a newline
		b, _ := io.ReadAll(os.Stdin)
		os.Stdout.Write(b)
		return 0
	case "print": // print the argument as is
		fmt.Print(arg(0))
		return 0
	case "environ": // print the whole environment as a JSON object
		env := map[string]string{}
		for _, kv := range os.Environ() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		b, _ := json.Marshal(env)
		os.Stdout.Write(b)
		return 0
	case "write": // write files by relative paths, print the working directory
		for _, name := range []string{"mine.txt", "../up.txt", "../../planted.txt"} {
			if err := os.WriteFile(name, []byte("x"), 0o644); err != nil {
				fmt.Fprintln(os.Stderr, "helper:", err)
			}
		}
		wd, _ := os.Getwd()
		fmt.Print(wd)
		return 0
	case "fail": // complain on stderr and exit 3
		fmt.Fprintln(os.Stderr, strings.Repeat("noise ", 1000))
		fmt.Fprintln(os.Stderr, "LAST-LINE-MARKER \x1b[31m")
		return 3
	case "sleep":
		d, _ := time.ParseDuration(arg(0))
		time.Sleep(d)
		return 0
	case "hang": // start a grandchild sharing stdout, record its pid, hang
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
	case "flood": // print without end
		chunk := []byte(strings.Repeat("x", 64<<10))
		for {
			if _, err := os.Stdout.Write(chunk); err != nil {
				return 1
			}
		}
	case "binary":
		os.Stdout.Write([]byte{0xff, 0xfe, 'a'})
		return 0
	}
	fmt.Fprintln(os.Stderr, "helper: unknown mode", mode)
	return 2
}

// helperExe is the test binary, run as the user's handler.
func helperExe(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}
