package fleet

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"math/rand/v2"

	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/lease"
)

// JetStream has no compare-and-set for a stream's configuration, and the
// membership is the status and heartbeat buckets' sources: two joins at
// once would each write back what they read, the later dropping the
// other's source. So every change of membership holds a lock, a lease in
// the hub's lease bucket named after the status bucket, for as long as it
// reads and writes the sources.

// lockOptions keep the lock short-lived: a join that crashed holding it
// blocks the next one for at most the TTL, and a waiting join retries
// every RenewInterval.
var lockOptions = lease.Options{TTL: 5 * time.Second, RenewInterval: 250 * time.Millisecond}

// locked runs fn holding the membership lock of b's status bucket.
func locked(ctx context.Context, c *bus.Conn, b Buckets, fn func() error) error {
	leases, err := lease.Open(ctx, c, lease.Config{Adopt: true})
	if err != nil {
		return fmt.Errorf("fleet: open the hub's lease bucket for the membership lock: %w", err)
	}
	name := "fleet." + b.status()
	l, err := leases.Campaign(ctx, name, lockHolder(), lockOptions)
	if err != nil {
		return fmt.Errorf("fleet: take the membership lock %s: %w", name, err)
	}
	defer func() { _ = l.Release(context.WithoutCancel(ctx)) }()
	return fn()
}

// lockHolder names this attempt: unique, since a lease is never shared by
// two holders of one name, and saying where it comes from.
func lockHolder() string {
	host, _ := os.Hostname()
	return host + "-" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatUint(rand.Uint64()%1e6, 10)
}
