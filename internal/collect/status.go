package collect

import (
	"encoding/binary"
	"encoding/json"
)

// statusProto is a google.rpc.Status {code = 1, message = 2} in protobuf:
// field 1 a varint (tag 0x08), field 2 length-delimited bytes (tag 0x12).
func statusProto(code int, msg string) []byte {
	b := []byte{0x08}
	b = binary.AppendUvarint(b, uint64(code))
	b = append(b, 0x12)
	b = binary.AppendUvarint(b, uint64(len(msg)))
	return append(b, msg...)
}

// statusJSON is a google.rpc.Status in OTLP's JSON.
func statusJSON(code int, msg string) []byte {
	b, _ := json.Marshal(struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{code, msg}) // a struct of an int and a string always marshals
	return b
}
