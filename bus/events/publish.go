package events

import (
	"encoding/json"
	"fmt"

	"github.com/tinyctl/tinyctl/api/event"
	"github.com/tinyctl/tinyctl/bus"
)

// maxMessage is the longest message an event carries, well inside
// MaxEventBytes with the other fields.
const maxMessage = 4 << 10

// Publisher sends events on their subjects, where the events stream (and
// any subscriber) receives them.
type Publisher struct{ c *bus.Conn }

// NewPublisher publishes on c.
func NewPublisher(c *bus.Conn) *Publisher { return &Publisher{c: c} }

// Publish sends e on event.Subject of its cluster and component. It does
// not wait: it fails only when the connection is closed or its buffer for
// an outage is full.
func (p *Publisher) Publish(e event.Event) error {
	e.Message = event.Shorten(e.Message, maxMessage)
	b, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("events: %w", err)
	}
	ns, name := e.Key()
	if err := p.c.NATS().Publish(event.Subject(e.Cluster, ns, name), b); err != nil {
		return fmt.Errorf("events: publish: %w", err)
	}
	return nil
}
