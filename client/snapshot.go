package client

import (
	"context"
	"fmt"
)

// Snapshot reads the latest spec of every component and every status
// record, judged stale or not by the client's clock.
func (s *Client) Snapshot(ctx context.Context) (Snapshot, error) {
	var snap Snapshot
	if s.specs != nil {
		es, err := s.specs.List(ctx)
		if err != nil {
			return Snapshot{}, fmt.Errorf("read specs: %w", err)
		}
		snap.Components = revisionsOf(es)
	}
	if s.statuses != nil {
		rs, err := s.statuses.List(ctx)
		if err != nil {
			return Snapshot{}, fmt.Errorf("read statuses: %w", err)
		}
		snap.Statuses = recordsOf(rs)
	}
	snap.Now = s.serverNow()
	return snap, nil
}

// Status returns the selected rows of a fresh Snapshot: one per component
// per cluster that reported on it, plus one per component no cluster has
// reported on.
func (s *Client) Status(ctx context.Context, sel Selector) ([]Row, error) {
	snap, err := s.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	return Rows(snap, sel), nil
}
