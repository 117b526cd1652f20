// Package archtest holds no code: its tests check the shape of the whole
// module the way a maintainer reads it, on the type-checked source of every
// package. Only package apply calls a Kubernetes write verb, only package
// provision writes a Helm release; imports point
// one way; no package grows past a readable number of exports; the status
// model lives next to the Component, outside the NATS layer.
package archtest
