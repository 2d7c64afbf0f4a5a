// Package collect owns `assay collect`: an OTLP/HTTP receiver (/v1/traces,
// protobuf or JSON, gzip) whose GenAI spans are mapped by package traces and
// stored whole or not at all. It binds and authenticates like `assay serve`.
package collect
