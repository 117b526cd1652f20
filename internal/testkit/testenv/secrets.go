package testenv

import (
	"regexp"
	"testing"
)

// secretShapes match what must never reach a log line or an error
// message: nkey seeds (operator, account and user: "SO…", "SA…", "SU…"),
// JWTs, a creds file's armour and the tokens install generates.
var secretShapes = []*regexp.Regexp{
	regexp.MustCompile(`\bS[OAU][A-Z2-7]{50,}`),
	regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{20,}\.[A-Za-z0-9_-]{20,}`),
	regexp.MustCompile(`-----BEGIN (NATS|USER NKEY|.*PRIVATE KEY)`),
	regexp.MustCompile(`\btk[A-Z2-7]{40,}`),
}

// NoSecrets fails the test when text, the output of what, holds anything
// shaped like a seed, a JWT, a private key or a broker token, or any of
// the known secrets given.
func NoSecrets(tb testing.TB, what, text string, known ...string) {
	tb.Helper()
	for _, re := range secretShapes {
		if m := re.FindString(text); m != "" {
			tb.Errorf("%s shows a secret: %.12s… (matches %s)", what, m, re)
		}
	}
	for _, k := range known {
		if k != "" && regexp.MustCompile(regexp.QuoteMeta(k)).MatchString(text) {
			tb.Errorf("%s shows a known secret %.6s…", what, k)
		}
	}
}
