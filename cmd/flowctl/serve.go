package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/flowctl/flowctl/flow"
	"github.com/flowctl/flowctl/internal/serve"
	"github.com/flowctl/flowctl/internal/webui"
	"github.com/spf13/cobra"
)

// serveOptions are the flags of `flowctl serve`.
type serveOptions struct {
	addr      string
	tokenFile string
	open      bool
	readOnly  bool
}

// defaultServeAddr is where serve listens by default: this machine only.
const defaultServeAddr = "127.0.0.1:7070"

// serveShutdown is how long a stopping server waits for its requests.
const serveShutdown = 5 * time.Second

func (a *app) serveCommand() *cobra.Command {
	var o serveOptions
	cmd := &cobra.Command{
		Use:   "serve [--addr 127.0.0.1:7070] [--token-file F] [--open] [--read-only]",
		Short: "Serve the web dashboard and the HTTP/JSON API (with live events) until interrupted",
		Long: "serve answers the HTTP/JSON API under /api/v1 (the same JSON as -o json; see /api/v1/openapi.json),\n" +
			"a server-sent event stream of new events at /api/v1/events, and the web pages, until interrupted\n" +
			"(exit 0). Every request opens the flow file and closes it before answering, so the CLI keeps working.\n" +
			"It listens on this machine only by default; another address needs --token-file. Writes need the\n" +
			"token: 'Authorization: Bearer TOKEN', or the browser's cookie from the one-time URL printed at start.\n" +
			"Without --token-file a token is made and printed. Writes are recorded as --actor.",
		Example: "  flowctl serve\n  flowctl serve --addr 127.0.0.1:0 --read-only\n  flowctl serve --addr 0.0.0.0:7070 --token-file ~/.flowctl-token --open",
		Args:    cobra.NoArgs,
	}
	fs := cmd.Flags()
	fs.StringVar(&o.addr, "addr", defaultServeAddr, "host:port to listen on (port 0: any free one); not loopback needs --token-file")
	fs.StringVar(&o.tokenFile, "token-file", "", "file holding the token that authorises writes (default: a new token, printed)")
	fs.BoolVar(&o.open, "open", false, "open the dashboard in the browser (xdg-open), signed in")
	fs.BoolVar(&o.readOnly, "read-only", false, "refuse every write (403)")
	cmd.RunE = a.action(func(cmd *cobra.Command, _ []string) error { return a.runServe(cmd.Context(), &o) })
	return cmd
}

// serveToken reads the token from --token-file, or makes one when the
// address is loopback. Another address without a file is a usage error.
func (a *app) serveToken(o *serveOptions) (token string, made bool, err error) {
	if o.tokenFile == "" {
		if !serve.IsLoopback(o.addr) {
			return "", false, usageError{fmt.Errorf("--addr %s is not a loopback address: give --token-file, so that only holders of the token can use it", o.addr)}
		}
		return serve.NewToken(), true, nil
	}
	b, err := readLimited(a.abs(o.tokenFile))
	if err != nil {
		return "", false, err
	}
	token = strings.TrimSpace(string(b))
	if len(token) < 16 || strings.ContainsAny(token, " \t\r\n") {
		return "", false, usageError{fmt.Errorf("--token-file %s: the token must be one word of at least 16 characters", o.tokenFile)}
	}
	return token, false, nil
}

func (a *app) runServe(ctx context.Context, o *serveOptions) error {
	if _, _, err := net.SplitHostPort(o.addr); err != nil {
		return usageError{fmt.Errorf("--addr %q: give host:port (127.0.0.1:7070)", o.addr)}
	}
	token, made, err := a.serveToken(o)
	if err != nil {
		return err
	}
	cfg, err := a.serveConfig(o, token)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return err
	}
	host, _, _ := net.SplitHostPort(o.addr)
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	cfg.Addr = net.JoinHostPort(host, port)
	h, err := serve.New(cfg)
	if err != nil {
		ln.Close()
		return usageError{err}
	}
	a.serveBanner(cfg, made, o)
	return serveUntil(ctx, ln, h)
}

// serveConfig checks the file and the project, and fills the server's
// config but its address.
func (a *app) serveConfig(o *serveOptions, token string) (serve.Config, error) {
	path, err := a.dbPath()
	if err != nil {
		return serve.Config{}, err
	}
	eng, err := a.open(true)
	if err != nil {
		return serve.Config{}, err
	}
	project, perr := a.currentProject(eng)
	if err := eng.Close(); err != nil {
		return serve.Config{}, err
	}
	if a.g.project != "" && perr != nil {
		return serve.Config{}, perr
	}
	opts := flow.Options{LockTimeout: a.g.lockTimeout, Session: a.g.session, Warn: a.warn}
	if opts.Hooks, err = a.hooks(); err != nil {
		return serve.Config{}, err
	}
	return serve.Config{
		Path: path, Options: opts,
		Token: token, ReadOnly: o.readOnly, Project: project, Actor: a.actor(),
		OneTime:  serve.NewToken(),
		Classify: serveClassify,
		UI:       webui.New(webui.Config{Path: path, Options: opts, ReadOnly: o.readOnly}),
	}, nil
}

// serveClassify is the CLI's error table for the API: the code, the
// message and the hint that `-o json` would print.
func serveClassify(err error) (flow.Code, string, string) {
	code := codeOf(err)
	return code, message(err), hintOf(err, code)
}

// serveBanner prints where the server is, the one-time URL that signs a
// browser in, and a token it made.
func (a *app) serveBanner(cfg serve.Config, made bool, o *serveOptions) {
	base := "http://" + cfg.Addr
	login := base + serve.AuthPath + "?t=" + cfg.OneTime
	mode := ""
	if cfg.ReadOnly {
		mode = " (read-only)"
	}
	w := a.stdout
	fmt.Fprintf(w, "flowctl serve: %s/%s\n", base, mode)
	fmt.Fprintf(w, "sign a browser in (once): %s\n", login)
	if made {
		fmt.Fprintf(w, "token (Authorization: Bearer): %s\n", cfg.Token)
	}
	if f, ok := w.(interface{ Flush() error }); ok {
		f.Flush()
	}
	if o.open {
		openBrowser(login)
	}
}

// openBrowser runs the platform's opener on url when there is one, and
// quietly does nothing else.
func openBrowser(url string) {
	name := "xdg-open"
	switch runtime.GOOS {
	case "darwin":
		name = "open"
	case "windows":
		return
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return
	}
	c := exec.Command(path, url)
	c.Stdout, c.Stderr = io.Discard, io.Discard
	if c.Start() == nil {
		go c.Wait()
	}
}

// serveUntil serves h on ln until ctx ends (SIGINT, SIGTERM), then shuts
// down: the event streams end with ctx, other requests get serveShutdown
// to finish.
func serveUntil(ctx context.Context, ln net.Listener, h http.Handler) error {
	reqCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second,
		BaseContext: func(net.Listener) context.Context { return reqCtx }}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	cancel() // the streams end
	sctx, stop := context.WithTimeout(context.Background(), serveShutdown)
	defer stop()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
