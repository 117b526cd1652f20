// Command tinyctl publishes worker components into a NATS JetStream KV bucket
// and reconciles them into Kubernetes. main only wires commands, flags and
// exit codes; the work happens in the packages it calls.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
