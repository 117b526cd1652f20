package identity

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/api/event"
)

// A namespace's tenancy is three NATS accounts, so that whatever one of
// its parties makes the server send (a reply subject is never checked
// against the sender's permissions) lands in an account that holds
// nothing of anyone else's:
//
//   - the jobs account holds the namespace's streams and consumers, with
//     the namespace's JetStream limits; only the controller reaches its
//     JetStream API, its dead-letter subjects and its max-deliveries
//     advisories (imports into the control account), and it exports each
//     consumer's next, info and ack subjects and the namespace's job
//     subjects;
//   - the tenant account holds the namespace's workers and producers, has
//     no JetStream of its own, and imports the jobs account's consumer
//     subjects (under JobsAPIPrefix) and job subjects;
//   - the publisher account holds the namespace's publishers and imports
//     from the control account only the namespace's spec keys (writes),
//     reads of its specs, its status rows, its events and every heartbeat (under
//     SpecsAPIPrefix) and the dead-letter requests of its components.
//
// The control account (tinyctl's, made by install) holds the buckets and
// the controller; no tenant credential is minted in it.

// API prefixes of the imported JetStream APIs. An account without
// JetStream answers "not enabled" on $JS.API itself, so imports are
// renamed under prefixes of their own; clients set them as their
// JetStream API prefix.
const (
	// JobsAPIPrefix is where a tenant account sees its jobs account's
	// consumer API: workers' JetStream API prefix.
	JobsAPIPrefix = "tinyctl.jobs.API"
	// SpecsAPIPrefix is where a publisher account sees the control
	// account's bucket reads: a namespace publisher's API prefix.
	SpecsAPIPrefix = "tinyctl.kv.API"
	// QueuesAPIPrefix is where a publisher account sees its jobs
	// account's stream and consumer info (read only): the queue figures
	// `tinyctl describe` shows a namespace publisher.
	QueuesAPIPrefix = "tinyctl.queues.API"
)

// NamespaceAPIPrefix is where the control account sees namespace ns's jobs
// account's JetStream API: the controller's API prefix for ns's streams.
func NamespaceAPIPrefix(ns string) string { return "tinyctl.ns." + ns + ".API" }

// NamespaceDeadLetterSubjects is where the control account reaches
// namespace ns's jobs account's dead-letter subjects
// (api/deadletter.Subjects): the controller moves dead jobs and replays
// them there.
func NamespaceDeadLetterSubjects(ns string) string { return "tinyctl.ns." + ns + ".dlq" }

// NamespaceAdvisories is where the control account receives namespace
// ns's jobs account's max-deliveries advisories
// (api/deadletter.AdvisoryPrefix), which wake the controller to move a
// dead job at once.
func NamespaceAdvisories(ns string) string { return "tinyctl.ns." + ns + ".maxdeliveries" }

// jobsAPIExports are the parts of the jobs account's JetStream API the
// controller manages streams and consumers with.
var jobsAPIExports = []string{
	"$JS.API.INFO", "$JS.API.STREAM.>",
	"$JS.API.CONSUMER.CREATE.>", "$JS.API.CONSUMER.DURABLE.CREATE.>",
	"$JS.API.CONSUMER.INFO.>", "$JS.API.CONSUMER.DELETE.>",
	"$JS.API.CONSUMER.LIST.>", "$JS.API.CONSUMER.NAMES.>",
}

// JetStreamQuota is what one namespace's jobs account may hold: bytes of
// file and memory storage (-1: unlimited), over all its streams.
type JetStreamQuota struct {
	FileBytes, MemoryBytes int64
}

// Issuer signs the accounts of namespaces with an operator signing key and
// derives their keys from it, so that the controller and `tinyctl
// identity` (holding the same key) agree on every namespace's accounts
// without storing them. It is safe for concurrent use.
type Issuer struct {
	operator nkeys.KeyPair
	root     []byte // the signing key's raw seed: the derivation key
	control  Control
}

// Control is what an Issuer must know of the control account to sign it
// again: its public key and its signing key's, and the bucket names whose
// reads it exports to publishers.
type Control struct {
	Account, SigningKey string
	Buckets             Buckets
}

