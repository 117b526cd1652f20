// Package fleet is the hub side of fleet sync: which clusters' status
// records and heartbeats the hub's buckets gather.
//
// A fleet is one hub NATS (its own JetStream domain) holding the spec
// bucket, and one NATS per cluster, a leafnode of the hub with a JetStream
// domain of its own. A cluster's spec bucket is a mirror of the hub's (see
// kv.Config.MirrorDomain); its controller writes status records and
// heartbeats into local buckets, and the hub's buckets of the same names
// source them from the cluster's domain. The hub trusts no member: each
// source rewrites, on the hub, the cluster token of every key it copies to
// the member's own name (a subject transform), so whatever a member's
// broker sends — honestly filtered or not — can only ever be that
// member's rows. Join and Leave add and remove those sources: the
// membership lives in the hub's stream configuration, nowhere else.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
	"github.com/tinyctl/tinyctl/bus/status"
)

// Buckets names the hub's status and heartbeat buckets (zero fields: the
// defaults of package status). Clusters use the same names locally.
type Buckets struct {
	Status    string
	Heartbeat string
}

func (b Buckets) status() string    { return cmp.Or(b.Status, status.DefaultBucket) }
func (b Buckets) heartbeat() string { return cmp.Or(b.Heartbeat, status.DefaultHeartbeatBucket) }

// Member is a cluster whose records the hub gathers, with how the
// gathering goes.
type Member struct {
	Cluster string `json:"cluster"`
	// Domain is the JetStream domain of the cluster's NATS.
	Domain string `json:"domain"`
	// Lag is how many of the cluster's status messages the hub has yet to
	// copy; Active is how long ago the hub last heard from the cluster's
	// status bucket (negative: never); Error is the source's last error.
	Lag    uint64        `json:"lag"`
	Active time.Duration `json:"active"`
	Error  string        `json:"error,omitempty"`
}

// ErrNotMember is returned by Leave for a cluster that has not joined.
var ErrNotMember = errors.New("cluster is not a member of the fleet")

// ErrTaken is returned by Join for a cluster name already gathered from
// another JetStream domain, or a domain already gathered under another
// name: two clusters sharing a name would have their records merged into
// one row at the hub, and one domain under two names duplicated.
var ErrTaken = errors.New("already a member under another domain or name")

// Join makes the hub's status and heartbeat buckets (which must exist)
// gather cluster's records from JetStream domain (default: the cluster's
// name). Every key copied is rewritten on the hub to name cluster, so a
// cluster cannot write another's status at the hub, whatever its broker
// sends. Joining again with the same domain changes nothing. A name
// already joined from another domain, or a domain already joined under
// another name, is refused (ErrTaken): a cluster that moved leaves first.
func Join(ctx context.Context, c *bus.Conn, b Buckets, cluster, domain string) error {
	if err := checkName(cluster, domain); err != nil {
		return err
	}
	return locked(ctx, c, b, func() error { return join(ctx, c, b, cluster, cmp.Or(domain, cluster)) })
}

