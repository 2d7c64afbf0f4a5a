package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for a dataset's health (`assay validate --deep`, see
// docs/dataset-health.md). Case IDs, values and texts come from the
// dataset: ShowData cuts and quotes them.

// DatasetHealthText writes a dataset's health (validate --deep) as text:
// limit is the spec's dataset.limit (the whole file is checked), strict
// whether warnings fail validation. Dataset text is shown by ShowData.
func DatasetHealthText(w io.Writer, h *dataset.Health, limit int, strict bool) error {
	var b strings.Builder
	healthText(&b, h, limit, strict)
	_, err := io.WriteString(w, b.String())
	return err
}

func healthText(w io.Writer, h *dataset.Health, limit int, strict bool) {
	source := "the fields the prompt uses"
	if h.TextSource != "prompt" {
		source = "every string field but the id and expected ones"
	}
	fmt.Fprintf(w, "dataset health: %s, %d cases", ShowData(h.Path, 80), h.Cases)
	if h.Skipped > 0 {
		fmt.Fprintf(w, " (%d rows skipped: see the problems)", h.Skipped)
	}
	fmt.Fprintln(w)
	if limit > 0 {
		fmt.Fprintf(w, "  the whole file is checked; dataset.limit (%d) applies to runs only\n", limit)
	}
	fmt.Fprintf(w, "  input compared for duplicates: %s (%s)\n", strings.Join(healthAll(h.TextFields), ", "), source)

	// Expected values.
	e := &h.Expected
	if e.Field == "" {
		fmt.Fprintln(w, "  expected values: none (dataset.expected is not set)")
	} else {
		usable := 0
		if h.Labels != nil {
			usable = h.Labels.Values
		}
		fmt.Fprintf(w, "  expected values (%s): %d of %d cases have one", ShowData(e.Field, 40), usable, h.Cases)
		if e.ShouldRefuseExempt > 0 {
			fmt.Fprintf(w, "; %d should-refuse case(s) need none", e.ShouldRefuseExempt)
		}
		fmt.Fprintln(w)
		if e.Missing > 0 {
			fmt.Fprintf(w, "    PROBLEM: %d case(s) have no expected value: %s\n", e.Missing, healthCases(e.MissingList, e.Missing))
		}
		if e.Unextractable > 0 {
			fmt.Fprintf(w, "    PROBLEM: %d case(s) where expected_extract does not match: %s\n", e.Unextractable, healthCases(e.UnextractableList, e.Unextractable))
		}
		if l := h.Labels; l != nil && l.Values > 0 {
			kind := ""
			if l.Numeric {
				kind = ", all numeric (the top values say little; a dominant one is what a constant answer scores)"
			}
			fmt.Fprintf(w, "    %d distinct value(s)%s\n", l.Distinct, kind)
			healthCounts(w, "      ", l.Top)
			if l.Other > 0 {
				fmt.Fprintf(w, "      … %d more case(s) with other values\n", l.Other)
			}
			healthFieldLabels(w, l)
		}
	}

	// Duplicates.
	ex := &h.Exact
	if ex.Groups == 0 {
		fmt.Fprintln(w, "  exact duplicates: none")
	} else {
		fmt.Fprintf(w, "  WARNING: %d group(s) of exact duplicates (%d cases; %d beyond the first of each)\n", ex.Groups, ex.Cases, ex.Extra)
		for _, gr := range ex.List {
			fmt.Fprintf(w, "    %s: %s\n", healthCases(gr.Cases, len(gr.Cases)), ShowData(gr.Text, 80))
			if len(gr.Expected) > 1 {
				fmt.Fprintf(w, "      expect different answers: %s\n", strings.Join(healthAll(gr.Expected), ", "))
			}
		}
		if n := ex.Groups - len(ex.List); n > 0 {
			fmt.Fprintf(w, "    … %d more group(s) (see --format json)\n", n)
		}
	}
	nd := &h.Near
	if nd.Pairs == 0 {
		fmt.Fprintf(w, "  near duplicates (token overlap ≥ %s): none\n", units.Plain(nd.Threshold))
	} else {
		fmt.Fprintf(w, "  WARNING: %d near-duplicate pair(s) (token overlap ≥ %s) among %d cases\n", nd.Pairs, units.Plain(nd.Threshold), nd.Cases)
		for i, p := range nd.List {
			if i == 10 {
				fmt.Fprintf(w, "    … %d more pair(s) (see --format json)\n", nd.Pairs-10)
				break
			}
			fmt.Fprintf(w, "    %s ~ %s  %s  only in the first: %s; only in the second: %s\n",
				healthCase(p.A), healthCase(p.B), units.Ratio(p.Similarity), healthWords(p.OnlyA), healthWords(p.OnlyB))
		}
	}

	// Tags.
	for _, tg := range h.Tags {
		fmt.Fprintf(w, "  tag %s: %d value(s)", ShowData(tg.Key, 40), len(tg.Values))
		if tg.Missing > 0 {
			fmt.Fprintf(w, "; %d case(s) have none: %s", tg.Missing, healthCases(tg.MissingList, tg.Missing))
		}
		fmt.Fprintln(w)
		healthCounts(w, "    ", tg.Values)
	}
	if len(h.MissingBuckets) > 0 {
		fmt.Fprintf(w, "  no case is in bucket(s) %s: nothing shows how a target does there\n", strings.Join(h.MissingBuckets, ", "))
	}
	if ws := h.Warnings(); len(ws) > 0 && !strict {
		fmt.Fprintf(w, "  %d warning(s); --strict makes them fail validation\n", len(ws))
	}
}

