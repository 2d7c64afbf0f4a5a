package load

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseSLO reads an SLO written as `p95=2s,ttft95=500ms,errors=1%` (any of
// the three, in any order). Every problem is reported at once.
func ParseSLO(s string) (SLO, error) {
	var slo SLO
	var problems []string
	seen := map[string]bool{}
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		key, val, ok := strings.Cut(part, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok || val == "" {
			problems = append(problems, fmt.Sprintf("%q is not KEY=VALUE (keys: p95, ttft95, errors)", part))
			continue
		}
		if seen[key] {
			problems = append(problems, fmt.Sprintf("%s is given twice", key))
			continue
		}
		seen[key] = true
		var err error
		switch key {
		case "p95":
			slo.P95, err = ParseLatency(val)
		case "ttft95":
			slo.TTFT95, err = ParseLatency(val)
		case "errors":
			slo.Errors, err = ParsePercent(val)
			slo.ErrorsSet = err == nil
		default:
			err = fmt.Errorf("unknown objective (keys: p95, ttft95, errors)")
		}
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s=%s: %v", key, val, err))
		}
	}
	if len(problems) > 0 {
		return SLO{}, fmt.Errorf("slo %q: %s", s, strings.Join(problems, "; "))
	}
	return slo, nil
}

// ParseLatency reads a positive duration such as 2s or 500ms.
func ParseLatency(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 2s or 500ms")
	}
	return d, nil
}

// ParsePercent reads a share written as a percentage ("1%", "0.5%") and
// returns it as a fraction in [0, 1].
func ParsePercent(s string) (float64, error) {
	s = strings.TrimSpace(s)
	num, ok := strings.CutSuffix(s, "%")
	if !ok {
		return 0, fmt.Errorf("want a percentage such as 1%% or 0.5%%")
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || !(v >= 0 && v <= 100) {
		return 0, fmt.Errorf("want a percentage between 0%% and 100%%")
	}
	return v / 100, nil
}

// String writes the SLO as ParseSLO reads it ("" when none is set).
func (s SLO) String() string {
	var parts []string
	if s.P95 > 0 {
		parts = append(parts, "p95="+s.P95.String())
	}
	if s.TTFT95 > 0 {
		parts = append(parts, "ttft95="+s.TTFT95.String())
	}
	if s.ErrorsSet {
		parts = append(parts, "errors="+strconv.FormatFloat(s.Errors*100, 'g', -1, 64)+"%")
	}
	return strings.Join(parts, ",")
}

// sloJSON is how an SLO is written in JSON: milliseconds as every other
// duration of a load report, the error rate as a fraction, and the SLO as
// ParseSLO reads it.
type sloJSON struct {
	P95MS    *float64 `json:"p95_ms,omitempty"`
	TTFT95MS *float64 `json:"ttft95_ms,omitempty"`
	Errors   *float64 `json:"errors,omitempty"`
	Text     string   `json:"text"`
}

func (s SLO) MarshalJSON() ([]byte, error) {
	var j sloJSON
	if s.P95 > 0 {
		v := ms(s.P95)
		j.P95MS = &v
	}
	if s.TTFT95 > 0 {
		v := ms(s.TTFT95)
		j.TTFT95MS = &v
	}
	if s.ErrorsSet {
		v := s.Errors
		j.Errors = &v
	}
	j.Text = s.String()
	return json.Marshal(j)
}

// UnmarshalJSON reads what MarshalJSON wrote (from its text).
func (s *SLO) UnmarshalJSON(b []byte) error {
	var j sloJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	v, err := ParseSLO(j.Text)
	if err != nil {
		return err
	}
	*s = v
	return nil
}
