package trend

import (
	"encoding/binary"
	"encoding/json"
	"testing"
	"time"
)

// FuzzCompute feeds Compute observations decoded from arbitrary bytes
// (models, times across years, strata, weights from tiny to large, any
// verdicts): it never panics, and a report it returns is valid JSON (no
// NaN or infinity), with rates inside [0, 1] and no more drops than tests.
func FuzzCompute(f *testing.F) {
	f.Add([]byte("\x00\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b"), uint8(7), uint8(2))
	f.Add(make([]byte, 240), uint8(1), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, window, weeks uint8) {
		var obs []Observation
		base := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
		for len(data) >= 6 {
			rec := data[:6]
			data = data[6:]
			hours := binary.LittleEndian.Uint16(rec[0:2])
			obs = append(obs, Observation{
				Model:   string(rune('a' + rec[2]%3)),
				Sample:  string(rune('S' + rec[3]%2)),
				Stratum: string(rune('h' + rec[3]%3)),
				Weight:  float64(rec[4]%50+1) / float64(rec[3]%4+1),
				Time:    base.Add(time.Duration(hours) * time.Hour),
				Pass:    rec[5]%3 != 0,
			})
		}
		rep, err := Compute(obs, Options{Level: 0.95, Window: int(window%30) + 1, Weeks: int(weeks % 12), MinN: 2}, nil)
		if err != nil {
			t.Fatalf("Compute: %v", err)
		}
		if _, err := json.Marshal(rep); err != nil {
			t.Fatalf("the report is not JSON: %v", err)
		}
		if rep.Drops > rep.Tests {
			t.Fatalf("%d drops of %d tests", rep.Drops, rep.Tests)
		}
		for _, s := range rep.Models {
			for _, p := range s.Points {
				if p.N > 0 && !(0 <= p.Lo && p.Lo <= p.Rate && p.Rate <= p.Hi && p.Hi <= 1) {
					t.Fatalf("%s %s: rate %g outside [%g, %g] or [0, 1]", s.Model, p.Window, p.Rate, p.Lo, p.Hi)
				}
			}
		}
	})
}
