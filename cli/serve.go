package cli

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/minfer/minfer/internal/engine"
	"github.com/minfer/minfer/internal/planjson"
	"github.com/minfer/minfer/internal/server"
)

func init() {
	register("serve", "serve a model on an OpenAI-compatible HTTP API", runServe)
}

func runServe(e Env, args []string) error {
	fs := newFlagSet("serve", "-m FILE.gguf [--host 127.0.0.1] [--port 8080] [--api-key KEY]", e)
	lf := addLoadFlags(fs)
	host := fs.String("host", "127.0.0.1", "address to listen on; anything but loopback needs --api-key")
	port := fs.Int("port", server.DefaultPort, "TCP port (0 picks a free one)")
	key := fs.String("api-key", "", "require \"Authorization: Bearer KEY\" (default: $MINFER_API_KEY)")
	var allowHosts, origins stringList
	fs.Var(&allowHosts, "allow-host", "extra Host header name to accept besides loopback names and IP addresses (repeatable)")
	fs.Var(&origins, "cors-origin", "browser origin allowed to call the API, or * (repeatable; default: no CORS)")
	queue := fs.Int("queue", server.DefaultQueueSize, "requests that may wait behind the running one (more get 429)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *key == "" && e.LookupEnv != nil {
		*key, _ = e.LookupEnv("MINFER_API_KEY")
	}
	if *port < 0 || *port > 65535 {
		return usagef("--port %d: want 0..65535", *port)
	}
	if *queue < 1 {
		return usagef("--queue %d: want at least 1", *queue)
	}
	// Refuse an unsafe address before spending time on the load.
	if err := server.CheckBind(*host, *key); err != nil {
		return err
	}
	ctx, stop := interruptible()
	defer stop()
	s, err := lf.load(ctx, e, false)
	if err != nil {
		return err
	}
	defer s.Close()
	local, err := engine.NewLocal(s)
	if err != nil {
		return err
	}
	srv := server.New(server.Model{
		ID:     strings.TrimSuffix(filepath.Base(*lf.model), ".gguf"),
		Ctx:    s.NCtxLen(),
		Exec:   func(_ context.Context, fn func(engine.Engine)) error { fn(local); return nil },
		Report: func(engine.Engine) any { return planjson.FromSession(s) },
	}, server.Config{APIKey: *key, AllowedHosts: allowHosts, CORSOrigins: origins, QueueSize: *queue,
		Logf: func(f string, a ...any) { fmt.Fprintf(e.Stderr, f+"\n", a...) }})
	ln, err := server.Listen(*host, *port, *key)
	if err != nil {
		return err
	}
	srv.Refresh(ctx)
	fmt.Fprintf(e.Stderr, "%s · %s · context %d · template: %s\n", s.Info.Name, s.Plan(), s.NCtxLen(), local.Source)
	fmt.Fprintf(e.Stderr, "listening on %s (Ctrl-C stops)\n", BaseURL(ln.Addr()))
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	srv.Shutdown(sctx)
	fmt.Fprintln(e.Stderr, "stopped")
	return nil
}

// BaseURL is the API base a client uses for a listening address.
func BaseURL(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return "http://" + net.JoinHostPort(ta.IP.String(), fmt.Sprint(ta.Port)) + "/v1"
	}
	return "http://" + a.String() + "/v1"
}
