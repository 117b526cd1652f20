package reconcile

// AwaitsOwnEvent reports whether the loop still waits for the informer
// event of its own write of child kind namespace/name (tests: a write's
// event judged before the component moves on is not a wake).
func AwaitsOwnEvent(c *Controller, kind, namespace, name string) bool {
	ref := childRef(kind, namespace, name)
	c.own.mu.Lock()
	defer c.own.mu.Unlock()
	_, inFlight := c.own.inFlight[ref]
	_, written := c.own.written[ref]
	return inFlight || written
}
