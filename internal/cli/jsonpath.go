package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"

	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/client-go/util/jsonpath"
)

// FormatJSONPath is -o jsonpath=TEMPLATE: the fields a Kubernetes JSONPath
// template picks out of the -o json output, as kubectl prints them.
const FormatJSONPath Format = "jsonpath"

// jsonPathPrefix starts a jsonpath format with its template.
const jsonPathPrefix = string(FormatJSONPath) + "="

// Template is a jsonpath format's template, and whether f is one.
func (f Format) Template() (string, bool) { return strings.CutPrefix(string(f), jsonPathPrefix) }

// Kind is f without its template: FormatJSONPath for every jsonpath
// format, f itself otherwise.
func (f Format) Kind() Format {
	if _, ok := f.Template(); ok {
		return FormatJSONPath
	}
	return f
}

// parseJSONPath checks s ("jsonpath=TEMPLATE") and returns it as a Format.
func parseJSONPath(s string) (Format, error) {
	tmpl, _ := strings.CutPrefix(s, jsonPathPrefix)
	if tmpl == "" || s == string(FormatJSONPath) {
		return "", errors.New("-o jsonpath needs a template, as kubectl's: -o jsonpath='{.items[*].key}'")
	}
	if _, err := newJSONPath(tmpl); err != nil {
		return "", err
	}
	return Format(s), nil
}

func newJSONPath(tmpl string) (*jsonpath.JSONPath, error) {
	// A field the output lacks prints nothing, as in kubectl (whose
	// --allow-missing-template-keys is true by default): an optional
	// field, or a list with no items, is not an error.
	j := jsonpath.New("output").AllowMissingKeys(true)
	if err := j.Parse(tmpl); err != nil {
		return nil, fmt.Errorf("-o jsonpath template %q: %w", tmpl, err)
	}
	return j, nil
}

// WriteData writes v as f, which is FormatJSON, FormatYAML or a jsonpath
// format. A jsonpath template is run over v's JSON (so its field names are
// the JSON's; a field that is absent prints nothing) and its output ends
// with a newline.
func WriteData(w io.Writer, f Format, v any) error {
	tmpl, ok := f.Template()
	switch {
	case f == FormatYAML:
		return WriteYAML(w, v)
	case !ok:
		return WriteJSON(w, v)
	}
	j, err := newJSONPath(tmpl)
	if err != nil {
		return err
	}
	b, err := MarshalJSON(v)
	if err != nil {
		return err
	}
	// Numbers decode as int64 where they are whole, so a revision of a
	// million prints as 1000000, not 1e+06.
	var data any
	if err := utiljson.Unmarshal(b, &data); err != nil {
		return err
	}
	var out bytes.Buffer
	if err := j.Execute(&out, data); err != nil {
		return fmt.Errorf("-o jsonpath template %q: %w", tmpl, err)
	}
	if out.Len() > 0 && !bytes.HasSuffix(out.Bytes(), []byte("\n")) {
		out.WriteByte('\n')
	}
	_, err = w.Write(out.Bytes())
	return err
}
