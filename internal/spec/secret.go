package spec

import (
	"regexp"
	"strconv"
	"strings"
	"unicode"
)

// secretPrefixes start the keys of common services. A value that starts
// with one (and is long enough to be a key) is a pasted secret, whatever
// else it looks like: sk_live_… and ghp_… are valid variable names too.
var secretPrefixes = []string{
	"sk-", "sk_", "pk_live_", "rk_live_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_",
	"glpat-", "xoxb-", "xoxp-", "xoxa-", "xoxs-", "xapp-", "AIza", "hf_", "gsk_", "r8_", "pplx-", "eyJ",
}

var awsKeyID = regexp.MustCompile(`^(AKIA|ASIA)[A-Z0-9]{16}$`)

// LooksLikeSecret reports whether s, written where the spec wants the NAME
// of an environment variable (api_key_env, env:), looks like a secret
// value pasted there instead: NAME=value with such a value, a key with a known
// service prefix (sk-, ghp_, AKIA…), or a long token that mixes upper and
// lower case letters with digits, or is long hexadecimal. Variable names
// (OPENAI_API_KEY, MY_SERVICE_TOKEN_2) do not look like secrets.
func LooksLikeSecret(s string) bool {
	if name, value, ok := strings.Cut(s, "="); ok {
		return LooksLikeSecret(value) || LooksLikeSecret(name)
	}
	if awsKeyID.MatchString(s) {
		return true
	}
	for _, p := range secretPrefixes {
		if strings.HasPrefix(s, p) && len(s) >= len(p)+8 {
			return true
		}
	}
	if strings.ContainsAny(s, " \t\n") {
		return false
	}
	var upper, lower, digit, hex int
	for _, r := range s {
		switch {
		case unicode.IsUpper(r):
			upper++
		case unicode.IsLower(r):
			lower++
		case unicode.IsDigit(r):
			digit++
		}
		if strings.ContainsRune("0123456789abcdefABCDEF", r) {
			hex++
		}
	}
	n := len([]rune(s))
	if n >= 32 && hex == n && digit > 0 {
		return true
	}
	return n >= 20 && upper > 0 && lower > 0 && digit > 0
}

// MaskSecret shows a value that looks like a secret without revealing it:
// the variable name of a NAME=value entry, a known service prefix, and the
// length, e.g. "OPENAI_API_KEY=sk-proj-… (56 characters)".
func MaskSecret(s string) string {
	name, value, ok := strings.Cut(s, "=")
	if !ok || LooksLikeSecret(name) {
		name, value = "", s
	} else {
		name += "="
	}
	shown := ""
	for _, p := range secretPrefixes {
		if strings.HasPrefix(value, p) && len(p) > len(shown) {
			shown = p
		}
	}
	if awsKeyID.MatchString(value) {
		shown = value[:4]
	}
	// sk-proj-, sk-ant-: the second part of the prefix is public too.
	if shown == "sk-" {
		for _, p := range []string{"sk-proj-", "sk-ant-", "sk-or-", "sk-svcacct-"} {
			if strings.HasPrefix(value, p) {
				shown = p
			}
		}
	}
	return name + shown + "… (" + strconv.Itoa(len([]rune(value))) + " characters)"
}

// quoteName quotes a key or name for a message, masked when it looks like
// a pasted secret.
func quoteName(s string) string {
	if LooksLikeSecret(s) {
		return MaskSecret(s)
	}
	return strconv.Quote(s)
}

// KeyValueFlaw says what is wrong with an API key read from the
// environment that an HTTP header cannot carry as it is: surrounding
// whitespace (a trailing newline from `echo` or a file is the usual one) or
// control characters. It returns "" for a clean key. The message never
// holds the key; pair it with MaskSecret to show which value it was.
func KeyValueFlaw(key string) string {
	switch {
	case strings.HasSuffix(key, "\r\n") || strings.HasSuffix(key, "\n"):
		return "ends with a newline"
	case strings.TrimRightFunc(key, unicode.IsSpace) != key:
		return "ends with whitespace"
	case strings.TrimLeftFunc(key, unicode.IsSpace) != key:
		return "starts with whitespace"
	}
	for i, r := range key {
		if unicode.IsControl(r) {
			return "holds a control character (" + strconv.QuoteRune(r) + ") at byte " + strconv.Itoa(i)
		}
	}
	return ""
}
