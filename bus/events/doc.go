// Package events keeps what controllers announce about components
// (api/event): the stream that holds each cluster's recent events, the
// publisher a controller sends them with, and the reads `tinyctl events`
// and `describe` make. Events are notices, not state: a publish is not
// acknowledged, and one lost while the broker is unreachable is not sent
// again (the status bucket holds what a component's state is).
package events
