// Package blind owns the blinded vendor exchange: a sample of inputs with
// opaque IDs, shuffled, with no expected values, tags or internal IDs
// (export), and a sealed key kept locally that maps a vendor's answers back
// to the cases (import), refusing any mismatch.
//
// The package reads and writes the two files and the vendor's answers; it
// renders nothing and calls nothing (the caller hands it each case's
// rendered messages, and stores the run the answers make). Its types are
// the records' (report renders its results): it must not import the
// runner, the engine or internal/provider.
package blind

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	mrand "math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/atomicfile"
	"github.com/assay-eval/assay/internal/record"
)

// KeyFormat names the key file's format (and its version).
const KeyFormat = "assay-blind-key/1"

// Item is one line of the blinded sample: what the vendor sends its model.
// It holds nothing that names or grades the case.
type Item struct {
	ID       string           `json:"id"`
	Messages []record.Message `json:"messages"`
	// Tools, ToolChoice and ResponseFormat are what the spec offers the
	// model with every request (absent when it offers none).
	Tools          []Tool          `json:"tools,omitempty"`
	ToolChoice     string          `json:"tool_choice,omitempty"`
	ResponseFormat *ResponseFormat `json:"response_format,omitempty"`
}

// Tool is one function the model may call, as a request offers it.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

// ResponseFormat is the JSON Schema a reply must fill.
type ResponseFormat struct {
	Name   string          `json:"name"`
	Schema json.RawMessage `json:"schema"`
	Strict bool            `json:"strict,omitempty"`
}

// Case is one case to blind: its ID (kept in the key only) and its
// rendered prompt messages.
type Case struct {
	ID       string
	Messages []record.Message
}

// Offer is what the spec sends with every request besides the messages.
type Offer struct {
	Tools          []Tool
	ToolChoice     string
	ResponseFormat *ResponseFormat
}

// Key is the sealed key file: which case each opaque ID stands for, in the
// sample's order, and what the sample was made from. Seal is the
// HMAC-SHA256 (hex) under Secret of the key's JSON with Seal empty: a key
// edited by hand or damaged no longer matches it. The secret is in the
// file, so the seal is no signature against whoever holds the key: keep
// the key file private (it is written 0600).
type Key struct {
	Format  string    `json:"format"`
	Created time.Time `json:"created"`
	// Spec is the spec's name, SpecPath its path as given to export.
	Spec     string `json:"spec"`
	SpecPath string `json:"spec_path"`
	// SpecHash, DatasetHash and PromptHash are the spec's, the dataset's
	// and the prompt's (with the tools and response format) hashes as a
	// run records them.
	SpecHash    string `json:"spec_hash"`
	DatasetHash string `json:"dataset_hash"`
	PromptHash  string `json:"prompt_hash"`
	// Sample is the sample file's path as written; SampleSHA256 the hash
	// of its bytes.
	Sample       string `json:"sample"`
	SampleSHA256 string `json:"sample_sha256"`
	// Seed drew and shuffled the sample; Population is how many cases it
	// was drawn from.
	Seed       uint64 `json:"seed"`
	Population int    `json:"population"`
	// Items are the sample's lines in order.
	Items  []KeyItem `json:"items"`
	Secret string    `json:"secret"`
	Seal   string    `json:"seal"`
}

// KeyItem maps one opaque ID to its case.
type KeyItem struct {
	ID   string `json:"id"`
	Case string `json:"case"`
}

// ExportOptions say what Export writes and from what.
type ExportOptions struct {
	// Sample and Key are the files written; Force replaces an existing
	// key (without it an existing key is refused: it is the only way back
	// from a sample already sent).
	Sample, Key string
	Force       bool
	// Cases draws this many cases at random (0: every case).
	Cases int
	// Seed draws and shuffles the sample; SeedSet says it was given
	// (otherwise a random seed is drawn and recorded in the key).
	Seed    uint64
	SeedSet bool
	Offer   Offer
	// What the key records of the spec.
	Spec, SpecPath, SpecHash, DatasetHash, PromptHash string
	Now                                               time.Time
	// Random is where opaque IDs, the secret and an unset seed come from
	// (nil: crypto/rand).
	Random io.Reader
}

// ExportResult is what `assay export --blind` wrote.
type ExportResult struct {
	Sample       string `json:"sample"`
	SampleSHA256 string `json:"sample_sha256"`
	Key          string `json:"key"`
	Cases        int    `json:"cases"`
	Population   int    `json:"population"`
	Seed         uint64 `json:"seed"`
	Spec         string `json:"spec"`
	DatasetHash  string `json:"dataset_hash"`
	PromptHash   string `json:"prompt_hash"`
}

// ErrKeyExists is Export's answer when the key file exists and Force is
// not set.
var ErrKeyExists = errors.New("the key file already exists")

