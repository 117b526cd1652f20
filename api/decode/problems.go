package decode

import (
	"bytes"
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	sigsjson "sigs.k8s.io/json"

	"github.com/tinyctl/tinyctl/api"
)

// The JSON decoder stops at the first value of the wrong type, or at an
// egress it cannot read, and then forgets the unknown fields it had found.
// everyProblem is the slow path taken only for such a document: it decodes
// each object field by field, each list item by item, so that one wrong
// value hides none of the others.

var (
	componentType   = reflect.TypeFor[api.Component]()
	egressType      = reflect.TypeFor[api.Egress]()
	egressShapeType = reflect.TypeFor[egressShape]()
)

// egressShape is the object form of an egress, {allow: [...]}, for
// everyProblem to walk into; api.Egress decodes itself.
type egressShape struct {
	Allow []api.EgressRule `json:"allow"`
}

// everyProblem decodes data (valid JSON) into a new value of type t and
// returns every problem found, each named with its path under path (""
// for the document).
func everyProblem(data []byte, t reflect.Type, path string) []error {
	strict, err := sigsjson.UnmarshalStrict(data, reflect.New(t).Interface())
	if err == nil {
		return under(strict, path)
	}
	first := firstByte(data)
	switch {
	case t == egressType && first == '{':
		return everyProblem(data, egressShapeType, path)
	case t == egressType:
		return egressProblems(err, path)
	case t.Kind() == reflect.Pointer:
		return everyProblem(data, t.Elem(), path)
	case t.Kind() == reflect.Struct && first == '{':
		return fieldProblems(data, t, path)
	case t.Kind() == reflect.Map && first == '{':
		return eachValue(data, path, func(key string) (reflect.Type, bool) { return t.Elem(), true })
	case t.Kind() == reflect.Slice && first == '[':
		return itemProblems(data, t.Elem(), path)
	}
	return []error{typeProblem(err, withDot(path))}
}

// fieldProblems returns the problems of each field of the object data, and
// names each field that t does not have.
func fieldProblems(data []byte, t reflect.Type, path string) []error {
	fields := make(map[string]reflect.Type, t.NumField())
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
		case name == "":
			fields[f.Name] = f.Type // api's types embed no structs
		default:
			fields[name] = f.Type
		}
	}
	return eachValue(data, path, func(key string) (reflect.Type, bool) {
		ft, ok := fields[key]
		return ft, ok
	})
}

// eachValue returns the problems of each value of the object data, in the
// order of its keys, with the type typeOf gives the key; a key typeOf does
// not know is an unknown field.
func eachValue(data []byte, path string, typeOf func(key string) (reflect.Type, bool)) []error {
	var values map[string]json.RawMessage
	if err := json.Unmarshal(data, &values); err != nil {
		return []error{err}
	}
	var out []error
	for _, key := range slices.Sorted(maps.Keys(values)) {
		if t, ok := typeOf(key); ok {
			out = append(out, everyProblem(values[key], t, withDot(path)+key)...)
		} else {
			out = append(out, &unknownField{path: withDot(path) + key})
		}
	}
	return out
}

// itemProblems returns the problems of each item of the list data.
func itemProblems(data []byte, t reflect.Type, path string) []error {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return []error{err}
	}
	var out []error
	for i, item := range items {
		out = append(out, everyProblem(item, t, path+"["+strconv.Itoa(i)+"]")...)
	}
	return out
}

// unknownField is an unknown field found by everyProblem, in the form of
// the strict decoder's own (a sigsjson.FieldError), so that readers that
// split a problem into path and message see both paths alike.
type unknownField struct{ path string }

func (u *unknownField) Error() string            { return "unknown field " + strconv.Quote(u.path) }
func (u *unknownField) FieldPath() string        { return u.path }
func (u *unknownField) SetFieldPath(path string) { u.path = path }

var _ sigsjson.FieldError = (*unknownField)(nil)

// under puts path in front of the field paths of strict decoding errors.
func under(strict []error, path string) []error {
	if path == "" {
		return strict
	}
	for _, e := range strict {
		if fe, ok := e.(sigsjson.FieldError); ok && strings.HasPrefix(fe.FieldPath(), "[") {
			fe.SetFieldPath(path + fe.FieldPath())
		} else if ok {
			fe.SetFieldPath(path + "." + fe.FieldPath())
		}
	}
	return strict
}

// withDot returns path followed by a dot, or "" for the document.
func withDot(path string) string {
	if path == "" {
		return ""
	}
	return path + "."
}

// firstByte returns the first byte of data that is not white space.
func firstByte(data []byte) byte {
	if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 {
		return t[0]
	}
	return 0
}
