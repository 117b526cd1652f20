package bus

import (
	"context"
)

// StreamNames lists the names of every stream in the connection's account
// (one paged JetStream API call per 1024 streams). A failed listing is a
// *TransientError.
func StreamNames(ctx context.Context, c *Conn) ([]string, error) {
	var names []string
	lister := c.JetStream().StreamNames(ctx)
	for name := range lister.Name() {
		names = append(names, name)
	}
	if err := lister.Err(); err != nil {
		return nil, &TransientError{Op: "list streams", Err: err}
	}
	return names, nil
}
