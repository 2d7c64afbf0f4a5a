package scorer

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
)

// Output formats (`output.format`).
const (
	FormatText       = "text"
	FormatRegex      = "regex"
	FormatJSON       = "json"
	FormatLastNumber = "last_number"
)

// Formats are the output formats a spec may name.
func Formats() []string { return []string{FormatText, FormatRegex, FormatJSON, FormatLastNumber} }

// lastNumberText finds numbers in prose: an optional sign and currency sign,
// digits with optional thousands commas (grouped by three), an optional
// fraction. It is read-only.
var lastNumberText = regexp.MustCompile(`[-−]?[$€£¥]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?`)

// Parser turns a model's raw text into the parsed output scorers read.
//
//   - text: the raw text, trimmed.
//   - regex: the first capture group (the whole match when the pattern has
//     no group) of the LAST match, trimmed. The pattern is compiled in
//     multi-line mode, so ^ and $ match at line boundaries (use \A and \z for
//     the ends of the text). The last match is used because answers come
//     last: a model that writes "A:" twice is graded on its final answer.
//   - json: the JSON value found by ExtractJSON (fences and prose tolerated,
//     and noted: see ParseWithNote); with output.strict, the whole output
//     must be one JSON value. An object that repeats a key fails the parse,
//     naming the key.
//   - last_number: the last number in the text, with commas, currency signs
//     and a leading + removed and trailing fractional zeros dropped
//     ("$1,234.50" → "1234.5"), as a string.
//
// A parse failure is an error, never an empty success.
type Parser struct {
	format  string
	extract *regexp.Regexp
	strict  bool
}

// NewParser builds a parser. format is one of Formats() ("" means text, or
// regex when extract is set); extract is required for regex and rejected for
// the other formats.
func NewParser(format, extract string) (*Parser, error) {
	if format == "" {
		format = FormatText
		if extract != "" {
			format = FormatRegex
		}
	}
	p := &Parser{format: format}
	switch format {
	case FormatRegex:
		if extract == "" {
			return nil, errors.New("output format regex needs extract: a pattern whose first group is the answer")
		}
		re, err := regexp.Compile("(?m)" + extract)
		if err != nil {
			return nil, fmt.Errorf("output extract is not a valid regular expression: %w", err)
		}
		p.extract = re
	case FormatText, FormatJSON, FormatLastNumber:
		if extract != "" {
			return nil, fmt.Errorf("extract applies only to format regex, not %s", format)
		}
	default:
		return nil, fmt.Errorf("unknown output format %q", format)
	}
	return p, nil
}

// NewStrictParser is NewParser for output.strict: the json format then
// accepts only an output that is one JSON value (no fence, no prose).
// strict applies only to the json format.
func NewStrictParser(format, extract string, strict bool) (*Parser, error) {
	p, err := NewParser(format, extract)
	if err != nil || !strict {
		return p, err
	}
	if p.format != FormatJSON {
		return nil, fmt.Errorf("output.strict applies only to output format json, not %s", p.format)
	}
	p.strict = true
	return p, nil
}

// Strict reports whether the parser is strict (output.strict).
func (p *Parser) Strict() bool { return p.strict }

// Format is the parser's output format.
func (p *Parser) Format() string { return p.format }

// Parse parses raw. The result is a string for text, regex and last_number
// and a JSON value (json.Number for numbers) for json.
func (p *Parser) Parse(raw string) (any, error) {
	v, _, err := p.ParseWithNote(raw)
	return v, err
}

// ParseWithNote is Parse that also says how much the json format had to
// tolerate: NoteFenced when the value was the body of a ``` fence,
// NoteProse when it was found among other text, "" when the output was one
// JSON value (and always for the other formats, and on failure).
func (p *Parser) ParseWithNote(raw string) (any, string, error) {
	if p.format == FormatJSON {
		return extractJSON(raw, p.strict)
	}
	v, err := p.parse(raw)
	return v, "", err
}

func (p *Parser) parse(raw string) (any, error) {
	switch p.format {
	case FormatRegex:
		ms := p.extract.FindAllStringSubmatch(raw, -1)
		if len(ms) == 0 {
			return nil, fmt.Errorf("extract pattern %s does not match the output", quoteRegexp(p.extract))
		}
		m := ms[len(ms)-1]
		if len(m) > 1 {
			return strings.TrimSpace(m[1]), nil
		}
		return strings.TrimSpace(m[0]), nil
	case FormatLastNumber:
		return lastNumber(raw)
	}
	return strings.TrimSpace(raw), nil
}

func quoteRegexp(re *regexp.Regexp) string {
	return "`" + strings.TrimPrefix(re.String(), "(?m)") + "`"
}

// lastNumber returns the last number in s in canonical form.
func lastNumber(s string) (string, error) {
	locs := lastNumberText.FindAllStringIndex(s, -1)
	if len(locs) == 0 {
		return "", errors.New("no number in the output")
	}
	loc := locs[len(locs)-1]
	n := s[loc[0]:loc[1]]
	neg := false
	if strings.HasPrefix(n, "-") || strings.HasPrefix(n, "−") {
		// A minus directly after a letter or digit is a hyphen or a
		// subtraction ("5-3", "COVID-19"), not a sign.
		if loc[0] == 0 || !isWordByte(s[loc[0]-1]) {
			neg = true
		}
		n = strings.TrimPrefix(strings.TrimPrefix(n, "-"), "−")
	}
	for _, c := range []string{"$", "€", "£", "¥"} {
		n = strings.TrimPrefix(n, c)
	}
	n = strings.ReplaceAll(n, ",", "")
	if strings.Contains(n, ".") {
		n = strings.TrimRight(n, "0")
		n = strings.TrimSuffix(n, ".")
	}
	n = strings.TrimLeft(n, "0")
	if n == "" || n[0] == '.' {
		n = "0" + n
	}
	if n == "0" {
		neg = false
	}
	if neg {
		n = "-" + n
	}
	return n, nil
}

func isWordByte(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b == '_'
}
