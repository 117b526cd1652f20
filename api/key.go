package api

import (
	"errors"
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// MaxNameLength is the longest component name. Every name tinyctl derives
// from it must fit in 63 characters, the tightest being the HPA that KEDA
// names "keda-hpa-<name>".
const MaxNameLength = 52

// ErrInvalid matches, with errors.Is, every error that says a component is
// malformed or invalid (a decode.Error or a validate.InvalidError): retrying
// with the same input cannot succeed.
var ErrInvalid = errors.New("invalid component")

// ParseKey splits a spec-bucket key "<namespace>.<name>" into its parts.
// Both are DNS-1123 labels, which hold no dots, so the split is unambiguous.
// It returns an error when key is not of that form.
func ParseKey(key string) (namespace, name string, err error) {
	namespace, name, ok := strings.Cut(key, ".")
	if !ok {
		return "", "", fmt.Errorf("component key %q: want <namespace>.<name>", key)
	}
	for _, part := range []string{namespace, name} {
		if msgs := validation.IsDNS1123Label(part); len(msgs) > 0 {
			return "", "", fmt.Errorf("component key %q: %q %s", key, part, msgs[0])
		}
	}
	if len(name) > MaxNameLength {
		return "", "", fmt.Errorf("component key %q: name is longer than %d characters", key, MaxNameLength)
	}
	return namespace, name, nil
}

// KeyOf returns the spec-bucket key of c, which must have been defaulted
// (an empty namespace gives a key that ParseKey refuses).
func KeyOf(c Component) string { return Key(c.Metadata.Namespace, c.Metadata.Name) }

// CheckKey reports an error when c, defaulted, is not the component that key
// names: a value stored under another component's key is refused rather
// than applied to the wrong objects. The error matches ErrInvalid.
func CheckKey(key string, c Component) error {
	if got := KeyOf(c); got != key {
		return fmt.Errorf("%w: stored under key %q but names %q", ErrInvalid, key, got)
	}
	return nil
}
