package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"
)

// unknownTarget names the cache entries stored before entries recorded
// their target; --target accepts it to select them.
const unknownTarget = "(unknown target)"

func newCacheCommand(g *Globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cache",
		Short: "Count or clear the response cache, per target",
		Long: `The response cache keeps every successful reply of an openai or anthropic
target, candidate or judge alike, keyed by everything that decides the reply
(provider, base URL, model, params, messages, epoch above 1), so a repeated
call is served without being made or paid: a cached reply costs $0 and its
price is reported as saved. 'run --no-cache' and 'rescore --no-cache' call
anew and store the fresh replies over the old ones.

  assay cache stats [--target T] [--json]   entries, bytes, oldest and newest per target
  assay cache clear [--target T]            delete entries (all, or one target's)

Entries stored before assay recorded their target show as ` + unknownTarget + `;
--target "` + unknownTarget + `" selects them. Both commands need an existing store
and never create one; clear refuses a store it may not write.`,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return usageError{errors.New("cache needs a subcommand: assay cache stats | assay cache clear")}
		},
	}
	cmd.AddCommand(newCacheStatsCommand(g), newCacheClearCommand(g))
	return cmd
}

type cacheOptions struct {
	// Target restricts the command to one target's entries when set.
	Target string
	JSON   bool
}

func (o *cacheOptions) AddFlags(cmd *cobra.Command, json bool) {
	f := cmd.Flags()
	f.StringVar(&o.Target, "target", "", `only this target's entries ("`+unknownTarget+`" for entries stored before targets were recorded)`)
	if json {
		f.BoolVar(&o.JSON, "json", false, "print JSON")
	}
}

// filter is the store's (target, only) for --target.
func (o *cacheOptions) filter(cmd *cobra.Command) (string, bool) {
	if !cmd.Flags().Changed("target") {
		return "", false
	}
	if o.Target == unknownTarget {
		return "", true
	}
	return o.Target, true
}

func newCacheStatsCommand(g *Globals) *cobra.Command {
	o := &cacheOptions{}
	cmd := &cobra.Command{
		Use:   "stats",
		Short: "Count the response cache's entries per target",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, only := o.filter(cmd)
			return runCacheStats(cmd.Context(), g, o, target, only)
		},
	}
	o.AddFlags(cmd, true)
	return cmd
}

func newCacheClearCommand(g *Globals) *cobra.Command {
	o := &cacheOptions{}
	cmd := &cobra.Command{
		Use:   "clear",
		Short: "Delete the response cache's entries (all, or one target's)",
		Args:  exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, only := o.filter(cmd)
			return runCacheClear(cmd.Context(), g, target, only, o.JSON)
		},
	}
	o.AddFlags(cmd, true)
	return cmd
}

// cacheStatsJSON is one target's line of `assay cache stats --json`.
type cacheStatsJSON struct {
	Target  string     `json:"target"` // unknownTarget for entries without one
	Entries int64      `json:"entries"`
	Bytes   int64      `json:"bytes"`
	Oldest  *time.Time `json:"oldest,omitempty"`
	Newest  *time.Time `json:"newest,omitempty"`
}

func runCacheStats(ctx context.Context, g *Globals, o *cacheOptions, target string, only bool) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("cache stats: %w", err)
	}
	defer st.Close()
	stats, err := st.CacheStats(ctx, target, only)
	if err != nil {
		return fmt.Errorf("cache stats: %w", err)
	}
	if o.JSON {
		out := make([]cacheStatsJSON, 0, len(stats))
		for _, s := range stats {
			j := cacheStatsJSON{Target: s.Target, Entries: s.Entries, Bytes: s.Bytes}
			if s.Target == "" {
				j.Target = unknownTarget
			}
			if !s.Oldest.IsZero() {
				j.Oldest, j.Newest = &s.Oldest, &s.Newest
			}
			out = append(out, j)
		}
		return writeJSONOut(g.Stdout, struct {
			Targets []cacheStatsJSON `json:"targets"`
		}{out})
	}
	if len(stats) == 0 {
		if only {
			fmt.Fprintf(g.Stdout, "the response cache holds no entry of target %s\n", cacheTargetName(target))
		} else {
			fmt.Fprintln(g.Stdout, "the response cache is empty")
		}
		return nil
	}
	tw := tabwriter.NewWriter(g.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tentries\tbytes\toldest\tnewest")
	var total, bytes int64
	for _, s := range stats {
		total += s.Entries
		bytes += s.Bytes
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\t%s\n", cacheTargetName(s.Target), s.Entries, s.Bytes, cacheTime(s.Oldest), cacheTime(s.Newest))
	}
	if len(stats) > 1 {
		fmt.Fprintf(tw, "total\t%d\t%d\t\t\n", total, bytes)
	}
	return tw.Flush()
}

func runCacheClear(ctx context.Context, g *Globals, target string, only, asJSON bool) error {
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("cache clear: %w", err)
	}
	defer st.Close()
	if ro, ok := st.(interface{ ReadOnly() bool }); ok && ro.ReadOnly() {
		return fmt.Errorf("cache clear: the store %s is read-only here (a read-only mount, a CI cache or another user's file); nothing was removed: clear it where it is writable", storeName(g.DB))
	}
	n, err := st.CacheClear(ctx, target, only)
	if err != nil {
		return fmt.Errorf("cache clear: %w", err)
	}
	what := "the response cache"
	if only {
		what = "target " + cacheTargetName(target) + "'s cache"
	}
	if asJSON {
		out := struct {
			Removed int64  `json:"removed"`
			Target  string `json:"target,omitempty"` // only this target's entries were removed
		}{Removed: n}
		if only {
			out.Target = cacheTargetName(target)
		}
		return writeJSONOut(g.Stdout, out)
	}
	fmt.Fprintf(g.Stdout, "removed %s from %s\n", entries(n), what)
	return nil
}

// cacheTargetName shows the target of entries stored before targets were
// recorded as unknownTarget.
func cacheTargetName(t string) string {
	if t == "" {
		return unknownTarget
	}
	return shownTarget(t)
}

func cacheTime(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

func entries(n int64) string {
	if n == 1 {
		return "1 entry"
	}
	return fmt.Sprintf("%d entries", n)
}

// shownTarget is a target name as read from the store, quoted when it holds
// anything but printable non-space characters (the store is outside input).
func shownTarget(t string) string {
	for _, r := range t {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return strconv.Quote(t)
		}
	}
	return t
}
