//go:build !noinstall

package main

import (
	"context"
	"encoding/base64"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/render"
)

func newIdentityCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "identity",
		Short: "Mint NATS identities for parties outside the controller (job producers)",
		Long: `identity mints NATS credentials with the account signing key of a runtime that
tinyctl install made with jwt auth (the default). It reads Secret
tinyctl-account-signer in the runtime namespace, so it needs the Kubernetes
rights of whoever installed the runtime.`,
		Args: usageArgs(cobra.NoArgs),
	}
	cmd.AddCommand(newProducerCmd(o), newPublisherCmd(o))
	return cmd
}

// publisherFlags are the flags of `tinyctl identity publisher`.
// mintFlags are what both identity commands take: the runtime whose keys
// mint, the identity's name and lifetime, and where the credentials go.
type mintFlags struct {
	runtime runtimeFlags // only the cluster and the runtime namespace
	name    string
	ttl     time.Duration
	output  string
	secret  string
}

func (f *mintFlags) addFlags(fs *pflag.FlagSet, keysMint, name, nameHelp string, ttl time.Duration) {
	f.runtime.kube.AddFlags(fs)
	fs.StringVar(&f.runtime.namespace, "runtime-namespace", "tinyctl-system", "namespace of the runtime whose "+keysMint+" the credentials")
	fs.StringVar(&f.name, "name", name, nameHelp)
	fs.DurationVar(&f.ttl, "ttl", ttl, "how long the credentials work")
	fs.StringVarP(&f.output, "output", "o", "", "write the credentials file here (mode 0600) instead of to stdout")
	fs.StringVar(&f.secret, "secret", "", "store the credentials in this Secret of NAMESPACE instead")
}

type publisherFlags struct{ mintFlags }

func newPublisherCmd(o *options) *cobra.Command {
	f := &publisherFlags{}
	cmd := &cobra.Command{
		Use:   "publisher NAMESPACE",
		Short: "Mint credentials that may publish the components of one namespace, and nothing else",
		Long: `publisher mints credentials for a publisher of NAMESPACE: they may create,
change and delete the components of NAMESPACE, and read their history and
status, and nothing else — not another namespace's specs, not the status of
other namespaces' components, not the jobs. They live in NAMESPACE's
publisher account, so whatever a request made with them makes the broker send
lands there too. tinyctl apply, get, list, history, rollback, delete and
status read them and stay within NAMESPACE (status -w is not available).

The credentials go to stdout, to a file (-o) or into a Secret in NAMESPACE
(--secret, key nats.creds). When the broker is reachable (--nats-url or
TINYCTL_NATS_URL, through a port-forward say) the namespace's publisher
account is made there at once; otherwise the controller makes it when it
manages NAMESPACE (at start for the namespaces it is given, or with the
namespace's first component). The all-namespaces publisher is the admin
identity in Secret tinyctl-publisher of the runtime namespace.`,
		Example: `  tinyctl identity publisher media -o media-publisher.creds
  TINYCTL_NATS_CREDS=media-publisher.creds tinyctl apply -f media/
  tinyctl identity publisher media --name ci --secret tinyctl-media-publisher`,
		Args: usageArgs(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd.Context(), o, args[0]) },
	}
	f.addFlags(cmd.Flags(), "keys mint", "publisher", "the publisher's name (a DNS label): the server shows it", keyring.DefaultPublisherTTL)
	return cmd
}

func (f *publisherFlags) run(ctx context.Context, o *options, ns string) error {
	if f.output != "" && f.secret != "" {
		return usageError{fmt.Errorf("--output and --secret exclude each other")}
	}
	cfg, err := f.runtime.kube.RESTConfig(o.nats.RequestTimeout, o.errOut)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	issuer, err := keyring.Issuer(ctx, kube, f.runtime.namespace)
	if err != nil {
		return err
	}
	c, err := keyring.MintPublisher(issuer, ns, f.name, f.ttl)
	if err != nil {
		return usageError{err}
	}
	if err := f.deliver(ctx, o, cfg, ns, c.File, "nats.creds"); err != nil {
		return err
	}
	fmt.Fprintf(o.errOut, "Publisher %s/%s may publish the components of namespace %s until %s\n", ns, f.name, ns, c.Expires.Format(time.RFC3339))
	if err := pushPublisherAccount(ctx, o, kube, f.runtime.namespace, issuer, ns); err != nil {
		o.warn(fmt.Sprintf("namespace %s's publisher account was not made in the broker now (%v): the controller makes it when it manages %s; until then these credentials are refused", ns, err, ns))
	}
	return nil
}

