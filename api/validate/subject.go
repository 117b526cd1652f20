package validate

import (
	"fmt"
	"strings"
	"unicode"
)

// subjectProblem returns why s cannot be a job subject, or "" when it can.
// A job subject is a NATS subject: tokens separated by ".", none empty, no
// whitespace, "*" and ">" only as whole tokens and ">" only last. On top of
// NATS' own grammar, tinyctl requires the first token to be a literal that
// is not reserved: a leading wildcard ("*.x", "*.>", ">") would capture
// other components' jobs, and subjects starting with "$" ($JS, $KV, $O,
// $SYS, ...) or _INBOX belong to NATS itself.
func subjectProblem(s string) string {
	if strings.IndexFunc(s, unicode.IsSpace) >= 0 {
		return "must not contain whitespace"
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
// valid subjects. NATS refuses a stream whose subjects collide, since a
// message would be stored once for each.
func subjectsCollide(a, b string) bool {
	ta, tb := strings.Split(a, "."), strings.Split(b, ".")
	for i := 0; i < len(ta) && i < len(tb); i++ {
		x, y := ta[i], tb[i]
		switch {
		case x == ">" || y == ">":
			return true
		case x == "*" || y == "*" || x == y:
			continue
		default:
			return false
		}
	}
	return len(ta) == len(tb)
}