// NewIssuer returns an Issuer from an operator signing key seed ("SO...").
func NewIssuer(operatorSigningSeed []byte, c Control) (*Issuer, error) {
	kp, err := nkeys.FromSeed(operatorSigningSeed)
	if err != nil {
		return nil, fmt.Errorf("identity: operator signing key: %w", err)
	}
	if pub, _ := kp.PublicKey(); !nkeys.IsValidPublicOperatorKey(pub) {
		return nil, errors.New("identity: the operator signing key is not an operator key (its seed must start with SO)")
	}
	_, raw, err := nkeys.DecodeSeed(operatorSigningSeed)
	if err != nil {
		return nil, fmt.Errorf("identity: operator signing key: %w", err)
	}
	if !nkeys.IsValidPublicAccountKey(c.Account) || !nkeys.IsValidPublicAccountKey(c.SigningKey) {
		return nil, errors.New("identity: the control account and its signing key must be account public keys (A...)")
	}
	return &Issuer{operator: kp, root: raw, control: c}, nil
}

// Namespace is one namespace's three accounts.
type Namespace struct {
	Name                       string
	Jobs, Tenant, Publisher    nkeys.KeyPair
	jobsPub, tenantPub, pubPub string
}

// JobsAccount is the public key of the account holding ns's streams:
// what KEDA queries (/jsz?acc=...).
func (n Namespace) JobsAccount() string { return n.jobsPub }

// TenantAccount is the public key of the account of ns's workers and
// producers.
func (n Namespace) TenantAccount() string { return n.tenantPub }

// PublisherAccount is the public key of the account of ns's publishers.
func (n Namespace) PublisherAccount() string { return n.pubPub }

// TenantSigner mints ns's workers and producers.
func (n Namespace) TenantSigner() *Signer { return &Signer{key: n.Tenant, account: n.tenantPub} }

// PublisherSigner mints ns's publishers.
func (n Namespace) PublisherSigner() *Signer { return &Signer{key: n.Publisher, account: n.pubPub} }

// Namespace derives ns's accounts: the same for the same signing key.
func (i *Issuer) Namespace(ns string) Namespace {
	n := Namespace{Name: ns}
	n.Jobs, n.jobsPub = i.derive("jobs", ns)
	n.Tenant, n.tenantPub = i.derive("tenant", ns)
	n.Publisher, n.pubPub = i.derive("publisher", ns)
	return n
}

// derive is an account key from HMAC-SHA256(root, role and namespace).
func (i *Issuer) derive(role, ns string) (nkeys.KeyPair, string) {
	m := hmac.New(sha256.New, i.root)
	fmt.Fprintf(m, "tinyctl account\x00%s\x00%s", role, ns)
	kp, err := nkeys.FromRawSeed(nkeys.PrefixByteAccount, m.Sum(nil))
	if err != nil {
		panic(fmt.Sprintf("identity: derive account key: %v", err)) // a 32-byte raw seed never fails
	}
	pub, _ := kp.PublicKey()
	return kp, pub
}

// JobsClaims are the claims of ns's jobs account: JetStream within quota,
// exporting the controller's API, each consumer's next (many replies),
// info and ack subjects, the job subjects patterns (what the namespace
// may use), the dead-letter subjects and the max-deliveries advisories.
// Sign them with Sign.
func (i *Issuer) JobsClaims(n Namespace, patterns []string, quota JetStreamQuota) *jwt.AccountClaims {
	c := jwt.NewAccountClaims(n.jobsPub)
	c.Name = "tinyctl-jobs-" + n.Name
	c.Limits.JetStreamLimits = jwt.JetStreamLimits{DiskStorage: quota.FileBytes, MemoryStorage: quota.MemoryBytes, Streams: -1, Consumer: -1}
	for _, s := range jobsAPIExports {
		c.Exports.Add(&jwt.Export{Name: "controller", Subject: jwt.Subject(s), Type: jwt.Service})
	}
	c.Exports.Add(&jwt.Export{Name: "fetch", Subject: "$JS.API.CONSUMER.MSG.NEXT.>", Type: jwt.Service, ResponseType: jwt.ResponseTypeStream})
	c.Exports.Add(&jwt.Export{Name: "ack", Subject: "$JS.ACK.>", Type: jwt.Service})
	for _, p := range patterns {
		c.Exports.Add(&jwt.Export{Name: "jobs", Subject: jwt.Subject(p), Type: jwt.Service})
	}
	c.Exports.Add(&jwt.Export{Name: "dead letters", Subject: deadletter.Subjects + ".>", Type: jwt.Service})
	c.Exports.Add(&jwt.Export{Name: "max deliveries", Subject: deadletter.AdvisoryPrefix + ".>", Type: jwt.Stream})
	return c
}

