package cli

import (
	"net"
	"strings"
	"testing"
)

// The capacity flags reach the mock's options, and values it cannot model
// are usage errors that name the option, before anything listens.
func TestMockCapacityFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--capacity", "-2"}, "mock: capacity is -2; it must be a number of concurrent requests >= 0 (0 = unlimited)"},
		{[]string{"--capacity", "2", "--queue-limit", "-3"}, "mock: queue limit is -3; it must be >= 1 (requests that may wait), 0 (no limit) or -1 (no queue)"},
		{[]string{"--queue-limit", "5"}, "mock: queue limit is 5 but capacity is not set; a queue forms only for a capacity (set capacity > 0)"},
		{[]string{"--slowdown", "0.5"}, "mock: slowdown is 0.5 but capacity is not set; it scales with busy slots of a capacity (set capacity > 0)"},
		{[]string{"--capacity", "2", "--slowdown", "-1"}, "mock: slowdown is -1; it must be a number >= 0"},
	} {
		inv := runCLI(t, cliEnv{}, append([]string{"mock", "--addr", "127.0.0.1:0"}, c.args...)...)
		if inv.code != 2 || !strings.Contains(inv.stderr, c.want) {
			t.Errorf("mock %v: exit %d, stderr %q; want exit 2 saying %q", c.args, inv.code, inv.stderr, c.want)
		}
	}
}

// assay mock listens on loopback unless --addr says otherwise: a load
// test's target is local by default.
func TestMockListensOnLoopbackByDefault(t *testing.T) {
	def := newMockCommand(&Globals{}).Flags().Lookup("addr").DefValue
	host, _, err := net.SplitHostPort(def)
	if err != nil {
		t.Fatalf("--addr default %q: %v", def, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		t.Errorf("--addr defaults to %q; want a loopback address", def)
	}
}
