// Package decode reads components strictly: YAML or JSON, unknown and
// duplicate fields refused with their paths, input size capped, a
// multi-document stream read document by document with each document's
// line and its size capped per document. It neither
// defaults nor validates (packages defaults and validation do).
package decode

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	sigsjson "sigs.k8s.io/json"
	"sigs.k8s.io/yaml"

	"github.com/tinyctl/tinyctl/api"
)

// MaxSize is the largest input, in bytes, that Component and Reader accept
// (256 KiB). For a stream (Decoder, All) it bounds each document, not the
// stream.
const MaxSize = 256 << 10

// ErrTooLarge is wrapped by the Error returned for input larger than
// MaxSize.
var ErrTooLarge = fmt.Errorf("input is larger than %d KiB", MaxSize>>10)

// Error lists why a document could not be decoded: a YAML or JSON
// syntax error, a value of the wrong type, unknown or duplicate fields (each
// named with its path, such as "spec.jobs.subject"), or ErrTooLarge. It
// matches api.ErrInvalid and each of Errs with errors.Is.
type Error struct {
	Errs []error
	// Partial is the component as decoded when the only problems were
	// unknown or duplicate fields (the rest of the document decoded
	// fine), so a caller can validate it too and report every problem at
	// once. It is nil otherwise.
	Partial *api.Component
}

// Error returns all problems: on one line when there is one, otherwise one
// line per problem.
func (e *Error) Error() string {
	if len(e.Errs) == 1 {
		return "decode component: " + e.Errs[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "decode component (%d problems):", len(e.Errs))
	for _, err := range e.Errs {
		b.WriteString("\n* ")
		b.WriteString(err.Error())
	}
	return b.String()
}

// Unwrap returns the individual problems.
func (e *Error) Unwrap() []error { return e.Errs }

// Is reports whether target is api.ErrInvalid.
func (e *Error) Is(target error) bool { return target == api.ErrInvalid }

// Component strictly decodes one component from YAML or JSON (JSON is YAML).
// Unknown and duplicate fields are errors, field names are case-sensitive,
// and input larger than MaxSize is refused. Component neither defaults nor
// validates: call Default, then Validate. On failure it returns a
// *Error.
func Component(data []byte) (api.Component, error) {
	if len(data) > MaxSize {
		return api.Component{}, &Error{Errs: []error{ErrTooLarge}}
	}
	return decodeDocument(data)
}

// Reader reads one component from r and decodes it as Component does. It
// reads at most MaxSize+1 bytes, so an oversized input fails fast. A read
// error is returned wrapped; a decoding problem as a *Error.
func Reader(r io.Reader) (api.Component, error) {
	data, err := readCapped(r)
	if err != nil {
		return api.Component{}, err
	}
	return decodeDocument(data)
}

// readCapped reads all of r, refusing more than MaxSize bytes.
func readCapped(r io.Reader) ([]byte, error) {
	data, err := io.ReadAll(io.LimitReader(r, MaxSize+1))
	if err != nil {
		return nil, fmt.Errorf("read component: %w", err)
	}
	if len(data) > MaxSize {
		return nil, &Error{Errs: []error{ErrTooLarge}}
	}
	return data, nil
}

// decodeDocument converts one YAML document to JSON and decodes it strictly.
// A JSON object (what tinyctl apply publishes) that decodes cleanly skips
// the conversion, which costs about 45 KB of garbage per component; any
// other input, and a JSON object with a problem, takes the YAML path, so
// that the errors are the same whichever way a document was written.
func decodeDocument(data []byte) (api.Component, error) {
	if c, ok := cleanJSON(data); ok {
		return c, nil
	}
	return viaYAML(data)
}

// viaYAML converts data from YAML to JSON and decodes it strictly.
func viaYAML(data []byte) (api.Component, error) {
	j, err := yaml.YAMLToJSONStrict(data)
	if err != nil {
		return api.Component{}, &Error{Errs: []error{err}}
	}
	if bytes.Equal(j, []byte("null")) {
		return api.Component{}, &Error{Errs: []error{errors.New("document is empty")}}
	}
	var c api.Component
	strict, err := sigsjson.UnmarshalStrict(j, &c)
	if err != nil {
		problems := everyProblem(j, componentType, "")
		if len(problems) == 0 { // not expected: everyProblem found what the decoder did
			problems = []error{typeProblem(err, "")}
		}
		return api.Component{}, &Error{Errs: problems}
	}
	if len(strict) > 0 {
		return api.Component{}, &Error{Errs: strict, Partial: &c}
	}
	return c, nil
}

// cleanJSON decodes data when it is a JSON object with no problem at all.
func cleanJSON(data []byte) (api.Component, bool) {
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' {
		return api.Component{}, false
	}
	var c api.Component
	strict, err := sigsjson.UnmarshalStrict(data, &c)
	return c, err == nil && len(strict) == 0
}

// egressProblems returns the problems of an egress at path that is neither
// a word nor an object (everyProblem walks into an object).
func egressProblems(err error, path string) []error {
	var ee *api.EgressError
	if !errors.As(err, &ee) {
		return []error{typeProblem(err, withDot(path))}
	}
	out := make([]error, 0, len(ee.Errs))
	for _, e := range ee.Errs {
		out = append(out, fmt.Errorf("%s: %w", path, e))
	}
	return out
}
