package mock

import (
	"net/http"
	"strconv"
)

// wire is the API dialect a request speaks; it decides the shape of every
// body, errors included.
type wire int

const (
	wireOpenAI wire = iota
	wireAnthropic
)

// failure is one kind of error answer.
type failure int

const (
	failInvalid failure = iota
	failAuth
	failNotFound
	failMethod
	failTooLarge
	failRate
	failServer
	failOverloaded
	failUnavailable // the capacity model's queue is full
)

func (f failure) status() int {
	switch f {
	case failAuth:
		return http.StatusUnauthorized
	case failNotFound:
		return http.StatusNotFound
	case failMethod:
		return http.StatusMethodNotAllowed
	case failTooLarge:
		return http.StatusRequestEntityTooLarge
	case failRate:
		return http.StatusTooManyRequests
	case failServer:
		return http.StatusInternalServerError
	case failOverloaded:
		return 529
	case failUnavailable:
		return http.StatusServiceUnavailable
	}
	return http.StatusBadRequest
}

// openAIType returns the error.type and error.code the OpenAI API uses.
func (f failure) openAIType() (typ, code string) {
	switch f {
	case failAuth:
		return "invalid_request_error", "invalid_api_key"
	case failNotFound:
		return "invalid_request_error", "unknown_url"
	case failMethod:
		return "invalid_request_error", "method_not_allowed"
	case failTooLarge:
		return "invalid_request_error", "request_too_large"
	case failRate:
		return "requests", "rate_limit_exceeded"
	case failServer:
		return "server_error", ""
	case failOverloaded:
		return "overloaded_error", ""
	case failUnavailable:
		return "server_error", "service_unavailable"
	}
	return "invalid_request_error", ""
}

// anthropicType returns the error.type the Anthropic API uses.
func (f failure) anthropicType() string {
	switch f {
	case failAuth:
		return "authentication_error"
	case failNotFound:
		return "not_found_error"
	case failTooLarge:
		return "request_too_large"
	case failRate:
		return "rate_limit_error"
	case failServer:
		return "api_error"
	case failOverloaded, failUnavailable:
		return "overloaded_error"
	}
	return "invalid_request_error"
}

// defaultMessage is the message of an error the mock injects.
func (f failure) defaultMessage(w wire) string {
	switch f {
	case failAuth:
		if w == wireAnthropic {
			return "invalid x-api-key"
		}
		return "Incorrect API key provided."
	case failRate:
		return "Rate limit reached for requests (mock server). Please try again later."
	case failServer:
		if w == wireAnthropic {
			return "Internal server error"
		}
		return "The server had an error while processing your request. Sorry about that!"
	case failOverloaded:
		return "Overloaded"
	case failUnavailable:
		return "The server is at capacity: every slot is busy and its queue is full (mock server). Please try again later."
	}
	return "Invalid request"
}

// appendError appends the error body of the wire format:
//
//	OpenAI:    {"error":{"message":…,"type":…,"param":…,"code":…}}
//	Anthropic: {"type":"error","error":{"type":…,"message":…},"request_id":…}
func appendError(b []byte, w wire, f failure, msg, param string, reqID uint64) []byte {
	if msg == "" {
		msg = f.defaultMessage(w)
	}
	if w == wireAnthropic {
		b = append(b, `{"type":"error","error":{"type":`...)
		b = appendString(b, f.anthropicType())
		b = append(b, `,"message":`...)
		b = appendString(b, msg)
		b = append(b, `},"request_id":"req_mock_`...)
		b = strconv.AppendUint(b, reqID, 10)
		return append(b, "\"}"...)
	}
	typ, code := f.openAIType()
	b = append(b, `{"error":{"message":`...)
	b = appendString(b, msg)
	b = append(b, `,"type":`...)
	b = appendString(b, typ)
	b = append(b, `,"param":`...)
	b = appendNullable(b, param)
	b = append(b, `,"code":`...)
	b = appendNullable(b, code)
	return append(b, "}}"...)
}

func appendNullable(b []byte, s string) []byte {
	if s == "" {
		return append(b, "null"...)
	}
	return appendString(b, s)
}
