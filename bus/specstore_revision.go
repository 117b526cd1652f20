package bus

import (
	"context"
	"time"
)

// BucketInfo identifies one incarnation of a bucket: a bucket deleted and
// created again under the same name has a new Created time, and its
// revisions start again from 1.
type BucketInfo struct {
	Created      time.Time
	LastRevision uint64
}

// Info returns the bucket's creation time and latest revision (the
// sequence of its last write, whatever the key). An empty bucket has
// LastRevision 0.
func (s *SpecStore) Info(ctx context.Context) (BucketInfo, error) {
	info, err := s.b.stream.Info(ctx)
	if err != nil {
		return BucketInfo{}, classify("bucket "+s.b.name+" info", err)
	}
	return BucketInfo{Created: info.Created, LastRevision: info.State.LastSeq}, nil
}
