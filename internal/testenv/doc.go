// Package testenv gives tests the real parts tinyctl talks to: an embedded
// nats-server with JetStream (every auth mode, restartable on the same port
// and store) and a real kube-apiserver backed by etcd, started once per test
// package from TestMain. It also builds the tinyctl binary, runs `tinyctl
// serve` processes against those (Serve), and holds the polling helper
// tests use instead of sleeping.
package testenv
