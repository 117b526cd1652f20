package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/api/queue"
	"github.com/tinyctl/tinyctl/identity"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision/keyring"
	"github.com/tinyctl/tinyctl/render"
)

// TestTenantsCannotReachEachOtherOrTheControlPlane attacks an installed
// runtime (the broker a nats-server process from the chart's
// configuration, the controller with the Deployment's arguments) with the
// credentials tinyctl hands one namespace's parties: its worker and its
// producer. NATS never checks a request's reply subject against the
// requester's permissions, so each of them sends every request it may
// make with the reply subject set to every target that matters — each
// JetStream API verb on the other namespace's stream and on every bucket,
// a put to every bucket's keys (the lease, a status row, another
// namespace's spec), the other namespace's job subject, the system
// account's services. The server answers every request (its JetStream
// API counters show it, and a reply to the attacker's own inbox arrives),
// and nothing outside the attacker's namespace changes.
func TestTenantsCannotReachEachOtherOrTheControlPlane(t *testing.T) {
	if diff := attack(t, true); diff != "" {
		t.Errorf("what one namespace's parties made the server send reached outside it:\n%s", diff)
	}
}

// TestInOneAccountATenantReachesEverything is the same attack on the same
// install with the controller told to keep every party in the control
// account (as tinyctl did before namespaces had accounts): the attack
// then deletes or overwrites what belongs to others, so the test above
// would fail without them.
func TestInOneAccountATenantReachesEverything(t *testing.T) {
	diff := attack(t, false, "--nats-operator-signing-key-file=", "--nats-claims-creds=")
	if diff == "" {
		t.Fatal("in one account the attack changed nothing: the attack does not reach what it aims at")
	}
	t.Logf("in one account the attack changed:\n%s", diff)
}

