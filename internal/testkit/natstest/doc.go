// Package natstest gives tests a real nats-server with JetStream, embedded
// in the test process, in every auth mode (token, user/password, nkey,
// creds/JWT, TLS, mutual TLS), restartable on the same port and store, and
// the helpers that open the bus stores on it.
package natstest
