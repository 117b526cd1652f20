package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	yaml "go.yaml.in/yaml/v3"
	sigsyaml "sigs.k8s.io/yaml"
)

// Format is an output format selected with -o.
type Format string

// Output formats.
const (
	FormatTable Format = "table"
	FormatYAML  Format = "yaml"
	FormatJSON  Format = "json"
	// FormatName prints one component/NAMESPACE.NAME line per object.
	FormatName Format = "name"
	// FormatText is prose for a person (describe).
	FormatText Format = "text"
	// FormatWide is the table with more columns.
	FormatWide Format = "wide"
)

// ParseFormat returns s as one of allowed, or an error listing them.
func ParseFormat(s string, allowed ...Format) (Format, error) {
	names := make([]string, len(allowed))
	for i, f := range allowed {
		if f == FormatJSONPath && (s == string(f) || strings.HasPrefix(s, jsonPathPrefix)) {
			return parseJSONPath(s)
		}
		if string(f) == s {
			return f, nil
		}
		names[i] = string(f)
		if f == FormatJSONPath {
			names[i] = jsonPathPrefix + "TEMPLATE"
		}
	}
	return "", fmt.Errorf("unknown output format %q: use one of %s", s, strings.Join(names, ", "))
}

// MarshalJSON encodes v as indented JSON without escaping <, > and &, so
// subjects such as "jobs.>" read as written, and ends it with a newline.
func MarshalJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("encode json: %w", err)
	}
	return b.Bytes(), nil
}

// WriteJSON writes v to w as MarshalJSON encodes it.
func WriteJSON(w io.Writer, v any) error {
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}

// WriteYAML writes v to w as YAML, keeping the field order of its JSON
// encoding (struct order; map keys sorted).
func WriteYAML(w io.Writer, v any) error {
	j, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	y, err := JSONToYAML(j)
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}

// JSONToYAML converts one JSON value to block-style YAML, keeping the
// order of object keys and quoting strings only where YAML needs it.
func JSONToYAML(j []byte) ([]byte, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(j, &doc); err != nil {
		return nil, fmt.Errorf("json to yaml: %w", err)
	}
	plain(&doc)
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	enc.CompactSeqIndent()
	if err := enc.Encode(&doc); err != nil {
		return nil, fmt.Errorf("json to yaml: %w", err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("json to yaml: %w", err)
	}
	return b.Bytes(), nil
}

// plain drops the flow and quoting styles that parsing JSON gives every
// node, so the encoder writes block style, and keeps quotes only on the
// strings that would otherwise not read back as the same string.
func plain(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" && !readsAsString(n.Value) {
		n.Style = yaml.DoubleQuotedStyle
	}
	for _, c := range n.Content {
		plain(c)
	}
}

// readsAsString reports whether v, written unquoted, reads back as the
// string v with the YAML 1.1 parser tinyctl decodes with, which takes
// yes, on and off for booleans.
func readsAsString(v string) bool {
	var x any
	if err := sigsyaml.Unmarshal([]byte(v), &x); err != nil {
		return false
	}
	s, ok := x.(string)
	return ok && s == v
}