// attack runs the attack and returns what changed outside the attacker's
// namespace ("" for nothing). namespaceAccounts says whether the
// controller runs with them (the install's default); serveArgs are added
// to the controller's.
func attack(t *testing.T, namespaceAccounts bool, serveArgs ...string) string {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	in := installWithJWT(t, a+","+b, serveArgs...)
	in.oneAccount = !namespaceAccounts
	pub := in.publisher
	pub.must("apply", "-f", pub.file("a.yaml", componentYAML(a, "resizer", a+".resize.>", "")))
	pub.must("apply", "-f", pub.file("b.yaml", componentYAML(b, "billing", b+".bill.>", "")))
	wa := in.startWorker(a, "resizer")
	in.startWorker(b, "billing") // its Secret, Deployment and stream exist
	apiPrefix, jobsA := identity.DefaultAPIPrefix, string(in.secrets[keyring.SignerSecret][keyring.SignerAccountKey])
	streamA, consumerA := render.StreamName(a, "resizer"), render.ConsumerName(a, "resizer")
	streamB, consumerB := render.StreamName(b, "billing"), render.ConsumerName(b, "billing")
	if namespaceAccounts {
		apiPrefix = identity.JobsAPIPrefix
		if p := wa.env["TINYCTL_JS_API_PREFIX"]; p != apiPrefix {
			t.Fatalf("worker's JetStream API prefix %q, want %s: the worker is not in a tenant account", p, apiPrefix)
		}
		issuer, err := keyring.Issuer(context.Background(), kube.Clientset(t), in.ns)
		testenv.Must(t, err)
		jobsA = issuer.Namespace(a).JobsAccount()
		if got := in.jsz(t, issuer.Namespace(b).JobsAccount()).streams(); !slices.Contains(got, streamB) || slices.Contains(got, streamA) {
			t.Fatalf("namespace %s's jobs account holds streams %v, want %s only", b, got, streamB)
		}
	}

	// What must survive: a job queued for b, and the control plane's buckets.
	producerB := in.producer(b, b+".bill.>")
	pjs, err := jetstream.New(producerB)
	testenv.Must(t, err)
	ctx := testenv.Ctx(t, time.Minute)
	_, err = pjs.Publish(ctx, b+".bill.one", []byte("b's job"))
	testenv.Must(t, err)
	obs := observeControl(t, in, namespaceAccounts)
	before := obs.snapshot(t, b, streamB, consumerB)
	if before.checked() < 8 {
		t.Fatalf("the snapshot compares %d things, want at least 8", before.checked())
	}

	// The attackers: namespace a's worker and a producer of a's jobs.
	producerA := in.producer(a, a+".resize.>")
	targets := attackTargets(b, streamB, consumerB)
	next := apiPrefix + ".CONSUMER.MSG.NEXT." + streamA + "." + consumerA
	info := apiPrefix + ".CONSUMER.INFO." + streamA + "." + consumerA
	vehicles := []struct {
		name    string
		nc      *nats.Conn
		subject string
		body    []byte
	}{
		{"worker's fetch", wa.nc, next, []byte(`{"batch":1,"no_wait":true}`)},
		{"worker's consumer info", wa.nc, info, nil},
		{"producer's job (its publish acknowledgement)", producerA, a + ".resize.job", []byte("{}")},
	}
	apiBefore := in.jsz(t, jobsA).API.Total
	jobsBefore := obs.messages(t, a, streamA)
	sent, refused := 0, 0
	for _, v := range vehicles {
		for _, target := range targets {
			testenv.Must(t, v.nc.PublishRequest(v.subject, target, v.body))
			sent++
			if strings.HasPrefix(target, "$JS.ACK.") {
				refused++ // the server refuses acks as reply subjects ("Publish with Reply")
			}
		}
		// Positive control: the same request answered to an inbox the
		// attacker reads arrives, so the server answers such requests.
		if _, err := v.nc.Request(v.subject, v.body, 5*time.Second); err != nil {
			t.Fatalf("%s: the control request got no answer: %v", v.name, err)
		}
	}
	// Every attack request reached a's jobs account and was handled: each
	// consumer info counts as an API request, each job was stored.
	perVehicle := uint64(len(targets) - refused/len(vehicles))
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := in.jsz(t, jobsA).API.Total - apiBefore; n < perVehicle {
			return fmt.Errorf("a's jobs account handled %d API requests, want at least the %d consumer infos", n, perVehicle)
		}
		if n := obs.messages(t, a, streamA) - jobsBefore; n != perVehicle+1 {
			return fmt.Errorf("a's stream holds %d new jobs, want the %d sent with a reply subject and the control's", n, perVehicle)
		}
		return nil
	})
	t.Logf("%d attack requests (%d vehicles × %d targets; %d refused by the server as acks) answered", sent, len(vehicles), len(targets), refused)
	return before.diff(obs.snapshot(t, b, streamB, consumerB))
}

// attackTargets are the reply subjects an attacker names: every place a
// message the server sends could do harm if it landed there as a request.
func attackTargets(ns, stream, consumer string) []string {
	var out []string
	buckets := []string{"tinyctl-components", "tinyctl-status", "tinyctl-heartbeats", "tinyctl-leases"}
	streams := []string{stream}
	for _, b := range buckets {
		streams = append(streams, "KV_"+b)
	}
	for _, s := range streams {
		for _, verb := range []string{"STREAM.DELETE.", "STREAM.PURGE.", "STREAM.UPDATE.", "STREAM.CREATE.", "STREAM.MSG.DELETE.",
			"STREAM.INFO.", "STREAM.MSG.GET.", "DIRECT.GET.", "STREAM.SNAPSHOT.", "STREAM.RESTORE.", "STREAM.LEADER.STEPDOWN."} {
			out = append(out, "$JS.API."+verb+s)
		}
		for _, verb := range []string{"CONSUMER.DELETE.", "CONSUMER.CREATE.", "CONSUMER.DURABLE.CREATE.", "CONSUMER.MSG.NEXT.", "CONSUMER.INFO."} {
			out = append(out, "$JS.API."+verb+s+"."+consumer)
		}
		out = append(out, identity.NamespaceAPIPrefix(ns)+".STREAM.DELETE."+s, identity.NamespaceAPIPrefix(ns)+".STREAM.PURGE."+s)
	}
	out = append(out,
		"$JS.API.ACCOUNT.PURGE.x", "$JS.API.STREAM.CREATE.evil",
		"$KV.tinyctl-components."+ns+".billing", "$KV.tinyctl-status."+ns+".billing."+render.DefaultClusterName,
		"$KV.tinyctl-leases.controller."+render.DefaultClusterName, "$KV.tinyctl-heartbeats."+render.DefaultClusterName,
		ns+".bill.forged", "$JS.ACK."+stream+"."+consumer+".1.1.1.0.0", queue.Subject(render.DefaultClusterName, ns, "billing"),
		"$SYS.REQ.CLAIMS.UPDATE", "$SYS.REQ.SERVER.PING", "$SYS.REQ.ACCOUNT.PING.CONNZ",
	)
	return out
}

