package identity

import (
	"fmt"
	"strings"

	"github.com/nats-io/jwt/v2"

	"github.com/tinyctl/tinyctl/api/deadletter"
	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/api/queue"
)

// Bucket names the roles need (the defaults of the bus packages).
type Buckets struct {
	Specs, Status, Heartbeats, Leases string
}

// DefaultBuckets are tinyctl's bucket names.
func DefaultBuckets() Buckets {
	return Buckets{Specs: "tinyctl-components", Status: "tinyctl-status",
		Heartbeats: "tinyctl-heartbeats", Leases: "tinyctl-leases"}
}

// Worker may fetch from, ack on and read its component's consumer on
// stream, read the stream, receive under its own inbox prefix (which its
// client must use) and publish the subjects its component declares.
// Nothing else: not another consumer, not the buckets, not the JetStream
// API that creates or deletes. apiPrefix is its JetStream API prefix:
// "$JS.API" in a single account, JobsAPIPrefix in a tenant account.
func Worker(apiPrefix, stream, consumer, inbox string, publish []string) Permissions {
	pub := []string{
		apiPrefix + ".CONSUMER.MSG.NEXT." + stream + "." + consumer,
		apiPrefix + ".CONSUMER.INFO." + stream + "." + consumer,
		"$JS.ACK." + stream + "." + consumer + ".>",
	}
	if apiPrefix == DefaultAPIPrefix {
		pub = append(pub, apiPrefix+".STREAM.INFO."+stream)
	}
	return Permissions{Publish: append(pub, publish...), Subscribe: []string{inbox + ".>"}, InboxPrefix: inbox}
}

// DefaultAPIPrefix is JetStream's own API prefix.
const DefaultAPIPrefix = "$JS.API"

// NamespacePublisher may write the spec keys of namespace ns and read, as
// a publisher account imports them under SpecsAPIPrefix, ns's specs, its
// status rows and the heartbeats, and under QueuesAPIPrefix the info of
// ns's streams and consumers. It lives in ns's publisher account, which
// imports nothing else.
func NamespacePublisher(b Buckets, ns string) Permissions {
	return Permissions{Publish: []string{"$KV." + b.Specs + "." + ns + ".*", SpecsAPIPrefix + ".>", QueuesAPIPrefix + ".>",
		deadletter.Service + ".*." + ns + ".*"}, Subscribe: []string{"_INBOX.>"},
		Tags: []string{scopeTag + ns}}
}

// scopeTag starts the user JWT tag that names the namespace a namespace
// publisher's credentials are scoped to.
const scopeTag = "tinyctl.io/namespace:"

// ScopeOf reads a credentials file (a user JWT and its seed) and returns
// the namespace it is scoped to, or "" for credentials that are not a
// namespace publisher's. It fails when the file holds no user JWT.
func ScopeOf(creds []byte) (string, error) {
	token, err := jwt.ParseDecoratedJWT(creds)
	if err != nil {
		return "", fmt.Errorf("identity: credentials: %w", err)
	}
	uc, err := jwt.DecodeUserClaims(token)
	if err != nil {
		return "", fmt.Errorf("identity: credentials: %w", err)
	}
	for _, t := range uc.Tags {
		if ns, ok := strings.CutPrefix(t, scopeTag); ok {
			return ns, nil
		}
	}
	return "", nil
}

// Claims may push account JWTs into the broker's resolver and read them
// back, and ask whether an account got JetStream: the system account's
// claims-update, claims-lookup and account-info requests, nothing else.
// The controller holds it to create namespaces' accounts.
func Claims() Permissions {
	return Permissions{Publish: []string{claimsUpdateSubject, "$SYS.REQ.ACCOUNT.*.CLAIMS.LOOKUP", "$SYS.REQ.ACCOUNT.*.INFO"},
		Subscribe: []string{"_INBOX.>"}}
}

// Producer may publish jobs to subjects (a namespace's job subjects) and
// receive under its own inbox prefix, which its client must use: the
// stream's publish acknowledgements arrive there. Nothing else: not the
// JetStream API, not the buckets, not another namespace's subjects.
func Producer(subjects []string, inbox string) Permissions {
	return Permissions{Publish: subjects, Subscribe: []string{inbox + ".>"}, InboxPrefix: inbox}
}

// ProducerInbox is the inbox prefix of producer name of namespace ns.
func ProducerInbox(ns, name string) string { return "_INBOX_producer_" + ns + "_" + name }

