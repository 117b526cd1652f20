package status

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/kv"
)

// Two Kubernetes clusters given one name are one row to every reader:
// their heartbeats and status records overwrite each other's, and at a
// fleet's hub one cluster's records stand for both. A controller cannot
// be kept from starting under a name another cluster uses (it may not
// know the other exists), but it can notice: a live heartbeat under its
// own name carrying another ClusterID is another cluster's.

// NameConflict compares own with the heartbeat hb found under own's
// cluster name (nil: none), judged at now on the clock that stamped hb,
// and describes the conflict where (the bucket read) shows, or returns "".
// Heartbeats without a ClusterID (controllers that predate it) never
// conflict.
func NameConflict(own cluster.Heartbeat, hb *HeartbeatRecord, now time.Time, where string) string {
	if hb == nil || Stale(hb, now) || own.ClusterID == "" || hb.ClusterID == "" || hb.ClusterID == own.ClusterID {
		return ""
	}
	return fmt.Sprintf("another Kubernetes cluster (id %s, controller %q) beats as %q %s: two clusters share this name, "+
		"so their status records overwrite each other's; give one of them another --cluster-name",
		hb.ClusterID, hb.Controller, own.Cluster, where)
}

// NameConflict reads the latest heartbeat under own's cluster name in this
// store's bucket and judges it (see the package function).
func (s *Store) NameConflict(ctx context.Context, own cluster.Heartbeat) (string, error) {
	hb, err := s.Heartbeat(ctx, own.Cluster)
	switch {
	case isNotFound(err):
		return "", nil
	case err != nil:
		return "", err
	}
	return NameConflict(own, &hb, s.Now(), "on this NATS"), nil
}

// HubNameConflict reads the latest heartbeat under own's cluster name in
// the heartbeat bucket of the fleet hub in JetStream domain domain, and
// judges it on the hub's clock: a cluster whose name another cluster
// already uses at the hub (joined first, or beating there through the
// same domain) finds it here. A hub without the bucket or the key is no
// conflict.
func HubNameConflict(ctx context.Context, c *bus.Conn, bucket, domain string, own cluster.Heartbeat) (string, error) {
	var hb *HeartbeatRecord
	var now time.Time
	err := kv.InDomain(ctx, c, bucket, domain, func(ctx context.Context, s jetstream.Stream) error {
		now = s.CachedInfo().TimeStamp
		m, err := s.GetLastMsgForSubject(ctx, kv.Subject(bucket, own.Cluster))
		if err != nil {
			return err
		}
		if len(m.Data) == 0 {
			return nil // a delete or expiry marker
		}
		rec, err := decodeHeartbeat(kv.Entry{Key: own.Cluster, Value: m.Data, Revision: m.Sequence, Created: m.Time, Op: kv.OpPut})
		if err != nil {
			return nil // not a heartbeat this controller can read: no claim
		}
		hb = &rec
		return nil
	})
	if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, jetstream.ErrMsgNotFound) {
		return "", nil
	}
	if err != nil {
		return "", bus.Classify("read the hub's heartbeat of "+own.Cluster+" (domain "+domain+")", err)
	}
	if now.IsZero() {
		now = time.Now()
	}
	return NameConflict(own, hb, now, "at the fleet hub"), nil
}