// controlObserver reads the control plane and namespaces' streams (through
// the control account's imports) with a user of the control account that
// may read everything: a test's identity, not one tinyctl hands out.
type controlObserver struct {
	nc *nats.Conn
	js jetstream.JetStream
	// namespaceAccounts: namespaces' streams are reached through the
	// control account's imports, else they are its own.
	namespaceAccounts bool
}

func observeControl(t *testing.T, in *installed, namespaceAccounts bool) *controlObserver {
	t.Helper()
	s := in.secrets[keyring.SignerSecret]
	signer, err := identity.NewSigner(s[keyring.SignerSeedKey], string(s[keyring.SignerAccountKey]))
	testenv.Must(t, err)
	c, err := signer.Mint("test-observer", identity.Permissions{Publish: []string{">"}, Subscribe: []string{">"}}, time.Now(), time.Hour)
	testenv.Must(t, err)
	nc, err := nats.Connect(in.url, nats.UserCredentials(writeFile(t, "observer.creds", c.File)))
	testenv.Must(t, err)
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	return &controlObserver{nc: nc, js: js, namespaceAccounts: namespaceAccounts}
}

// nsJS is the JetStream API holding namespace ns's streams.
func (o *controlObserver) nsJS(t *testing.T, ns string) jetstream.JetStream {
	t.Helper()
	if !o.namespaceAccounts {
		return o.js
	}
	js, err := jetstream.NewWithAPIPrefix(o.nc, identity.NamespaceAPIPrefix(ns))
	testenv.Must(t, err)
	return js
}

// state is what an attack must not change, by name.
type state map[string]string

func (s state) checked() int { return len(s) }

func (s state) diff(o state) string {
	var out string
	for k, v := range s {
		if o[k] != v {
			out += fmt.Sprintf("  %s: %s → %s\n", k, v, o[k])
		}
	}
	return out
}

