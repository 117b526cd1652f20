package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	sigsjson "sigs.k8s.io/json"
)

// egressObject is the object form of Egress: {"allow": [...]}.
type egressObject struct {
	Allow []EgressRule `json:"allow"`
}

// EgressError carries the problems found while decoding an Egress. Its
// field paths are relative to the egress value; package decode prefixes
// them with spec.egress.
type EgressError struct {
	Errs []error
}

// Error joins the problems.
func (e *EgressError) Error() string { return errors.Join(e.Errs...).Error() }

// IsZero reports whether e is unset. Together with the omitzero tag on
// Spec.Egress it keeps an unset egress out of the encoded component.
func (e Egress) IsZero() bool { return e.Mode == "" && len(e.Allow) == 0 }

// MarshalJSON encodes e in the shape a user writes: the mode as a JSON string
// ("none", "cluster", "internet"), or {"allow":[...]} when Mode is
// EgressAllow. An unset Egress encodes as null. Allow rules are encoded only
// in the allow form; under any other mode they are dropped (Validate rejects
// that combination). It never fails.
func (e Egress) MarshalJSON() ([]byte, error) {
	switch e.Mode {
	case "":
		return []byte("null"), nil
	case EgressAllow:
		allow := e.Allow
		if allow == nil {
			allow = []EgressRule{}
		}
		return marshalCompact(egressObject{Allow: allow})
	default:
		return marshalCompact(e.Mode)
	}
}

// UnmarshalJSON decodes either shape of an egress. A string is kept in Mode
// as written, so that Validate can name an unknown word with its path. An
// object must have only the allow field (unknown fields are errors) and sets
// Mode to EgressAllow. null leaves e unchanged. Any other JSON value is an
// error.
func (e *Egress) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	switch {
	case bytes.Equal(data, []byte("null")):
		return nil
	case len(data) > 0 && data[0] == '"':
		var mode string
		if err := json.Unmarshal(data, &mode); err != nil {
			return &EgressError{Errs: []error{err}}
		}
		*e = Egress{Mode: mode}
		return nil
	case len(data) > 0 && data[0] == '{':
		return e.unmarshalObject(data)
	default:
		return &EgressError{Errs: []error{fmt.Errorf(
			"must be one of %q, %q, %q or an object {allow: [...]}",
			EgressNone, EgressCluster, EgressInternet)}}
	}
}

func (e *Egress) unmarshalObject(data []byte) error {
	var obj egressObject
	strict, err := sigsjson.UnmarshalStrict(data, &obj)
	if err != nil {
		return &EgressError{Errs: []error{err}}
	}
	if len(strict) > 0 {
		return &EgressError{Errs: strict}
	}
	*e = Egress{Mode: EgressAllow, Allow: obj.Allow}
	return nil
}

// marshalCompact encodes v as compact JSON without escaping <, > and &, so
// that NATS subjects such as "jobs.>" stay readable in the stored value.
func marshalCompact(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