// TenantClaims are the claims of ns's tenant account: no JetStream,
// importing from the jobs account the consumers' next, info and ack
// subjects (next and info under JobsAPIPrefix) and the job subjects.
func (i *Issuer) TenantClaims(n Namespace, patterns []string) *jwt.AccountClaims {
	c := jwt.NewAccountClaims(n.tenantPub)
	c.Name = "tinyctl-tenant-" + n.Name
	add := func(subject, local string) {
		c.Imports.Add(&jwt.Import{Account: n.jobsPub, Subject: jwt.Subject(subject), LocalSubject: jwt.RenamingSubject(local), Type: jwt.Service})
	}
	add("$JS.API.CONSUMER.MSG.NEXT.>", JobsAPIPrefix+".CONSUMER.MSG.NEXT.>")
	add("$JS.API.CONSUMER.INFO.>", JobsAPIPrefix+".CONSUMER.INFO.>")
	add("$JS.ACK.>", "")
	for _, p := range patterns {
		add(p, "")
	}
	return c
}

// PublisherClaims are the claims of ns's publisher account: no JetStream, importing from the control account the writes of ns's spec
// keys, and under SpecsAPIPrefix the reads a publisher needs — the last
// value of each of ns's spec keys, ordered consumers filtered to ns's spec
// keys and status rows, to every heartbeat and to ns's events; and from ns's jobs
// account, under QueuesAPIPrefix, the info of its streams and consumers
// (how many jobs wait, how many are being worked on).
func (i *Issuer) PublisherClaims(n Namespace) *jwt.AccountClaims {
	c := jwt.NewAccountClaims(n.pubPub)
	c.Name = "tinyctl-publisher-" + n.Name
	b := i.control.Buckets
	add := func(subject string) {
		local := ""
		if strings.HasPrefix(subject, "$JS.API.") {
			local = SpecsAPIPrefix + strings.TrimPrefix(subject, "$JS.API")
		}
		c.Imports.Add(&jwt.Import{Account: i.control.Account, Subject: jwt.Subject(subject), LocalSubject: jwt.RenamingSubject(local), Type: jwt.Service})
	}
	specs, status, beats := "KV_"+b.Specs, "KV_"+b.Status, "KV_"+b.Heartbeats
	add("$KV." + b.Specs + "." + n.Name + ".*")
	add("$JS.API.DIRECT.GET." + specs + ".$KV." + b.Specs + "." + n.Name + ".*")
	add("$JS.API.DIRECT.GET." + status + ".$KV." + b.Status + "." + n.Name + ".>")
	add("$JS.API.DIRECT.GET." + beats + ".$KV." + b.Heartbeats + ".*")
	add("$JS.API.CONSUMER.CREATE." + specs + ".*.$KV." + b.Specs + "." + n.Name + ".>")
	add("$JS.API.CONSUMER.CREATE." + status + ".*.$KV." + b.Status + "." + n.Name + ".>")
	add("$JS.API.CONSUMER.CREATE." + beats + ".*.$KV." + b.Heartbeats + ".>")
	add("$JS.API.CONSUMER.CREATE." + event.Stream + ".*." + event.Filter(n.Name, ""))
	for _, s := range []string{specs, status, beats, event.Stream} {
		add("$JS.API.CONSUMER.MSG.NEXT." + s + ".*")
		add("$JS.API.CONSUMER.INFO." + s + ".*")
		add("$JS.API.CONSUMER.DELETE." + s + ".*")
	}
	for _, s := range queueInfo {
		c.Imports.Add(&jwt.Import{Account: n.jobsPub, Subject: jwt.Subject(s),
			LocalSubject: jwt.RenamingSubject(QueuesAPIPrefix + strings.TrimPrefix(s, "$JS.API")), Type: jwt.Service})
	}
	for _, op := range []string{"list", "replay"} {
		add(deadletter.Service + "." + op + "." + n.Name + ".*")
	}
	return c
}

// queueInfo is the part of a jobs account's JetStream API that reads its
// queues: stream info and consumer info, which change nothing.
var queueInfo = []string{"$JS.API.STREAM.INFO.*", "$JS.API.CONSUMER.INFO.*.*"}

// ControlClaims are the claims of the control account: JetStream without
// limits of its own, its signing key, the exports publisher accounts
// import, and an import of each namespace's jobs account API under
// NamespaceAPIPrefix. The same namespaces give the same claims (sorted).
func (i *Issuer) ControlClaims(namespaces []string) *jwt.AccountClaims {
	return controlClaims(i.control, i.namespacesOf(namespaces))
}

func (i *Issuer) namespacesOf(names []string) []Namespace {
	names = slices.Sorted(slices.Values(names))
	names = slices.Compact(names)
	out := make([]Namespace, 0, len(names))
	for _, ns := range names {
		out = append(out, i.Namespace(ns))
	}
	return out
}