// snapshot records namespace ns's stream and consumer (in its jobs
// account) and every bucket: each stream's message count and last
// sequence, and the keys an attacker aims at.
func (o *controlObserver) snapshot(t *testing.T, ns, stream, consumer string) state {
	t.Helper()
	ctx := testenv.Ctx(t, 10*time.Second)
	st := state{}
	nsJS := o.nsJS(t, ns)
	record := func(js jetstream.JetStream, name string) {
		s, err := js.Stream(ctx, name)
		if err != nil {
			st["stream "+name] = err.Error()
			return
		}
		i := s.CachedInfo()
		st["stream "+name] = fmt.Sprintf("%d messages, last %d, created %s", i.State.Msgs, i.State.LastSeq, i.Created)
	}
	record(nsJS, stream)
	if c, err := nsJS.Consumer(ctx, stream, consumer); err == nil {
		st["consumer "+consumer] = fmt.Sprintf("pending %d, delivered %d", c.CachedInfo().NumPending, c.CachedInfo().Delivered.Stream)
	} else {
		st["consumer "+consumer] = err.Error()
	}
	// The spec bucket takes no write during the attack: its whole state
	// must hold. The others are written all the time (status rows,
	// heartbeats, lease renewals): their creation time (a purge or a
	// delete shows) and the values an attacker aims at must hold.
	record(o.js, "KV_tinyctl-components")
	for _, b := range []string{"tinyctl-components", "tinyctl-status", "tinyctl-heartbeats", "tinyctl-leases"} {
		if s, err := o.js.Stream(ctx, "KV_"+b); err == nil {
			st["bucket "+b] = "created " + s.CachedInfo().Created.String()
		} else {
			st["bucket "+b] = err.Error()
		}
	}
	value := func(bucket, key string, decode func([]byte) string) {
		kv, err := o.js.KeyValue(ctx, bucket)
		if err != nil {
			st[bucket+" "+key] = err.Error()
			return
		}
		if e, err := kv.Get(ctx, key); err == nil {
			st[bucket+" "+key] = decode(e.Value())
		} else {
			st[bucket+" "+key] = err.Error()
		}
	}
	raw := func(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }
	value("tinyctl-components", ns+".billing", raw)
	value("tinyctl-status", ns+".billing."+render.DefaultClusterName, func(b []byte) string {
		var s api.Status
		if err := json.Unmarshal(b, &s); err != nil {
			return err.Error()
		}
		return fmt.Sprintf("revision %d ready %v", s.ObservedRevision, s.IsTrue(api.ConditionApplied))
	})
	value("tinyctl-leases", "controller."+render.DefaultClusterName, func(b []byte) string {
		var l struct {
			Holder string `json:"holder"`
		}
		if err := json.Unmarshal(b, &l); err != nil {
			return err.Error()
		}
		return "held by " + l.Holder
	})
	value("tinyctl-heartbeats", render.DefaultClusterName, func(b []byte) string { return fmt.Sprintf("decodes: %v", json.Valid(b)) })
	return st
}

// messages is how many messages namespace ns's stream holds.
func (o *controlObserver) messages(t *testing.T, ns, stream string) uint64 {
	t.Helper()
	s, err := o.nsJS(t, ns).Stream(testenv.Ctx(t, 10*time.Second), stream)
	testenv.Must(t, err)
	return s.CachedInfo().State.Msgs
}

// jszAccount is the part of /jsz?acc= a test reads.
type jszAccount struct {
	API struct {
		Total uint64 `json:"total"`
	} `json:"api"`
	StreamDetail []struct {
		Name string `json:"name"`
	} `json:"stream_detail"`
}

func (j jszAccount) streams() []string {
	var out []string
	for _, s := range j.StreamDetail {
		out = append(out, s.Name)
	}
	return out
}

// jsz reads the broker's JetStream report of account (what KEDA reads).
func (in *installed) jsz(t *testing.T, account string) jszAccount {
	t.Helper()
	resp, err := http.Get(in.monitor + "/jsz?acc=" + account + "&streams=true")
	testenv.Must(t, err)
	defer resp.Body.Close()
	var out struct {
		AccountDetails []jszAccount `json:"account_details"`
	}
	testenv.Must(t, json.NewDecoder(resp.Body).Decode(&out))
	if len(out.AccountDetails) != 1 {
		t.Fatalf("/jsz?acc=%s: %d accounts", account, len(out.AccountDetails))
	}
	return out.AccountDetails[0]
}

