// Package fleet is the hub side of fleet sync: which clusters' status
// records and heartbeats the hub's buckets gather.
//
// A fleet is one hub NATS (its own JetStream domain) holding the spec
// bucket, and one NATS per cluster, a leafnode of the hub with a JetStream
// domain of its own. A cluster's spec bucket is a mirror of the hub's (see
// kv.Config.MirrorDomain); its controller writes status records and
// heartbeats into local buckets, and the hub's buckets of the same names
// source them from the cluster's domain, each source filtered to that
// cluster's own keys. Join and Leave add and remove those sources: the
// membership lives in the hub's stream configuration, nowhere else.
package fleet

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/bus"
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

// Join makes the hub's status and heartbeat buckets (which must exist)
// gather cluster's records from JetStream domain (default: the cluster's
// name). Only keys of that cluster are copied, so a cluster cannot write
// another's status at the hub. Joining again with the same domain changes
// nothing; with another domain it replaces the sources.
func Join(ctx context.Context, c *bus.Conn, b Buckets, cluster, domain string) error {
	if err := checkName(cluster, domain); err != nil {
		return err
	}
	domain = cmp.Or(domain, cluster)
	for _, s := range []struct{ bucket, filter string }{
		{b.status(), "$KV." + b.status() + ".*.*." + cluster},
		{b.heartbeat(), "$KV." + b.heartbeat() + "." + cluster},
	} {
		src := &jetstream.StreamSource{Name: "KV_" + s.bucket, FilterSubject: s.filter, Domain: domain}
		err := update(ctx, c, s.bucket, func(srcs []*jetstream.StreamSource) []*jetstream.StreamSource {
			return append(without(srcs, s.filter), src)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// Leave stops the hub gathering cluster's records. The records already
// gathered stay until they are deleted (see the status package).
func Leave(ctx context.Context, c *bus.Conn, b Buckets, cluster string) error {
	if err := checkName(cluster, ""); err != nil {
		return err
	}
	members, err := Members(ctx, c, b)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(members, func(m Member) bool { return m.Cluster == cluster }) {
		return fmt.Errorf("fleet: leave %s: %w", cluster, ErrNotMember)
	}
	for _, f := range []struct{ bucket, filter string }{
		{b.status(), "$KV." + b.status() + ".*.*." + cluster},
		{b.heartbeat(), "$KV." + b.heartbeat() + "." + cluster},
	} {
		err := update(ctx, c, f.bucket, func(srcs []*jetstream.StreamSource) []*jetstream.StreamSource {
			return without(srcs, f.filter)
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
	prefix := "$KV." + b.status() + ".*.*."
	var out []Member
	for _, si := range info.Sources {
		cluster, ok := strings.CutPrefix(si.FilterSubject, prefix)
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

// update rewrites the sources of bucket's stream with edit.
func update(ctx context.Context, c *bus.Conn, bucket string, edit func([]*jetstream.StreamSource) []*jetstream.StreamSource) error {
	js := c.JetStream()
	s, err := js.Stream(ctx, "KV_"+bucket)
	if err != nil {
		return bus.Classify("fleet: read bucket "+bucket, err)
	}
	cfg := s.CachedInfo().Config
	for _, src := range cfg.Sources {
		if src.External != nil && src.Domain == "" {
			src.Domain, src.External = domainOf(src.External), nil
		}
	}
	cfg.Sources = edit(cfg.Sources)
	if _, err := js.UpdateStream(ctx, cfg); err != nil {
		return bus.Classify("fleet: update bucket "+bucket, err)
	}
	return nil
}

// without returns srcs less the one copying filter.
func without(srcs []*jetstream.StreamSource, filter string) []*jetstream.StreamSource {
	return slices.DeleteFunc(slices.Clone(srcs), func(s *jetstream.StreamSource) bool { return s.FilterSubject == filter })
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
	return []string{"$KV." + b.status() + ".>", "$KV." + b.heartbeat() + ".>"}
}
