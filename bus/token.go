package bus

import "strings"

// IsToken reports whether s can be one token of a NATS subject: not empty,
// no '.', wildcard or whitespace. Cluster names, JetStream domains and the
// parts of KV keys must be.
func IsToken(s string) bool {
	return s != "" && !strings.ContainsAny(s, ".*> \t\r\n")
}
