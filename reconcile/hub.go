package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/tinyctl/tinyctl/api/reasons"
)

// A revision number means something only within one bucket: a bucket
// deleted and created again numbers from 1, and one restored from a backup
// (or that lost acknowledged writes) numbers again from where the backup
// ends. An epoch names that: the bucket's incarnation, and, once the
// bucket was found to have gone back, the revision it had gone back to
// (the boundary). Every status record keeps the epoch of the revision it
// observed, so the loop never applies an older revision of the same
// bucket — a mirror read while it is still copying, a superseded delete —
// while a revision written after the bucket went back is newer whatever
// its number.

// UnknownIncarnation starts the incarnation of a mirror created while the hub
// was out of reach: which hub bucket it copies is not known yet, so its
// revisions are taken as the same bucket's as every status record's
// (older ones are held, not applied) until the mirror is rebuilt.
const UnknownIncarnation = "?"

// epoch is a parsed Specs.Incarnation.
type epoch struct {
	bucket   string
	boundary uint64
}

func parseEpoch(s string) epoch {
	if i := strings.LastIndexByte(s, '/'); i >= 0 {
		if b, err := strconv.ParseUint(s[i+1:], 10, 64); err == nil {
			return epoch{bucket: s[:i], boundary: b}
		}
	}
	return epoch{bucket: s}
}

// epochAfter is the epoch of bucket once it went back to revision last.
func epochAfter(bucket string, last uint64) string {
	return parseEpoch(bucket).bucket + "/" + strconv.FormatUint(last, 10)
}

// behind returns why the revision in hand must not be applied, nil when it
// may: the cluster already applied a newer revision of the same bucket.
func behind(in input) error {
	if in.prev == nil || in.prev.SpecBucket == "" || in.bucket == "" {
		return nil // a record from before epochs, or no bucket known
	}
	prev, cur, rev, seen := parseEpoch(in.prev.SpecBucket), parseEpoch(in.bucket), in.entry.rev, in.prev.ObservedRevision
	switch {
	case prev.bucket != cur.bucket && !strings.HasPrefix(cur.bucket, UnknownIncarnation):
		return nil // another bucket: its revisions start over
	case rev >= seen:
		return nil
	case cur.boundary > prev.boundary && rev > cur.boundary:
		return nil // written after the bucket went back
	}
	return withClass(Permanent, reasons.RevisionBehind, fmt.Errorf(
		"revision %d is older than revision %d, which this cluster applied from the same spec bucket: nothing is applied or deleted "+
			"until the bucket holds a revision at least as new (a mirror still copying from the hub; a bucket restored in place, or "+
			"that lost acknowledged writes); to accept the bucket's older revision, delete this status record (key %s.%s of the status bucket) and restart the controller",
		rev, seen, in.key, in.cluster.Name))
}

// hubVerdict is what comparing the mirror with the hub's bucket calls for.
type hubVerdict struct {
	// rebuild says why the mirror must be copied again from scratch ("":
	// it need not), under epoch.
	rebuild, epoch string
	// gone are keys the mirror holds a value of and the hub holds nothing
	// of, though it still holds revisions the mirror copied (so it was not
	// emptied): deleted at the hub, and their delete markers purged there
	// (nats kv compact) before the mirror copied them.
	gone []string
}

// judgeHub compares v with live, the keys whose latest revision the loop
// holds is a value, read before v (nil: keys not compared). It reads and
// writes nothing.
func judgeHub(v HubView, live map[string]uint64) hubVerdict {
	recorded := parseEpoch(v.Epoch)
	switch {
	case v.Hub == "":
		return hubVerdict{}
	case v.Epoch == "":
		return hubVerdict{rebuild: "the mirror was created while the hub was out of reach and records no hub bucket", epoch: v.Hub}
	case recorded.bucket != v.Hub:
		return hubVerdict{rebuild: fmt.Sprintf("the hub's bucket was created again (created %s; the mirror copied the one created %s)",
			v.Hub, recorded.bucket), epoch: v.Hub}
	case v.HubLast < v.MirrorLast:
		return hubVerdict{rebuild: fmt.Sprintf("the hub's bucket went back to revision %d, the mirror had copied up to %d "+
			"(restored from a backup, or it lost writes): revisions after %d are new", v.HubLast, v.MirrorLast, v.HubLast),
			epoch: epochAfter(v.Epoch, v.HubLast)}
	}
	if v.HubKeys == nil {
		return hubVerdict{}
	}
	var out hubVerdict
	for _, key := range slices.Sorted(maps.Keys(live)) {
		if !v.HubKeys[key] {
			out.gone = append(out.gone, key)
		}
	}
	if out.gone != nil && v.HubFirst > v.MirrorLast {
		// Nothing the mirror copied is left at the hub: the bucket was
		// emptied (nats stream purge), not compacted key by key.
		return hubVerdict{rebuild: fmt.Sprintf("the hub's bucket holds nothing this cluster copied (purged up to revision %d), so "+
			"what was deleted there cannot be told; children of keys it does not hold are kept as orphans", v.HubFirst-1), epoch: v.Epoch}
	}
	return out
}

