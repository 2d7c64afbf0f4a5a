// Package archtest keeps ARCHITECTURE.md's package table true: its test
// reads the table's "must not import" column and checks every package of the
// module against what it really imports (`go list -deps`), transitively;
// and it finds every read of the wall clock outside the few files that must
// wait on real time, since a recorded time comes from the one clock cli
// passes in. It holds no code the product uses and imports nothing of assay.
package archtest
