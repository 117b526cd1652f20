package keyring

import (
	"context"
	"fmt"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/identity"
)

// Keys of a producer's credentials Secret (Store).
const (
	ProducerCredsKey = "nats.creds"
	ProducerInboxKey = "inbox-prefix"
)

// DefaultProducerTTL is how long producer credentials live unless told.
const DefaultProducerTTL = 30 * 24 * time.Hour

// Producer asks for the credentials of a job producer: a client that
// publishes jobs to some of a namespace's job subjects and nothing else.
type Producer struct {
	// Namespace is the namespace whose jobs it produces.
	Namespace string
	// Name tells producers apart (the server shows it); a DNS label.
	Name string
	// Subjects are the job subjects it may publish to, each within what
	// Tenancy lets Namespace use.
	Subjects []string
	// TTL is how long the credentials live; 0 means DefaultProducerTTL.
	TTL time.Duration
	// Tenancy says which subjects each namespace may use (the
	// controller's --subject-prefixes); the zero value is "ns.>".
	Tenancy validate.Tenancy
}

// ProducerCreds are a producer's credentials: the .creds file and the
// inbox prefix its client must use (publish acknowledgements arrive there).
type ProducerCreds struct {
	identity.Creds
	InboxPrefix string
}

// MintProducer mints a producer's credentials in the tenant account of
// its namespace, with the keys of the runtime in namespace runtime (Secret
// SignerSecret). It fails on a request whose subjects are not the
// namespace's to use, and when the runtime's broker does not use jwt auth.
func MintProducer(ctx context.Context, kube kubernetes.Interface, runtime string, req Producer) (ProducerCreds, error) {
	if errs := validation.IsDNS1123Label(req.Namespace); len(errs) > 0 {
		return ProducerCreds{}, fmt.Errorf("producer namespace %q: %s", req.Namespace, errs[0])
	}
	if errs := validation.IsDNS1123Label(req.Name); len(errs) > 0 {
		return ProducerCreds{}, fmt.Errorf("producer name %q: %s", req.Name, errs[0])
	}
	if err := req.Tenancy.Producer(req.Namespace, req.Subjects); err != nil {
		return ProducerCreds{}, err
	}
	signer, err := TenantSigner(ctx, kube, runtime, req.Namespace)
	if err != nil {
		return ProducerCreds{}, err
	}
	ttl := req.TTL
	if ttl <= 0 {
		ttl = DefaultProducerTTL
	}
	inbox := identity.ProducerInbox(req.Namespace, req.Name)
	c, err := signer.Mint(identity.Name("producer", req.Namespace, req.Name), identity.Producer(req.Subjects, inbox), time.Now(), ttl)
	return ProducerCreds{Creds: c, InboxPrefix: inbox}, err
}

// Issuer is the issuer of namespaces' accounts of the runtime in
// namespace runtime, from Secret SignerSecret: what its controller signs
// and mints with. It fails when the Secret cannot be read or does not
// exist (the broker uses no jwt auth), or lacks a key.
func Issuer(ctx context.Context, kube kubernetes.Interface, runtime string) (*identity.Issuer, error) {
	s, err := kube.CoreV1().Secrets(runtime).Get(ctx, SignerSecret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return nil, fmt.Errorf("secret %s/%s does not exist: identities are minted only when the broker uses jwt auth (tinyctl install --broker-auth jwt, the default)", runtime, SignerSecret)
	case err != nil:
		return nil, fmt.Errorf("secret %s/%s: read: %w", runtime, SignerSecret, err)
	}
	for _, k := range []string{SignerSeedKey, SignerAccountKey, SignerOperatorKey} {
		if len(s.Data[k]) == 0 {
			return nil, fmt.Errorf("secret %s/%s lacks key %s: run tinyctl install again to complete it", runtime, SignerSecret, k)
		}
	}
	control, err := identity.NewSigner(s.Data[SignerSeedKey], string(s.Data[SignerAccountKey]))
	if err != nil {
		return nil, err
	}
	signing, _ := control.PublicKey()
	return identity.NewIssuer(s.Data[SignerOperatorKey], identity.Control{Account: control.Account(), SigningKey: signing, Buckets: identity.DefaultBuckets()})
}

// TenantSigner mints the workers and producers of namespace ns of the
// runtime in namespace runtime: users of ns's tenant account.
func TenantSigner(ctx context.Context, kube kubernetes.Interface, runtime, ns string) (*identity.Signer, error) {
	i, err := Issuer(ctx, kube, runtime)
	if err != nil {
		return nil, err
	}
	return i.Namespace(ns).TenantSigner(), nil
}

// ClaimsCreds are the system-account credentials that may push account
// JWTs into the runtime's broker (Secret SignerSecret, key
// SignerClaimsKey).
func ClaimsCreds(ctx context.Context, kube kubernetes.Interface, runtime string) ([]byte, error) {
	s, err := kube.CoreV1().Secrets(runtime).Get(ctx, SignerSecret, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("secret %s/%s: read: %w", runtime, SignerSecret, err)
	}
	if len(s.Data[SignerClaimsKey]) == 0 {
		return nil, fmt.Errorf("secret %s/%s lacks key %s: run tinyctl install again to complete it", runtime, SignerSecret, SignerClaimsKey)
	}
	return s.Data[SignerClaimsKey], nil
}