// Export draws the sample from cases (their order does not matter: the
// draw and the shuffle come from the seed), writes it to o.Sample as JSONL
// (one Item a line) and the key to o.Key (mode 0600). Nothing is written
// when the key exists (unless Force); the key is written first, then the
// sample whole or not at all (the new key is removed when the sample
// cannot be written).
func Export(cases []Case, o ExportOptions) (*ExportResult, error) {
	if len(cases) == 0 {
		return nil, errors.New("the dataset has no cases to send")
	}
	if filepath.Clean(o.Key) == filepath.Clean(o.Sample) {
		return nil, fmt.Errorf("the key and the sample are one file (%s): the key must stay with you and the sample goes to the vendor; give another --key", o.Key)
	}
	if o.Cases < 0 {
		return nil, fmt.Errorf("the number of cases must not be negative (got %d)", o.Cases)
	}
	if !o.Force {
		if _, err := os.Lstat(o.Key); err == nil {
			return nil, fmt.Errorf("%s: %w: it maps an earlier sample's IDs back to the cases and overwriting it would lose that sample's answers; give another --key, or --force", o.Key, ErrKeyExists)
		} else if !errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
	}
	random := o.Random
	if random == nil {
		random = rand.Reader
	}
	seed := o.Seed
	if !o.SeedSet {
		var b [8]byte
		if _, err := io.ReadFull(random, b[:]); err != nil {
			return nil, fmt.Errorf("drawing a seed: %w", err)
		}
		seed = uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
			uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
	}
	// The draw does not depend on the order the cases came in.
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	sortByID(order, cases)
	rng := mrand.New(mrand.NewPCG(seed, 0x626c696e64)) // "blind"
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	if o.Cases > 0 && o.Cases < len(order) {
		order = order[:o.Cases]
	}

	ids, err := opaqueIDs(random, len(order))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	items := make([]KeyItem, len(order))
	for k, i := range order {
		it := Item{ID: ids[k], Messages: cases[i].Messages, Tools: o.Offer.Tools, ToolChoice: o.Offer.ToolChoice, ResponseFormat: o.Offer.ResponseFormat}
		if err := enc.Encode(it); err != nil {
			return nil, fmt.Errorf("writing the sample: %w", err)
		}
		items[k] = KeyItem{ID: ids[k], Case: cases[i].ID}
	}
	sum := sha256.Sum256(buf.Bytes())
	secret := make([]byte, 32)
	if _, err := io.ReadFull(random, secret); err != nil {
		return nil, fmt.Errorf("drawing the key's secret: %w", err)
	}
	k := &Key{
		Format: KeyFormat, Created: o.Now.UTC(),
		Spec: o.Spec, SpecPath: o.SpecPath, SpecHash: o.SpecHash, DatasetHash: o.DatasetHash, PromptHash: o.PromptHash,
		Sample: o.Sample, SampleSHA256: hex.EncodeToString(sum[:]),
		Seed: seed, Population: len(cases), Items: items,
		Secret: hex.EncodeToString(secret),
	}
	if k.Seal, err = k.seal(); err != nil {
		return nil, err
	}
	keyJSON, err := json.MarshalIndent(k, "", "  ")
	if err != nil {
		return nil, err
	}
	// The key first: a sample is never left without the key that maps it
	// back (a sample that fails to write takes its new key with it).
	if err := writeKey(o.Key, append(keyJSON, '\n'), o.Force); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(o.Sample, func(w io.Writer) error { _, err := w.Write(buf.Bytes()); return err }); err != nil {
		os.Remove(o.Key)
		return nil, err
	}
	return &ExportResult{Sample: o.Sample, SampleSHA256: k.SampleSHA256, Key: o.Key, Cases: len(items), Population: len(cases),
		Seed: seed, Spec: o.Spec, DatasetHash: o.DatasetHash, PromptHash: o.PromptHash}, nil
}

// sortByID orders case indexes by case ID (insertion order for equal IDs).
func sortByID(order []int, cases []Case) {
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(cases[a].ID, cases[b].ID) })
}

// opaqueIDs draws n distinct random IDs of 16 hex digits: they say
// nothing of the case, its line or the draw.
func opaqueIDs(random io.Reader, n int) ([]string, error) {
	ids := make([]string, 0, n)
	seen := make(map[string]bool, n)
	b := make([]byte, 8)
	for len(ids) < n {
		if _, err := io.ReadFull(random, b); err != nil {
			return nil, fmt.Errorf("drawing opaque IDs: %w", err)
		}
		id := hex.EncodeToString(b)
		if seen[id] {
			continue
		}
		seen[id] = true
		ids = append(ids, id)
	}
	return ids, nil
}

// writeKey writes the key with mode 0600: created exclusively unless
// force (then replaced whole, through a temporary file).
func writeKey(path string, b []byte, force bool) error {
	if force {
		if err := atomicfile.Write(path, func(w io.Writer) error { _, err := w.Write(b); return err }); err != nil {
			return err
		}
		return os.Chmod(path, 0o600)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return fmt.Errorf("%s: %w; give another --key, or --force", path, ErrKeyExists)
	}
	if err != nil {
		return fmt.Errorf("writing the key: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing the key %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(path)
		return fmt.Errorf("writing the key %s: %w", path, err)
	}
	return f.Close()
}

// seal is the key's HMAC under its secret, over its JSON with Seal empty.
func (k *Key) seal() (string, error) {
	secret, err := hex.DecodeString(k.Secret)
	if err != nil || len(secret) < 16 {
		return "", errors.New("the key's secret is not 16 or more bytes of hex")
	}
	c := *k
	c.Seal = ""
	b, err := json.Marshal(&c)
	if err != nil {
		return "", err
	}
	m := hmac.New(sha256.New, secret)
	m.Write(b)
	return hex.EncodeToString(m.Sum(nil)), nil
}
