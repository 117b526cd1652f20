package api

import (
	"crypto/sha256"
	"encoding/hex"
)

// hashLength is the number of hex digits Hash returns (64 bits).
const hashLength = 16

// Canonical encodes c as the JSON stored in the spec bucket: compact, no
// trailing newline, struct fields in declaration order, map keys sorted,
// empty optional fields omitted, and <, > and & left unescaped (so "jobs.>"
// reads as written). A nil and an empty resources or placement (or an
// override's resources) encode the same way, as nothing. The same content always gives the same bytes, so a
// re-publish that changes nothing is detectable by comparing them.
//
// Canonical encodes c as given; it does not default. Publishers should store
// Canonical(Default(c)), so that the stored value shows every setting in
// force and writing a default explicitly is still a no-op. It returns an
// error only if encoding/json fails, which no Component value causes today.
func Canonical(c Component) ([]byte, error) {
	c = c.DeepCopy()
	c.Spec.Resources = nonEmptyResources(c.Spec.Resources)
	for i := range c.Spec.Overrides {
		c.Spec.Overrides[i].Resources = nonEmptyResources(c.Spec.Overrides[i].Resources)
	}
	if p := c.Spec.Placement; p != nil && len(p.Clusters) == 0 && p.ClusterSelector == nil {
		c.Spec.Placement = nil
	}
	return marshalCompact(c)
}

// Hash returns the first hashLength hex digits of the SHA-256 of
// Canonical(c): short enough for a label or annotation, long enough that two
// revisions of one component never collide in practice. Should Canonical
// ever fail, Hash hashes the error text instead, which still differs from the
// hash of every encodable component.
func Hash(c Component) string {
	b, err := Canonical(c)
	if err != nil {
		b = []byte("unencodable component: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:hashLength]
}

// nonEmptyResources is r, or nil when r holds nothing.
func nonEmptyResources(r *Resources) *Resources {
	if r != nil && len(r.Requests) == 0 && len(r.Limits) == 0 {
		return nil
	}
	return r
}
