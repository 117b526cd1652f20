package main

import "testing"

// TestFleetCommandsRefuseBadNamesBeforeConnecting: a cluster or domain
// name that cannot be a subject token is a usage error, with no NATS.
func TestFleetCommandsRefuseBadNamesBeforeConnecting(t *testing.T) {
	u := &user{t: t, home: t.TempDir()}
	for _, args := range [][]string{
		{"fleet", "join", "eu.1"},
		{"fleet", "join", "eu-1", "--domain", "a b"},
		{"fleet", "leave", "eu>"},
	} {
		r := u.run(append(args, "--nats-url", "nats://127.0.0.1:1")...)
		expect(t, r, exitUsage, nil, []string{"want one NATS subject token"})
	}
}
