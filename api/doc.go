// Package api defines the Component, tinyctl's unit of deployment: a queue
// worker image plus the NATS job subjects it consumes, its scaling limits and
// its egress posture. It decodes components strictly, fills defaults,
// validates every field with its path, and encodes them canonically so that a
// no-op re-publish is detectable.
package api