// deliver writes creds where the flags say: a Secret (key), a file, or
// stdout.
func (f *publisherFlags) deliver(ctx context.Context, o *options, cfg *rest.Config, ns string, creds []byte, key string) error {
	switch {
	case f.secret != "":
		a, err := apply.New(cfg, render.AnnotationContentHash)
		if err != nil {
			return err
		}
		res, err := a.Apply(ctx, credentialsSecret(ns, f.secret, map[string][]byte{key: creds}))
		if err != nil {
			return fmt.Errorf("secret %s/%s: %w", ns, f.secret, err)
		}
		fmt.Fprintf(o.out, "%s\n", res)
	case f.output != "":
		if err := os.WriteFile(f.output, creds, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(o.out, "wrote %s\n", f.output)
	default:
		_, _ = o.out.Write(creds)
	}
	return nil
}

// pushPublisherAccount connects to the broker the NATS flags point at with
// the runtime's claims credentials and makes ns's publisher account exist.
func pushPublisherAccount(ctx context.Context, o *options, kube kubernetes.Interface, runtime string, issuer *identity.Issuer, ns string) error {
	creds, err := keyring.ClaimsCreds(ctx, kube, runtime)
	if err != nil {
		return err
	}
	file, err := os.CreateTemp("", "tinyctl-claims-*.creds")
	if err != nil {
		return err
	}
	defer os.Remove(file.Name())
	if _, err := file.Write(creds); err != nil {
		file.Close()
		return err
	}
	file.Close()
	cfg, err := o.nats.Config(o.getenv)
	if err != nil {
		return err
	}
	cfg.Token, cfg.User, cfg.Password, cfg.NKeySeedFile, cfg.Options = "", "", "", "", nil
	cfg.CredsFile, cfg.Name = file.Name(), "tinyctl-identity"
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	conn, err := bus.Connect(cctx, cfg, nil)
	if err != nil {
		return err
	}
	defer conn.Close()
	return keyring.PushPublisherAccount(cctx, conn.NATS(), issuer, ns)
}

// producerFlags are the flags of `tinyctl identity producer`.
type producerFlags struct {
	mintFlags
	prefixes []string
}

func newProducerCmd(o *options) *cobra.Command {
	f := &producerFlags{}
	cmd := &cobra.Command{
		Use:   "producer NAMESPACE SUBJECT...",
		Short: "Mint credentials that may publish jobs to some of a namespace's subjects, and nothing else",
		Long: `producer mints credentials for a job producer: a client that may publish to the
given job subjects of NAMESPACE and receive the stream's acknowledgements under
its own inbox prefix — nothing else (no other subject, no bucket, no JetStream
API). Each subject must be one NAMESPACE may use: under "NAMESPACE." unless the
controller was given --subject-prefixes (pass the same here).

The credentials go to stdout, to a file (-o), or into a Secret in NAMESPACE
(--secret) with keys nats.creds and inbox-prefix, for a producer that runs in
the cluster. The client must use the inbox prefix printed (nats.go:
nats.CustomInboxPrefix; the nats CLI: --inbox-prefix) to get acknowledgements.
The credentials stop working after --ttl; mint new ones before.`,
		Example: `  tinyctl identity producer media media.thumbnail.upload --name uploader -o uploader.creds
  nats --creds uploader.creds --inbox-prefix _INBOX_producer_media_uploader pub media.thumbnail.upload '{"image":"s3://b/k.png"}'
  tinyctl identity producer media 'media.thumbnail.*' --name api --secret thumbnail-producer`,
		Args: usageArgs(cobra.MinimumNArgs(2)),
		RunE: func(cmd *cobra.Command, args []string) error { return f.run(cmd.Context(), o, args[0], args[1:]) },
	}
	fs := cmd.Flags()
	f.addFlags(fs, "signing key mints", "producer", "the producer's name (a DNS label): the server shows it, and it names the inbox prefix", keyring.DefaultProducerTTL)
	fs.StringSliceVar(&f.prefixes, "subject-prefixes", nil, "namespace=pattern[,pattern...] entries, as given to tinyctl serve (default: NAMESPACE.>)")
	return cmd
}

func (f *producerFlags) run(ctx context.Context, o *options, ns string, subjects []string) error {
	if f.output != "" && f.secret != "" {
		return usageError{fmt.Errorf("--output and --secret exclude each other")}
	}
	tenancy, err := validate.ParseTenancy(f.prefixes)
	if err != nil {
		return usageError{err}
	}
	req := keyring.Producer{Namespace: ns, Name: f.name, Subjects: subjects, TTL: f.ttl, Tenancy: tenancy}
	if err := tenancy.Producer(ns, subjects); err != nil {
		return usageError{err}
	}
	cfg, err := f.runtime.kube.RESTConfig(o.nats.RequestTimeout, o.errOut)
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	c, err := keyring.MintProducer(ctx, kube, f.runtime.namespace, req)
	if err != nil {
		return err
	}
	switch {
	case f.secret != "":
		a, err := apply.New(cfg, render.AnnotationContentHash)
		if err != nil {
			return err
		}
		res, err := a.Apply(ctx, credentialsSecret(ns, f.secret, map[string][]byte{
			keyring.ProducerCredsKey: c.File, keyring.ProducerInboxKey: []byte(c.InboxPrefix)}))
		if err != nil {
			return fmt.Errorf("secret %s/%s: %w", ns, f.secret, err)
		}
		fmt.Fprintf(o.out, "%s\n", res)
	case f.output != "":
		if err := os.WriteFile(f.output, c.File, 0o600); err != nil {
			return err
		}
		fmt.Fprintf(o.out, "wrote %s\n", f.output)
	default:
		_, _ = o.out.Write(c.File)
	}
	fmt.Fprintf(o.errOut, "Producer %s/%s may publish to %v until %s; use inbox prefix %s\n",
		ns, f.name, subjects, c.Expires.Format(time.RFC3339), c.InboxPrefix)
	return nil
}

// credentialsSecret is a Secret holding minted credentials, labelled as
// tinyctl's so that a later mint may replace it (and nothing else).
func credentialsSecret(ns, name string, data map[string][]byte) *unstructured.Unstructured {
	enc := map[string]any{}
	for k, v := range data {
		enc[k] = base64.StdEncoding.EncodeToString(v)
	}
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": name, "namespace": ns,
			"labels": map[string]any{render.LabelManagedBy: apply.FieldManager}},
		"type": "Opaque",
		"data": enc,
	}}
}
