package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/specs"
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
// context, telling a user on a terminal what it waits for after a second.
func (o *options) connect(ctx context.Context) (*bus.Conn, error) {
	cfg, warnings, err := o.nats.Config(o.getenv)
	if err != nil {
		return nil, err
	}
	for _, w := range warnings {
		o.warn(w)
	}
	p := o.progress("connecting to NATS at " + strings.Join(cfg.URLs, ","))
	defer p.Stop()
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := bus.Connect(cctx, cfg, nil)
	if err != nil && ctx.Err() == nil && errors.Is(err, context.DeadlineExceeded) {
		return nil, fmt.Errorf("%w\nIs NATS running there? Point --nats-url (or TINYCTL_NATS_URL) at it, or start everything locally with: go run ./cmd/tinyctl dev", err)
	}
	return conn, err
}

// connectTimeout bounds the first connection of a CLI command: a server
// that is not there should say so quickly, not after --request-timeout.
const connectTimeout = 5 * time.Second

// errNoBucket means the spec bucket does not exist; readers treat it as
// empty.
var errNoBucket = errors.New("spec bucket does not exist")

// store is an open spec bucket and the connection it was opened on.
type store struct {
	*specs.Store
	conn *bus.Conn
}

// Close closes the connection.
func (s *store) Close() { s.conn.Close() }

// openStore connects and opens the spec bucket, adopting the settings of
// an existing bucket. A missing bucket is created when create is true and
// is errNoBucket otherwise, so that reading never creates one.
func (o *options) openStore(ctx context.Context, create bool) (*store, error) {
	conn, err := o.connect(ctx)
	if err != nil {
		return nil, err
	}
	mode := kv.Existing
	if create {
		mode = kv.Adopt
	}
	s, err := specs.Open(ctx, conn, specs.Config{Bucket: o.nats.Bucket}, mode)
	if err != nil {
		conn.Close()
		if errors.Is(err, bus.ErrNotFound) {
			return nil, errNoBucket
		}
		return nil, err
	}
	return &store{Store: s, conn: conn}, nil
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

// openFor opens the existing spec bucket to work on component name; a
// missing bucket means the component does not exist.
func (o *options) openFor(ctx context.Context, name string) (*store, error) {
	s, err := o.openStore(ctx, false)
	if errors.Is(err, errNoBucket) {
		return nil, o.notFound(name)
	}
	return s, err
}

// notFound is the error for a component that does not exist.
func (o *options) notFound(name string) error {
	return fmt.Errorf("component %q not found in namespace %q", name, o.namespace)
}