// join is Join, under the membership lock.
func join(ctx context.Context, c *bus.Conn, b Buckets, cluster, domain string) error {
	members, err := Members(ctx, c, b)
	if err != nil && !errors.Is(err, bus.ErrNotFound) {
		return err
	}
	for _, m := range members {
		switch {
		case m.Cluster == cluster && m.Domain != domain:
			return fmt.Errorf("fleet: join %s from domain %s: %w: %s is gathered from domain %s; two clusters cannot share a name "+
				"(their records would merge into one row): name this one differently, or if %s moved, leave first (tinyctl fleet leave %s)",
				cluster, domain, ErrTaken, cluster, m.Domain, cluster, cluster)
		case m.Cluster != cluster && m.Domain == domain:
			return fmt.Errorf("fleet: join %s from domain %s: %w: domain %s is gathered as cluster %s; each cluster's broker needs "+
				"a JetStream domain of its own (its --cluster-name)", cluster, domain, ErrTaken, domain, m.Cluster)
		}
	}
	for _, bucket := range []string{b.status(), b.heartbeat()} {
		src := &jetstream.StreamSource{Name: "KV_" + bucket, Domain: domain,
			SubjectTransforms: []jetstream.SubjectTransformConfig{b.transform(bucket, cluster)}}
		err := update(ctx, c, bucket, func(srcs []*jetstream.StreamSource) []*jetstream.StreamSource {
			return append(without(srcs, b, bucket, cluster), src)
		}, func(srcs []*jetstream.StreamSource) bool {
			return slices.ContainsFunc(srcs, func(s *jetstream.StreamSource) bool {
				c, ok := b.memberOf(bucket, s)
				return ok && c == cluster
			})
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// transform is the subject transform of cluster's source of bucket: every
// key of the status bucket (<namespace>.<name>.<cluster>) or of the
// heartbeat bucket (<cluster>) gets cluster as its cluster token.
func (b Buckets) transform(bucket, cluster string) jetstream.SubjectTransformConfig {
	if bucket == b.heartbeat() {
		return jetstream.SubjectTransformConfig{Source: kv.Subject(bucket, "*"), Destination: kv.Subject(bucket, cluster)}
	}
	return jetstream.SubjectTransformConfig{Source: kv.Subject(bucket, status.Key("*.*", "*")),
		Destination: kv.Subject(bucket, status.Key(anyComponent, cluster))}
}

// anyComponent is a status key's component part in a transform's
// destination: the two tokens of the source, as they came.
const anyComponent = "{{wildcard(1)}}.{{wildcard(2)}}"

// memberOf is the cluster a source of bucket gathers, and whether it is
// one Join added (a transform to one cluster; or, from tinyctl before the
// hub rewrote keys, a filter to one cluster's keys).
func (b Buckets) memberOf(bucket string, src *jetstream.StreamSource) (string, bool) {
	p := kv.Subject(bucket, "")
	for _, tr := range src.SubjectTransforms {
		dest := strings.TrimPrefix(tr.Destination, p)
		if bucket != b.heartbeat() {
			dest = strings.TrimPrefix(dest, anyComponent+".")
		}
		if dest != tr.Destination && bus.IsToken(dest) {
			return dest, true
		}
	}
	if bucket != b.heartbeat() {
		p += "*.*."
	}
	cluster, ok := strings.CutPrefix(src.FilterSubject, p)
	return cluster, ok && bus.IsToken(cluster)
}

// Leave stops the hub gathering cluster's records. The records already
// gathered stay until they are deleted (see the status package).
func Leave(ctx context.Context, c *bus.Conn, b Buckets, cluster string) error {
	if err := checkName(cluster, ""); err != nil {
		return err
	}
	return locked(ctx, c, b, func() error { return leave(ctx, c, b, cluster) })
}

// leave is Leave, under the membership lock.
func leave(ctx context.Context, c *bus.Conn, b Buckets, cluster string) error {
	members, err := Members(ctx, c, b)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(members, func(m Member) bool { return m.Cluster == cluster }) {
		return fmt.Errorf("fleet: leave %s: %w", cluster, ErrNotMember)
	}
	for _, bucket := range []string{b.status(), b.heartbeat()} {
		err := update(ctx, c, bucket, func(srcs []*jetstream.StreamSource) []*jetstream.StreamSource {
			return without(srcs, b, bucket, cluster)
		}, func(srcs []*jetstream.StreamSource) bool {
			return len(without(srcs, b, bucket, cluster)) == len(srcs)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Members lists the clusters whose status records the hub gathers, sorted
// by name.
func Members(ctx context.Context, c *bus.Conn, b Buckets) ([]Member, error) {
	s, err := c.JetStream().Stream(ctx, "KV_"+b.status())
	if err != nil {
		return nil, bus.Classify("fleet: read bucket "+b.status(), err)
	}
	info := s.CachedInfo()
	var out []Member
	for _, si := range info.Sources {
		cluster, ok := b.memberOf(b.status(), &jetstream.StreamSource{FilterSubject: si.FilterSubject, SubjectTransforms: si.SubjectTransforms})
		if !ok {
			continue // a source this package did not add
		}
		m := Member{Cluster: cluster, Domain: domainOf(si.External), Lag: si.Lag, Active: si.Active}
		if si.Error != nil {
			m.Error = si.Error.Error()
		}
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b Member) int { return strings.Compare(a.Cluster, b.Cluster) })
	return out, nil
}

// update rewrites the sources of bucket's stream with edit until done
// reports the stream's sources as edited. Callers hold the membership lock
// (lock.go); the read back after the write still catches a writer that
// does not take it (an older tinyctl, or `nats stream edit`), and the
// loser writes again.
func update(ctx context.Context, c *bus.Conn, bucket string, edit func([]*jetstream.StreamSource) []*jetstream.StreamSource,
	done func([]*jetstream.StreamSource) bool) error {
	js := c.JetStream()
	for attempt := 0; ; attempt++ {
		s, err := js.Stream(ctx, "KV_"+bucket)
		if err != nil {
			return bus.Classify("fleet: read bucket "+bucket, err)
		}
		cfg := s.CachedInfo().Config
		if attempt > 0 && done(cfg.Sources) {
			return nil
		}
		if attempt == updateAttempts {
			return fmt.Errorf("fleet: update bucket %s: its sources did not keep the change after %d writes "+
				"(other changes at the same time, or a server without stream sourcing)", bucket, updateAttempts)
		}
		for _, src := range cfg.Sources {
			if src.External != nil && src.Domain == "" {
				src.Domain, src.External = domainOf(src.External), nil
			}
		}
		cfg.Sources = edit(cfg.Sources)
		// The client library reports an answer whose configuration has no
		// sources as sourcing being unsupported: with writers racing, the
		// answer can describe another write. Reading back decides.
		if _, err := js.UpdateStream(ctx, cfg); err != nil && !errors.Is(err, jetstream.ErrStreamSourceNotSupported) {
			return bus.Classify("fleet: update bucket "+bucket, err)
		}
		// A pause well above a read-to-write round trip lets a concurrent
		// writer outside the lock that read before this write land first,
		// so the read back sees it.
		if !pause(ctx) {
			return ctx.Err()
		}
	}
}

// pause waits 50 to 150 ms, at random so that racing writers fall apart.
func pause(ctx context.Context) bool {
	return bus.SleepCtx(ctx, 50*time.Millisecond+time.Duration(rand.Int64N(int64(100*time.Millisecond))))
}

// updateAttempts bounds update's writes.
const updateAttempts = 10

// without returns srcs of bucket less those gathering cluster.
func without(srcs []*jetstream.StreamSource, b Buckets, bucket, cluster string) []*jetstream.StreamSource {
	return slices.DeleteFunc(slices.Clone(srcs), func(s *jetstream.StreamSource) bool {
		c, ok := b.memberOf(bucket, s)
		return ok && c == cluster
	})
}

// domainOf is the domain an external stream's API prefix "$JS.<d>.API"
// names.
func domainOf(ext *jetstream.ExternalStream) string {
	if ext == nil {
		return ""
	}
	return strings.TrimSuffix(strings.TrimPrefix(ext.APIPrefix, "$JS."), ".API")
}

// checkName refuses a cluster or domain name that is not one subject token.
func checkName(cluster, domain string) error {
	switch {
	case !bus.IsToken(cluster):
		return fmt.Errorf("fleet: cluster name %q is not a single subject token", cluster)
	case domain != "" && !bus.IsToken(domain):
		return fmt.Errorf("fleet: JetStream domain %q is not a single subject token", domain)
	}
	return nil
}

// LocalOnly are the subjects a cluster's NATS must not send to the hub
// (bus.LeafRemote.LocalOnly): its status and heartbeat writes. The hub's
// buckets of the same names would otherwise store them directly, beside
// the copy their sources bring.
func LocalOnly(b Buckets) []string {
	return []string{kv.Subject(b.status(), ">"), kv.Subject(b.heartbeat(), ">")}
}