// writeFieldLabels prints the distribution of each field of object-valued
// expected values: the top values of a text field, the range and median of
// a numeric one (its values say little one by one).
func healthFieldLabels(w io.Writer, l *dataset.Labels) {
	if len(l.Fields) == 0 {
		return
	}
	fmt.Fprintf(w, "    by field (%d of the values are objects):\n", l.Objects)
	for _, f := range l.Fields {
		missing := ""
		if f.Missing > 0 {
			missing = fmt.Sprintf("; missing or null in %d", f.Missing)
		}
		if f.Numeric {
			fmt.Fprintf(w, "      %s: numeric in %d case(s)%s: min %s, median %s, max %s\n", ShowData(f.Field, 40), f.Values, missing,
				units.Given(*f.Min), units.Given(*f.Median), units.Given(*f.Max))
			continue
		}
		fmt.Fprintf(w, "      %s: %d distinct value(s) in %d case(s)%s\n", ShowData(f.Field, 40), f.Distinct, f.Values, missing)
		healthCounts(w, "        ", f.Top)
		if f.Other > 0 {
			fmt.Fprintf(w, "        … %d more case(s) with other values\n", f.Other)
		}
	}
	if l.FieldsOmitted > 0 {
		fmt.Fprintf(w, "      … %d more field(s) not summarised (at most %d are)\n", l.FieldsOmitted, dataset.MaxLabelFields)
	}
}

// writeCounts prints values with counts, shares and, for small tag values,
// how wide their intervals will be.
func healthCounts(w io.Writer, indent string, vs []dataset.ValueCount) {
	width := 0
	for _, v := range vs {
		width = max(width, utf8.RuneCountInString(ShowData(v.Value, 40)))
	}
	for _, v := range vs {
		s := ShowData(v.Value, 40)
		fmt.Fprintf(w, "%s%s%s %6d  %6s", indent, s, strings.Repeat(" ", width-utf8.RuneCountInString(s)), v.Count, units.Pct(v.Share))
		if v.Small {
			fmt.Fprintf(w, "  small: a rate on %d case(s) has a 95%% interval up to ±%s points", v.Count, units.PtsWhole(v.HalfWidth))
		}
		fmt.Fprintln(w)
	}
}

func healthCase(c dataset.CaseRef) string {
	if c.ID == strconv.Itoa(c.Line) {
		return "line " + c.ID
	}
	return fmt.Sprintf("%s (line %d)", healthID(c.ID), c.Line)
}

// caseList names up to 8 cases and counts the rest.
func healthCases(cs []dataset.CaseRef, total int) string {
	const show = 8
	var parts []string
	for i, c := range cs {
		if i == show {
			break
		}
		parts = append(parts, healthCase(c))
	}
	s := strings.Join(parts, ", ")
	if more := total - len(parts); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func healthWords(ws []string) string {
	if len(ws) == 0 {
		return "—"
	}
	return strings.Join(healthAll(ws), " ")
}

func healthID(id string) string { return ShowData(id, 40) }

func healthAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = ShowData(s, 40)
	}
	return out
}

// ShowData renders dataset text for a terminal: cut to max characters, and
// quoted (escapes shown, not obeyed) when it is empty, has spaces at its
// ends or holds anything unprintable.
func ShowData(s string, max int) string {
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	plain := s != "" && strings.TrimSpace(s) == s
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}