// controlClaims are the control account's claims (unsigned) for
// namespaces: what install signs with the operator's own key (no
// namespace yet) and an Issuer with its signing key. Each namespace's
// imports (its JetStream API, dead-letter subjects and advisories) are
// named "jobs <namespace>".
func controlClaims(c Control, namespaces []Namespace) *jwt.AccountClaims {
	ac := jwt.NewAccountClaims(c.Account)
	ac.Name = "TINYCTL"
	ac.SigningKeys.Add(c.SigningKey)
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	b := c.Buckets
	ac.Exports.Add(&jwt.Export{Name: "spec writes", Subject: jwt.Subject("$KV." + b.Specs + ".>"), Type: jwt.Service})
	for _, stream := range []string{"KV_" + b.Specs, "KV_" + b.Status, "KV_" + b.Heartbeats, event.Stream} {
		ac.Exports.Add(&jwt.Export{Name: "reads", Subject: jwt.Subject("$JS.API.CONSUMER.CREATE." + stream + ".>"), Type: jwt.Service})
		ac.Exports.Add(&jwt.Export{Name: "reads", Subject: jwt.Subject("$JS.API.CONSUMER.MSG.NEXT." + stream + ".*"), Type: jwt.Service, ResponseType: jwt.ResponseTypeStream})
		ac.Exports.Add(&jwt.Export{Name: "reads", Subject: jwt.Subject("$JS.API.CONSUMER.INFO." + stream + ".*"), Type: jwt.Service})
		ac.Exports.Add(&jwt.Export{Name: "reads", Subject: jwt.Subject("$JS.API.CONSUMER.DELETE." + stream + ".*"), Type: jwt.Service})
	}
	for _, s := range []string{b.Specs, b.Status, b.Heartbeats} {
		ac.Exports.Add(&jwt.Export{Name: "reads", Subject: jwt.Subject("$JS.API.DIRECT.GET.KV_" + s + ".>"), Type: jwt.Service})
	}
	ac.Exports.Add(&jwt.Export{Name: "dead letters", Subject: deadletter.Service + ".>", Type: jwt.Service})
	for _, n := range namespaces {
		prefix := NamespaceAPIPrefix(n.Name)
		name := "jobs " + n.Name
		for _, s := range jobsAPIExports {
			ac.Imports.Add(&jwt.Import{Name: name, Account: n.jobsPub, Subject: jwt.Subject(s),
				LocalSubject: jwt.RenamingSubject(prefix + strings.TrimPrefix(s, "$JS.API")), Type: jwt.Service})
		}
		ac.Imports.Add(&jwt.Import{Name: name, Account: n.jobsPub, Subject: deadletter.Subjects + ".>",
			LocalSubject: jwt.RenamingSubject(NamespaceDeadLetterSubjects(n.Name) + ".>"), Type: jwt.Service})
		ac.Imports.Add(&jwt.Import{Name: name, Account: n.jobsPub, Subject: deadletter.AdvisoryPrefix + ".>",
			LocalSubject: jwt.RenamingSubject(NamespaceAdvisories(n.Name) + ".>"), Type: jwt.Stream})
	}
	return ac
}

// SameAccount reports whether two account claims say the same thing (they
// may differ in when they were issued, and one may be freshly built while
// the other was signed): pushing b over a would change nothing.
func SameAccount(a, b *jwt.AccountClaims) bool {
	if a == nil || b == nil || a.Subject != b.Subject || a.Name != b.Name {
		return false
	}
	x, errA := json.Marshal(signedForm(a.Account))
	y, errB := json.Marshal(signedForm(b.Account))
	return errA == nil && errB == nil && bytes.Equal(x, y)
}

// signedForm is acc as signing leaves it, without the fields signing sets:
// imports and exports sorted, no claim type or version. (Signing sorts
// them in place, so claims built again never equalled the stored ones, and
// every check pushed every account again: see
// TestAccountChecksPushNothingWhenNothingChanged.)
func signedForm(acc jwt.Account) jwt.Account {
	acc.Imports = slices.Clone(acc.Imports)
	sort.Sort(acc.Imports)
	acc.Exports = slices.Clone(acc.Exports)
	sort.Sort(acc.Exports)
	acc.Type, acc.Version = "", 0
	return acc
}

// Sign encodes claims with the operator signing key, after validating them.
func (i *Issuer) Sign(c *jwt.AccountClaims) (string, error) {
	vr := jwt.CreateValidationResults()
	c.Validate(vr)
	if errs := vr.Errors(); len(errs) > 0 {
		return "", fmt.Errorf("identity: account %s: %w", c.Name, errors.Join(errs...))
	}
	token, err := c.Encode(i.operator)
	if err != nil {
		return "", fmt.Errorf("identity: sign account %s: %w", c.Name, err)
	}
	return token, nil
}
