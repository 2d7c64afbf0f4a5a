package dataset

import (
	"fmt"
	"strings"
)

// Version is how a run or a baseline file names the dataset it measured.
// Hash is the content hash (Info.Hash) and File the byte hash
// (Info.FileHash). A record made before content hashes existed has no
// File, and its Hash is the byte hash: Content and Bytes read both kinds.
type Version struct {
	Hash string
	File string
}

// Content is the content hash, "" when the record predates it.
func (v Version) Content() string {
	if v.File == "" {
		return ""
	}
	return v.Hash
}

// Bytes is the file's byte hash.
func (v Version) Bytes() string {
	if v.File == "" {
		return v.Hash
	}
	return v.File
}

// Match is the outcome of CompareVersions.
type Match struct {
	// Same is true when the two sides measured the same cases. It is also
	// true when either side recorded no dataset hash at all (Unknown):
	// there is nothing to compare.
	Same    bool
	Unknown bool
	// ByBytes is true when the content hash of a side is unknown (a run
	// or baseline file made before content hashes), so the sides were
	// compared by the file's bytes.
	ByBytes bool
	// Before and After are the hashes the decision compared (content
	// hashes, or byte hashes when ByBytes), for messages.
	Before, After string
	// Note says how the decision was reached when it is not the plain
	// comparison of two content hashes with equal bytes ("" otherwise): the
	// same cases in files that differ in bytes, or a comparison by bytes
	// because a side predates content hashes.
	Note string
}

// CompareVersions compares the dataset versions of two sides, named for
// messages (e.g. "baseline" and "candidate"). Content hashes are compared
// when both sides have one; otherwise the byte hashes, which can tell the
// same file but not the same cases in another file, so a side that
// predates content hashes never makes different content compare equal.
func CompareVersions(beforeName string, before Version, afterName string, after Version) Match {
	if before.Hash == "" || after.Hash == "" {
		return Match{Same: true, Unknown: true}
	}
	bc, ac := before.Content(), after.Content()
	if bc != "" && ac != "" {
		m := Match{Same: bc == ac, Before: bc, After: ac}
		if m.Same && before.File != after.File {
			m.Note = fmt.Sprintf("the %s and the %s measured the same cases (dataset %s) from files that differ in bytes (line ends, a byte-order mark, CSV quoting or key order)",
				beforeName, afterName, ShortHash(bc))
		}
		return m
	}
	m := Match{ByBytes: true, Before: before.Bytes(), After: after.Bytes()}
	m.Same = m.Before == m.After
	if bc == "" && ac == "" {
		// Both predate content hashes: the comparison they always had.
		return m
	}
	var old []string
	if bc == "" {
		old = append(old, beforeName)
	}
	if ac == "" {
		old = append(old, afterName)
	}
	who := strings.Join(old, " and the ")
	if m.Same {
		m.Note = fmt.Sprintf("the %s records only its dataset file's byte hash (made before datasets were identified by content): the datasets were compared by bytes, which match; the content hash of the %s is unknown",
			who, who)
	} else {
		m.Note = fmt.Sprintf("the %s records only its dataset file's byte hash (made before datasets were identified by content), and the bytes differ: whether the cases differ is unknown (the same cases re-saved with other line ends, a byte-order mark or quoting differ in bytes); re-run or re-export the %s to compare by content",
			who, who)
	}
	return m
}

// ShortHash shortens a content hash for people: "sha256:" and the first
// 12 hex digits.
func ShortHash(h string) string {
	alg, hex, ok := strings.Cut(h, ":")
	if !ok {
		alg, hex = "", h
	}
	if len(hex) > 12 {
		hex = hex[:12]
	}
	if alg == "" {
		return hex
	}
	return alg + ":" + hex
}
