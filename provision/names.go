package provision

import "strings"

// MaxReleaseName is the longest Helm release name: Helm appends suffixes
// to it in the names of the objects it stores.
const MaxReleaseName = 53

// SanitizeResourceName turns s into an RFC 1123 label usable as a Helm
// release or Kubernetes object name: lower case; every run of characters
// other than a-z, 0-9 and '-' becomes one '-'; no leading or trailing '-';
// at most MaxReleaseName characters. "tinysystems/http-module-v0" becomes
// "tinysystems-http-module-v0". It returns "" when s has no usable
// character.
func SanitizeResourceName(s string) string {
	var b strings.Builder
	pendingDash := false
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			if pendingDash && b.Len() > 0 && r != '-' && !strings.HasSuffix(b.String(), "-") {
				b.WriteByte('-')
			}
			pendingDash = false
			b.WriteRune(r)
			continue
		}
		pendingDash = true
	}
	out := strings.Trim(b.String(), "-")
	if len(out) > MaxReleaseName {
		out = strings.TrimRight(out[:MaxReleaseName], "-")
	}
	return out
}