// TestANamespacePublisherStaysInItsNamespace mints a publisher for one
// namespace with `tinyctl identity publisher` and uses it as a user would
// (TINYCTL_NATS_CREDS pointing at the file): it publishes, reads, lists,
// shows history and status, rolls back and deletes its namespace's
// components, and every command aimed at another namespace's is refused —
// while the other namespace's component, published by the admin, is
// neither seen nor touched. Then its every request is sent with the reply
// subject aimed at the control plane and the other namespace, and nothing
// changes.
func TestANamespacePublisherStaysInItsNamespace(t *testing.T) {
	a, b := kube.RestrictedNamespace(t), kube.RestrictedNamespace(t)
	in := installWithJWT(t, a+","+b)
	in.publisher.must("apply", "-f", in.publisher.file("b.yaml", componentYAML(b, "billing", b+".bill.>", "")))
	r := in.admin.must(append([]string{"identity", "publisher", a, "--name", "team-a", "-o", filepath.Join(in.admin.home, "a.creds"),
		"--nats-url", in.url}, in.kubeArgs...)...)
	if !strings.Contains(r.stderr, "Publisher "+a+"/team-a may publish the components of namespace "+a) || strings.Contains(r.stderr, "Warning") {
		t.Errorf("identity publisher: %s", r)
	}
	creds, err := os.ReadFile(filepath.Join(in.admin.home, "a.creds"))
	testenv.Must(t, err)
	if scope, err := identity.ScopeOf(creds); err != nil || scope != a {
		t.Fatalf("the credentials are scoped to %q (%v), want %s", scope, err, a)
	}
	pa := &user{t: t, home: t.TempDir(), env: []string{"TINYCTL_NATS_URL=" + in.url, "TINYCTL_NATS_CREDS=" + filepath.Join(in.admin.home, "a.creds"),
		"TINYCTL_NATS_CONTEXT=", "TINYCTL_REQUEST_TIMEOUT=10s"}}

	own := pa.file("a.yaml", componentYAML(a, "resizer", a+".resize.>", ""))
	expect(t, pa.must("apply", "-f", own), 0, []string{"component/" + a + ".resizer created (revision"}, nil)
	deployment(t, a, "resizer", exists)
	pa.file("a.yaml", strings.Replace(componentYAML(a, "resizer", a+".resize.>", ""), "1.0.0", "1.0.1", 1))
	expect(t, pa.must("apply", "-f", own), 0, []string{"component/" + a + ".resizer configured"}, nil)
	expect(t, pa.must("get", "resizer", "-n", a), 0, []string{"acme/resizer:1.0.1"}, nil)
	r = pa.must("list", "-A")
	if !strings.Contains(r.stdout, "resizer") || strings.Contains(r.stdout, "billing") {
		t.Errorf("list -A as %s's publisher:\n%s", a, r)
	}
	expect(t, pa.must("history", "resizer", "-n", a), 0, []string{"1.0.0", "1.0.1"}, nil)
	// Its queue, through what its account imports of a's jobs account; the
	// admin's, through the control account's imports.
	pjs, err := jetstream.New(in.producer(a, a+".resize.>"))
	testenv.Must(t, err)
	testenv.Eventually(t, 30*time.Second, func() error { // the controller creates the stream
		_, err := pjs.Publish(testenv.Ctx(t, 5*time.Second), a+".resize.one", []byte("{}"))
		return err
	})
	expect(t, pa.must("describe", "resizer", "-n", a), 0, []string{"  Jobs:           1 (", "  Pending:        1 not yet handed"}, nil)
	expect(t, in.publisher.must("describe", "billing", "-n", b), 0, []string{"  Jobs:           0 (0 B)", "  Pending:        0 not yet handed"}, nil)
	testenv.Eventually(t, 30*time.Second, func() error {
		r := pa.run("status", "-A")
		if r.code != 0 || !strings.Contains(r.stdout, "resizer") || strings.Contains(r.stdout, "billing") {
			return fmt.Errorf("status -A as %s's publisher: %s", a, r)
		}
		return nil
	})

	// Its events, through its account's import of the events stream
	// filtered to a; every namespace it sees is a.
	expect(t, pa.must("events", "resizer", "-n", a), 0, []string{"Created", "Deployment/resizer"}, nil)
	if r := pa.must("events", "-A"); !strings.Contains(r.stdout, "resizer") || strings.Contains(r.stdout, "billing") {
		t.Errorf("events -A as %s's publisher:\n%s", a, r)
	}
	expect(t, pa.run("events", "-n", b), 1, nil, []string{"these credentials read only namespace " + a + "'s events, not " + b + "'s"})
	expect(t, in.publisher.must("events", "billing", "-n", b), 0, []string{"Created", "Deployment/billing"}, nil)

	r = pa.run("apply", "-f", pa.file("b.yaml", componentYAML(b, "evil", b+".bill.>", "")))
	if r.code == 0 || !strings.Contains(r.stderr, "not available to credentials scoped to one namespace") {
		t.Errorf("apply into another namespace: %s", r)
	}
	for _, args := range [][]string{{"get", "billing", "-n", b}, {"describe", "billing", "-n", b}, {"delete", "billing", "-n", b, "--yes"}, {"history", "billing", "-n", b}} {
		if r := pa.run(args...); r.code == 0 {
			t.Errorf("%v as %s's publisher succeeded:\n%s", args, a, r)
		}
	}
	if got := in.publisher.must("get", "billing", "-n", b); !strings.Contains(got.stdout, "billing") {
		t.Errorf("%s's component is gone after %s's publisher tried: %s", b, a, got)
	}

	// The publisher's every request, answered to every target.
	obs := observeControl(t, in, true)
	streamB, consumerB := render.StreamName(b, "billing"), render.ConsumerName(b, "billing")
	before := obs.snapshot(t, b, streamB, consumerB)
	nc, err := nats.Connect(in.url, nats.UserCredentials(filepath.Join(in.admin.home, "a.creds")))
	testenv.Must(t, err)
	defer nc.Close()
	key := "$KV.tinyctl-components." + a + ".resizer"
	vehicles := []struct {
		subject string
		body    []byte
	}{
		{identity.SpecsAPIPrefix + ".DIRECT.GET.KV_tinyctl-components." + key, nil},
		{identity.SpecsAPIPrefix + ".CONSUMER.CREATE.KV_tinyctl-components.probe." + key,
			[]byte(`{"stream_name":"KV_tinyctl-components","config":{"name":"probe","filter_subject":"` + key + `","ack_policy":"none","inactive_threshold":1000000000}}`)},
		{key, []byte(componentYAML(a, "resizer", a+".resize.>", ""))},
	}
	// Its events import is filtered to a: a consumer asking for b's events
	// under a's filter is refused by JetStream, and nothing else is
	// imported.
	lie := `{"stream_name":"` + event.Stream + `","config":{"filter_subject":"` + event.Filter(b, "") + `","ack_policy":"none","deliver_policy":"all","inactive_threshold":1000000000}}`
	msg, err := nc.Request(identity.SpecsAPIPrefix+".CONSUMER.CREATE."+event.Stream+".probe."+event.Filter(a, ""), []byte(lie), 5*time.Second)
	testenv.Must(t, err)
	if !strings.Contains(string(msg.Data), `"error"`) {
		t.Errorf("%s's publisher created a consumer of %s's events: %s", a, b, msg.Data)
	}
	if _, err := nc.Request(identity.SpecsAPIPrefix+".CONSUMER.CREATE."+event.Stream+".probe."+event.Filter(b, ""), []byte(lie), 2*time.Second); err == nil {
		t.Errorf("%s's publisher reached a consumer create filtered to %s's events", a, b)
	}
	vehicles = append(vehicles, struct {
		subject string
		body    []byte
	}{identity.SpecsAPIPrefix + ".CONSUMER.CREATE." + event.Stream + ".probe2." + event.Filter(a, ""),
		[]byte(`{"stream_name":"` + event.Stream + `","config":{"name":"probe2","filter_subject":"` + event.Filter(a, "") + `","ack_policy":"none","inactive_threshold":1000000000}}`)})
	// The controllers' queue-figure requests (what a fleet hub asks) are
	// the control account's: the admin publisher's request for b's queue
	// is answered with its figures (the positive control), a's
	// publisher's reaches no one.
	anc, err := nats.Connect(in.url, nats.UserCredentials(in.publisher.creds()))
	testenv.Must(t, err)
	defer anc.Close()
	figures := queue.Subject(render.DefaultClusterName, b, "billing")
	msg, err = anc.Request(figures, nil, 5*time.Second)
	testenv.Must(t, err)
	var answer queue.Reply
	testenv.Must(t, json.Unmarshal(msg.Data, &answer))
	if answer.Figures == nil || answer.Figures.Stream != streamB || answer.Cluster != render.DefaultClusterName {
		t.Errorf("the admin publisher's queue-figure request for %s: %s, want %s's figures", b, msg.Data, streamB)
	}
	if msg, err := nc.Request(figures, nil, 2*time.Second); err == nil {
		t.Errorf("%s's publisher asked for %s's queue figures and got %s", a, b, msg.Data)
	}
	// Its queue imports reach a's jobs account only: b's stream is not there.
	msg, err = nc.Request(identity.QueuesAPIPrefix+".STREAM.INFO."+streamB, nil, 5*time.Second)
	testenv.Must(t, err)
	if !strings.Contains(string(msg.Data), `"err_code":10059`) {
		t.Errorf("%s's publisher asked for %s's stream info and got %s, want stream not found", a, b, msg.Data)
	}
	vehicles = append(vehicles, struct {
		subject string
		body    []byte
	}{identity.QueuesAPIPrefix + ".STREAM.INFO." + render.StreamName(a, "resizer"), nil}, struct {
		subject string
		body    []byte
	}{identity.QueuesAPIPrefix + ".CONSUMER.INFO." + render.StreamName(a, "resizer") + "." + render.ConsumerName(a, "resizer"), nil})
	revBefore := specRevision(t, obs, a+".resizer")
	targets := append(attackTargets(b, streamB, consumerB),
		identity.SpecsAPIPrefix+".DIRECT.GET.KV_tinyctl-components.$KV.tinyctl-components."+b+".billing",
		identity.SpecsAPIPrefix+".CONSUMER.CREATE.KV_tinyctl-components.x.$KV.tinyctl-components."+b+".>")
	for _, v := range vehicles {
		for _, target := range targets {
			testenv.Must(t, nc.PublishRequest(v.subject, target, v.body))
		}
		if _, err := nc.Request(v.subject, v.body, 5*time.Second); err != nil {
			t.Fatalf("control request %s: %v", v.subject, err)
		}
	}
	// Positive control: every put aimed elsewhere was stored as a revision
	// of the publisher's own key.
	testenv.Eventually(t, 10*time.Second, func() error {
		if n := specRevision(t, obs, a+".resizer") - revBefore; n < uint64(len(targets)) {
			return fmt.Errorf("%d of the %d puts sent with a reply subject stored", n, len(targets))
		}
		return nil
	})
	after := obs.snapshot(t, b, streamB, consumerB)
	// The publisher's own puts grow the spec bucket: its other keys and its
	// creation are what must hold.
	delete(before, "stream KV_tinyctl-components")
	delete(after, "stream KV_tinyctl-components")
	if diff := before.diff(after); diff != "" {
		t.Errorf("what %s's publisher made the server send reached outside %s:\n%s", a, a, diff)
	}
	expect(t, pa.must("delete", "resizer", "-n", a, "--yes"), 0, nil, nil)
}

// specRevision is the latest revision of a spec key.
func specRevision(t *testing.T, o *controlObserver, key string) uint64 {
	t.Helper()
	ctx := testenv.Ctx(t, 10*time.Second)
	kv, err := o.js.KeyValue(ctx, "tinyctl-components")
	testenv.Must(t, err)
	e, err := kv.Get(ctx, key)
	testenv.Must(t, err)
	return e.Revision()
}
