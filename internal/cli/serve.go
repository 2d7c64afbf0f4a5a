package cli

import (
	"context"
	"fmt"
	"os/user"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/serve"
)

type serveOptions struct {
	Addr    string
	Token   string
	Labeler string
}

func newServeCommand(g *Globals) *cobra.Command {
	o := &serveOptions{}
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve web pages over the store: runs, cases, blind labeling queues, judge calibration",
		Long: `Serve web pages over the store (--db): the runs, each run's report, a case
explorer and each case's outputs and verdicts, two runs side by side,
labeling queues where a person labels outputs blind (keys p, f, s, u), and
a judge calibrated against those labels.

It listens on 127.0.0.1:7777 (--addr). On an address that is not loopback it
refuses to start without a token (--token or ASSAY_SERVE_TOKEN); every
request must then carry it (log in at /login, or send Authorization: Bearer
TOKEN). Ctrl-C stops it.

` + exitCodesHelp,
		Args: exactArgs(0),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runServe(cmd.Context(), g, o)
		},
	}
	cmd.Flags().StringVar(&o.Addr, "addr", "127.0.0.1:7777", "address to listen on (host:port)")
	cmd.Flags().StringVar(&o.Token, "token", "", "access token every request must carry (env "+serve.TokenEnv+"); required off loopback")
	cmd.Flags().StringVar(&o.Labeler, "labeler", "", "name labels are stored under when the page gives none (default: your login name)")
	return cmd
}

func runServe(ctx context.Context, g *Globals, o *serveOptions) error {
	if o.Token == "" {
		o.Token = g.Getenv(serve.TokenEnv)
	}
	if err := serve.CheckAddr(o.Addr, o.Token); err != nil {
		return usageError{err}
	}
	if o.Labeler == "" {
		if u, err := user.Current(); err == nil {
			o.Labeler = u.Username
		}
	}
	// The store must exist (serve never creates one); one on a read-only
	// mount opens read-only: its pages show, labels cannot be saved.
	st, err := openExistingStore(ctx, g)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	defer st.Close()
	srv, err := serve.New(serve.Options{Addr: o.Addr, Token: o.Token, Store: st, Labeler: o.Labeler, Now: g.Now})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ctx.Done():
		case <-g.Interrupts:
			cancel()
		}
	}()
	return srv.ListenAndServe(ctx, func(addr string) {
		fmt.Fprintf(g.Stdout, "assay serve listening on http://%s (store %s); Ctrl-C stops it\n", addr, storeName(g.DB))
	})
}
