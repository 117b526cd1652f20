package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/cli"
)

// options are the settings and streams every command shares. newRootCmd
// makes one and hands it to each command's constructor.
type options struct {
	out, errOut io.Writer
	getenv      func(string) string
	now         func() time.Time

	nats      cli.NATSFlags
	namespace string
}

// addGlobalFlags registers the connection flags and -n on the root
// command, for every command.
func (o *options) addGlobalFlags(fs *pflag.FlagSet) {
	o.nats.AddFlags(fs)
	fs.StringVarP(&o.namespace, "namespace", "n", "default", "namespace of the components")
	cli.BindEnv(fs, "namespace", "TINYCTL_NAMESPACE")
}

// applyEnv fills the flags the user did not give from their TINYCTL_*
// environment variables. It runs before every command.
func (o *options) applyEnv(cmd *cobra.Command, _ []string) error {
	if err := cli.ApplyEnv(cmd.Flags(), o.getenv); err != nil {
		return usageError{err}
	}
	return nil
}

// withTimeout bounds ctx by --request-timeout (0: no bound).
func (o *options) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if o.nats.RequestTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, o.nats.RequestTimeout)
}

// style colours output on a terminal only.
func (o *options) style() cli.Style { return cli.StyleFor(o.out, o.getenv) }

// warn prints a warning on stderr.
func (o *options) warn(msg string) {
	fmt.Fprintln(o.errOut, cli.StyleFor(o.errOut, o.getenv).Yellow("Warning:"), msg)
}

// progress starts telling a user on a terminal, after a second, what a
// slow operation waits for. Call Stop when it ends.
func (o *options) progress(msg string) *cli.Progress {
	return cli.StartProgress(o.errOut, cli.IsTerminal(o.errOut), msg)
}

// connect opens a NATS connection from the flags, environment and NATS
// context, telling a user on a terminal what it waits for after a second,
// and returns the settings it used.
func (o *options) connect(ctx context.Context) (*bus.Conn, bus.Config, error) {
	cfg, err := o.nats.Config(o.getenv)
	if err != nil {
		return nil, cfg, err
	}
	p := o.progress("connecting to NATS at " + strings.Join(cfg.URLs, ","))
	defer p.Stop()
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := bus.Connect(cctx, cfg, nil)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, cfg, fmt.Errorf("%w\nIs NATS running there? Point --nats-url (or TINYCTL_NATS_URL) at it, or start everything locally with: go run ./cmd/tinyctl dev", err)
	}
	return conn, cfg, err
}

// connectTimeout bounds the first connection of a CLI command: a server
// that is not there should say so quickly, not after --request-timeout.
const connectTimeout = 5 * time.Second

// session is a client of the buckets on its own connection.
type session struct {
	*client.Client
	conn *bus.Conn
	// domain is the JetStream domain the buckets are in ("": the server's).
	domain string
}

// Close closes the connection.
func (s *session) Close() { s.conn.Close() }

// open connects and opens the spec, status and heartbeat buckets with the
// public client, adopting the settings of buckets that exist. Missing
// buckets are created when create is true (publishing, watching) and read
// as empty otherwise, so that reading never creates one.
func (o *options) open(ctx context.Context, statusBucket string, create bool) (*session, error) {
	scope, err := o.credentialsScope()
	if err != nil {
		return nil, err
	}
	conn, cfg, err := o.connect(ctx)
	if err != nil {
		return nil, err
	}
	c, err := client.New(ctx, conn.NATS(), client.Config{
		SpecBucket: o.nats.Bucket, StatusBucket: statusBucket, Create: create, Now: o.now, Namespace: scope,
		JetStreamDomain: cfg.JetStreamDomain,
	})
	if err != nil {
		conn.Close()
		return nil, err
	}
	return &session{Client: c, conn: conn, domain: cfg.JetStreamDomain}, nil
}

// credentialsScope is the namespace the credentials file (--nats-creds)
// is scoped to: a namespace publisher's (`tinyctl identity publisher`).
// "" for every other kind of credentials, or none.
func (o *options) credentialsScope() (string, error) {
	cfg, err := o.nats.Config(o.getenv)
	if err != nil || cfg.CredsFile == "" {
		return "", err
	}
	b, err := os.ReadFile(cfg.CredsFile)
	if err != nil {
		return "", err
	}
	return identity.ScopeOf(b)
}

// key returns the spec-bucket key of component name in the selected
// namespace, or a usage error when either is not a valid name.
func (o *options) key(name string) (string, error) {
	key := api.Key(o.namespace, name)
	if _, _, err := api.ParseKey(key); err != nil {
		return "", usageError{fmt.Errorf("component %q in namespace %q: not a valid name: %w", name, o.namespace, err)}
	}
	return key, nil
}

// notFound is the error for a component that does not exist.
func (o *options) notFound(name string) error {
	return fmt.Errorf("component %q not found in namespace %q", name, o.namespace)
}

// withComponent checks name, opens a session bounded by the request
// timeout, and calls fn with the component's key; the session is closed
// after.
func (o *options) withComponent(ctx context.Context, name string, fn func(ctx context.Context, key string, s *session) error) error {
	key, err := o.key(name)
	if err != nil {
		return err
	}
	ctx, cancel := o.withTimeout(ctx)
	defer cancel()
	s, err := o.open(ctx, "", false)
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(ctx, key, s)
}
