//go:build !noinstall

package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/apply"
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
	cmd.AddCommand(newProducerCmd(o))
	return cmd
}

// producerFlags are the flags of `tinyctl identity producer`.
type producerFlags struct {
	runtime  runtimeFlags // only the cluster and the runtime namespace
	name     string
	ttl      time.Duration
	output   string
	secret   string
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
	f.runtime.kube.AddFlags(fs)
	fs.StringVar(&f.runtime.namespace, "runtime-namespace", "tinyctl-system", "namespace of the runtime whose signing key mints the credentials")
	fs.StringVar(&f.name, "name", "producer", "the producer's name (a DNS label): the server shows it, and it names the inbox prefix")
	fs.DurationVar(&f.ttl, "ttl", keyring.DefaultProducerTTL, "how long the credentials work")
	fs.StringVarP(&f.output, "output", "o", "", "write the credentials file here (mode 0600) instead of to stdout")
	fs.StringVar(&f.secret, "secret", "", "store the credentials in this Secret of NAMESPACE instead")
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
		res, err := keyring.StoreProducer(ctx, a, ns, f.secret, c)
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