// hubWait bounds how long a rebuilt (or new) mirror may take to copy the
// hub's bucket before the loop reads it anyway.
const hubWait = 2 * time.Minute

// checkHub compares the mirror with the hub's bucket (with every key when
// full) and acts on the verdict: it rebuilds the mirror (rebuilt is then
// true: the loop must re-read it from scratch, as a recreated bucket, and
// deletes nothing), or purges here a key purged at the hub and removes it
// as its delete marker would have. A hub out of reach is no verdict: the
// loop goes on with what it has.
func (c *Controller) checkHub(ctx context.Context, full bool) (rebuilt bool, err error) {
	if c.deps.Hub == nil {
		return false, nil
	}
	var live map[string]uint64
	if full {
		live = c.specs.liveRevisions()
	}
	v, err := c.deps.Hub.Compare(ctx, full)
	if err != nil {
		return false, err
	}
	verdict := judgeHub(v, live)
	log := zerolog.Ctx(ctx)
	if verdict.rebuild != "" {
		log.Warn().Str("reason", verdict.rebuild).Str("epoch", verdict.epoch).Msg("rebuilding the spec mirror from the hub")
		err := c.fenced(ctx, func(ctx context.Context) error { return c.deps.Hub.Rebuild(ctx, verdict.epoch) })
		if err != nil {
			return false, fmt.Errorf("rebuild the spec mirror: %w", err)
		}
		// The copy is waited for outside the fence, which bounds writes,
		// not a wait that may outlast one lease renewal.
		wctx, cancel := context.WithTimeout(ctx, hubWait)
		defer cancel()
		if err := c.deps.Hub.WaitMirror(wctx, v.HubLastMessage); err != nil {
			log.Warn().Err(err).Msg("reading the rebuilt spec mirror before it caught up")
		}
		return true, nil
	}
	for _, key := range verdict.gone {
		err := c.fenced(ctx, func(ctx context.Context) error { return c.deps.Hub.PurgeLocal(ctx, key) })
		if err != nil {
			return false, fmt.Errorf("purge %s from the spec mirror: %w", key, err)
		}
		if c.specs.purged(key) {
			log.Info().Str("key", key).Msg("deleted at the hub, its delete marker purged there before this cluster copied it: removing")
			c.enqueue(key)
		}
	}
	return false, nil
}

// catchUp waits, before the loop first reads the mirror, until it has
// copied what the hub held a moment ago (a mirror just created, or
// rebuilt, copies from the first revision), and rebuilds it first when
// it does not copy the hub's bucket as it is now. A hub out of reach
// waits for nothing.
func (c *Controller) catchUp(ctx context.Context) {
	if c.deps.Hub == nil {
		return
	}
	log := zerolog.Ctx(ctx)
	if _, err := c.checkHub(ctx, false); err != nil {
		log.Warn().Err(err).Msg("compare the spec mirror with the hub")
		return
	}
	v, err := c.deps.Hub.Compare(ctx, false)
	if err != nil || v.MirrorLast >= v.HubLastMessage {
		return
	}
	log.Info().Uint64("mirror", v.MirrorLast).Uint64("hub", v.HubLastMessage).Msg("waiting for the spec mirror to copy the hub's bucket")
	ctx, cancel := context.WithTimeout(ctx, hubWait)
	defer cancel()
	if err := c.deps.Hub.WaitMirror(ctx, v.HubLastMessage); err != nil {
		log.Warn().Err(err).Msg("reading the spec mirror before it caught up")
	}
}
