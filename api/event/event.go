// Package event is what a controller announces about a component when it
// changes something or its conditions move: the wire type of a NATS
// message on Subject, kept in the events stream, and the names of both.
// Its JSON form is documented in docs/events.md; readers ignore fields
// they do not know, so fields may be added.
package event

import (
	"strings"
	"time"
	"unicode/utf8"
)

// Event is one thing a cluster's controller did to a component, or found
// about it, and why.
type Event struct {
	// Time is when the controller recorded it (UTC).
	Time time.Time `json:"time"`
	// Cluster is the controller's cluster name.
	Cluster string `json:"cluster"`
	// Component is the spec key, "<namespace>.<name>".
	Component string `json:"component"`
	// Revision is the spec revision the controller was reconciling (0
	// when the component was removed).
	Revision uint64 `json:"revision,omitempty"`
	// Type is Normal or Warning, as a Kubernetes Event's.
	Type string `json:"type"`
	// Reason is one CamelCase word a reader may switch on: an action on a
	// child (Created, Configured, Pruned, ...), a condition's reason
	// (Ready, CrashLoopBackOff, InvalidSpec, ...) or Removed / Unplaced.
	Reason string `json:"reason"`
	// Object is the child the event is about, "<Kind>/<name>" (empty:
	// the component as a whole).
	Object string `json:"object,omitempty"`
	// Message says what happened in a sentence.
	Message string `json:"message"`
}

// Types of an Event.
const (
	Normal  = "Normal"
	Warning = "Warning"
)

// Stream is the JetStream stream that keeps recent events of one cluster
// (or of a server's whole domain): it captures Subjects + ".>".
const Stream = "tinyctl-events"

// Subjects starts every event subject.
const Subjects = "tinyctl.events"

// Subject is where cluster's controller publishes the events of component
// ns/name: "tinyctl.events.<cluster>.<namespace>.<name>". Each part is one
// subject token (a cluster name and a component's namespace and name hold
// no dots), so a subscriber filters by any of them with '*'.
func Subject(cluster, ns, name string) string {
	return strings.Join([]string{Subjects, cluster, ns, name}, ".")
}

// Filter is the subject that selects the events of namespace ns (all: "")
// and name (all: ""), from every cluster.
func Filter(ns, name string) string {
	return Subject("*", orAll(ns), orAll(name))
}

func orAll(s string) string {
	if s == "" {
		return "*"
	}
	return s
}

// Key returns the spec key of the component e is about, split.
func (e Event) Key() (ns, name string) {
	ns, name, _ = strings.Cut(e.Component, ".")
	return ns, name
}

// Shorten cuts message to at most n bytes (n > 3), on a character
// boundary, ending in "…" when it was cut: the events stream and
// Kubernetes Events each limit how long a message may be.
func Shorten(message string, n int) string {
	if len(message) <= n {
		return message
	}
	const ellipsis = "…"
	cut := n - len(ellipsis)
	for cut > 0 && !utf8.RuneStart(message[cut]) {
		cut--
	}
	return message[:cut] + ellipsis
}
