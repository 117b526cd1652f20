package validate

import (
	"github.com/nats-io/nats-server/v2/server"

	"fmt"
	"strings"
	"unicode"
)

// subjectProblem returns why s cannot be a job subject, or "" when it can.
// A job subject is a subject nats-server accepts (server.IsValidSubject,
// the authority), held to a stricter grammar so that the message can say
// what is wrong: tokens separated by ".", none empty, no whitespace, "*"
// and ">" only as whole tokens (nats-server takes "jobs.x*" as a literal
// token, which is never what a spec means) and ">" only last. tinyctl also
// requires the first token to be a literal that is not reserved: a leading
// wildcard ("*.x", "*.>", ">") would capture other components' jobs, and
// subjects starting with "$" ($JS, $KV, $O, $SYS, ...) or _INBOX belong to
// NATS itself, and those under "tinyctl" to tinyctl (api/deadletter).
func subjectProblem(s string) string {
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return "must not contain whitespace"
	}
	if !server.IsValidSubject(s) {
		return "is not a NATS subject"
	}
	tokens := strings.Split(s, ".")
	for i, t := range tokens {
		if p := tokenProblem(t, i == len(tokens)-1); p != "" {
			return p
		}
	}
	switch first := tokens[0]; {
	case first == "*" || first == ">":
		return "the first token must be literal: a subject that starts with a wildcard would capture other components' jobs"
	case strings.HasPrefix(first, "$"):
		return fmt.Sprintf("subjects under %q are reserved for NATS ($JS, $KV, $O, $SYS, ...)", first)
	case strings.EqualFold(first, "_INBOX"):
		return "subjects under _INBOX are reserved for request replies"
	case first == "tinyctl":
		return "subjects under tinyctl are reserved for tinyctl's own (dead letters, the controller's requests)"
	}
	return ""
}

// tokenProblem checks one token of a subject.
func tokenProblem(t string, last bool) string {
	switch {
	case t == "":
		return "must not contain empty tokens (a leading, trailing or doubled '.')"
	case t == ">" && !last:
		return "'>' may only be the last token"
	case t != "*" && t != ">" && strings.ContainsAny(t, "*>"):
		return "'*' and '>' must be whole tokens"
	}
	return ""
}

// subjectsCollide reports whether some subject matches both a and b, both
// valid subjects: nats-server's own test, by which it refuses a stream
// whose subjects collide (a message would be stored once for each).
func subjectsCollide(a, b string) bool { return server.SubjectsCollide(a, b) }
