// Package testenv gives tests a real kube-apiserver backed by etcd, started
// once per test package from TestMain, with its audit log for counting
// writes; it builds the tinyctl binary and runs `tinyctl serve` processes
// (Serve), and holds the polling helper tests use instead of sleeping. The
// NATS side is package natstest.
package testenv