// Publisher may write the spec bucket (put, delete, purge, history,
// watch) and read the status and heartbeat buckets, for `tinyctl apply`,
// `status` and raw KV puts, read the events stream (`tinyctl events`)
// through ordered consumers, and read the info of every stream and
// consumer (in one account, or each namespace's as the control account
// imports them under NamespaceAPIPrefix): the queue figures of
// `tinyctl describe`, also as a fleet hub asks each member's controller
// for them (api/queue). It may not create or delete buckets or streams,
// fetch jobs or publish job subjects.
func Publisher(b Buckets) Permissions {
	pub := []string{"$KV." + b.Specs + ".>", "$JS.API.INFO", deadletter.Service + ".>", queue.Service + ".>"}
	for _, s := range queueInfo {
		pub = append(pub, s, NamespaceAPIPrefix("*")+strings.TrimPrefix(s, "$JS.API"))
	}
	for _, bucket := range []string{b.Specs, b.Status, b.Heartbeats} {
		pub = append(pub, readBucket(bucket)...)
	}
	pub = append(pub, readEvents()...)
	return Permissions{Publish: pub, Subscribe: []string{"_INBOX.>"}}
}

// readEvents is what reading the events stream through an ordered
// consumer publishes to: the consumer's creation (any filter), its
// next-message requests, info and delete.
func readEvents() []string {
	s := "$JS.API.CONSUMER.%s." + event.Stream
	return []string{fmt.Sprintf(s, "CREATE") + ".>", fmt.Sprintf(s, "MSG.NEXT") + ".*",
		fmt.Sprintf(s, "INFO") + ".*", fmt.Sprintf(s, "DELETE") + ".*"}
}

// readBucket is what reading a KV bucket publishes to: its info, direct
// gets, and the ordered consumers that watch, list and history use.
func readBucket(bucket string) []string {
	s := "KV_" + bucket
	return []string{
		"$JS.API.STREAM.INFO." + s,
		"$JS.API.STREAM.MSG.GET." + s,
		"$JS.API.DIRECT.GET." + s, "$JS.API.DIRECT.GET." + s + ".>",
		"$JS.API.CONSUMER.CREATE." + s, "$JS.API.CONSUMER.CREATE." + s + ".>",
		"$JS.API.CONSUMER.DELETE." + s + ".>",
		"$JS.API.CONSUMER.INFO." + s + ".>",
	}
}

// Controller may use the JetStream API (streams, consumers, its buckets)
// and, as the control account imports them, the JetStream APIs of the
// namespaces' jobs accounts (NamespaceAPIPrefix), and write the status,
// heartbeat and lease buckets, but not the spec bucket, which only
// publishers write, nor delete, purge or edit it. With hubDomain (a fleet
// cluster's controller) the spec bucket is a mirror of the hub's, which
// the controller may delete and purge to follow the hub (rebuilt when the
// hub's bucket was created again, a key purged there purged here), and it
// may read the hub's spec bucket and heartbeat bucket (stream info and
// reads, nothing else there: the heartbeats tell it whether another
// cluster already uses its name).
func Controller(b Buckets, hubDomain string) Permissions {
	specs := "KV_" + b.Specs
	p := Permissions{
		Publish: []string{"$JS.API.>", "$KV." + b.Status + ".>", "$KV." + b.Heartbeats + ".>", "$KV." + b.Leases + ".>", "tinyctl.ns.*.API.>",
			deadletter.Subjects + ".>", NamespaceDeadLetterSubjects("*") + ".>", event.Subjects + ".>"},
		Subscribe: []string{"_INBOX.>", deadletter.AdvisoryPrefix + ".>", NamespaceAdvisories("*") + ".>", deadletter.Service + ".>", queue.Service + ".>"},
		Respond:   true,
		DenyPublish: []string{"$JS.API.STREAM.DELETE." + specs, "$JS.API.STREAM.PURGE." + specs,
			"$JS.API.STREAM.UPDATE." + specs, "$JS.API.STREAM.MSG.DELETE." + specs},
	}
	if hubDomain != "" {
		hub := "$JS." + hubDomain + ".API."
		for _, s := range []string{specs, "KV_" + b.Heartbeats} {
			p.Publish = append(p.Publish, hub+"STREAM.INFO."+s, hub+"STREAM.MSG.GET."+s, hub+"DIRECT.GET."+s, hub+"DIRECT.GET."+s+".>")
		}
		p.DenyPublish = []string{"$JS.API.STREAM.UPDATE." + specs, "$JS.API.STREAM.MSG.DELETE." + specs}
	}
	return p
}

// Name is a user's name for a role and a subject: "worker.media.resizer",
// say. Names are only labels (the server shows them); they grant nothing.
func Name(role string, parts ...string) string {
	return strings.Join(append([]string{role}, parts...), ".")
}
