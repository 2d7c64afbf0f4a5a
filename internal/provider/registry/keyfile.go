package registry

import (
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/assay-eval/assay/internal/spec"
)

// maxKeyFileBytes bounds what is read of an api_key_file: keys are short.
const maxKeyFileBytes = 64 << 10

// readKeyFile reads target i's api_key_file (relative to the spec) when the
// provider is built. One trailing newline (\n or \r\n, as editors and
// `echo` leave) is dropped; surrounding whitespace or a control character
// is then a problem (spec.KeyValueFlaw, as for a key from the environment),
// the key shown masked. The key goes to the
// caller only.
func readKeyFile(sp *spec.Spec, i int) (string, error) {
	t := &sp.Targets[i]
	path := fmt.Sprintf("targets[%d].api_key_file", i)
	f, err := os.Open(sp.Resolve(t.APIKeyFile))
	if err != nil {
		return "", spec.Problems{sp.Problemf(path, "write the key to the file (one line), or use api_key_env",
			"target %s: cannot read api_key_file: %v", t.Name, err)}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxKeyFileBytes+1))
	if err != nil {
		return "", spec.Problems{sp.Problemf(path, "", "target %s: reading api_key_file: %v", t.Name, err)}
	}
	if len(b) > maxKeyFileBytes {
		return "", spec.Problems{sp.Problemf(path, "the file should hold the key alone", "target %s: api_key_file is larger than %d KiB", t.Name, maxKeyFileBytes>>10)}
	}
	key := string(b)
	if k, ok := strings.CutSuffix(key, "\r\n"); ok {
		key = k
	} else {
		key = strings.TrimSuffix(key, "\n")
	}
	if key == "" {
		return "", spec.Problems{sp.Problemf(path, "write the key to the file", "target %s: api_key_file is empty", t.Name)}
	}
	// The same check as a key from the environment, after the one
	// newline a file may end with.
	if flaw := spec.KeyValueFlaw(key); flaw != "" {
		return "", spec.Problems{sp.Problemf(path, "the file must hold the key alone, optionally followed by one newline",
			"target %s: the key in api_key_file %s: %s", t.Name, flaw, spec.MaskSecret(key))}
	}
	return key, nil
}
