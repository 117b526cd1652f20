package decode

import (
	"errors"
	"regexp"
	"strings"
)

// The JSON decoder reports a value of the wrong type as, for example,
// "json: cannot unmarshal string into Go struct field Spec.spec.replicas of
// type int32". Its error type is internal to sigs.k8s.io/json, so
// typeProblem rewrites the text into "spec.replicas: must be an integer, not
// a string" and keeps any message it does not recognise as it is.
var (
	fieldTypeErrorRE = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go struct field [A-Za-z0-9_]+\.(\S+) of type (\S+)$`)
	valueTypeErrorRE = regexp.MustCompile(`^json: cannot unmarshal (.+) into Go value of type (\S+)$`)
)

// typeProblem returns err in the user's terms when it is a type error.
func typeProblem(err error, pathPrefix string) error {
	msg := err.Error()
	if m := fieldTypeErrorRE.FindStringSubmatch(msg); m != nil {
		return errors.New(pathPrefix + m[2] + ": must be " + goTypeWords(m[3]) + ", not " + jsonValueWords(m[1]))
	}
	if m := valueTypeErrorRE.FindStringSubmatch(msg); m != nil {
		what := "the document"
		if pathPrefix != "" {
			what = strings.TrimSuffix(pathPrefix, ".")
		}
		return errors.New(what + ": must be " + goTypeWords(m[2]) + ", not " + jsonValueWords(m[1]))
	}
	return err
}

// goTypeWords names the kind of value a Go type takes in YAML.
func goTypeWords(t string) string {
	t = strings.TrimPrefix(t, "*")
	switch {
	case strings.HasPrefix(t, "[]"):
		return "a list"
	case strings.HasPrefix(t, "map["):
		return "an object"
	case strings.HasPrefix(t, "int") || strings.HasPrefix(t, "uint"):
		return "an integer"
	case t == "string" || t == "api.Duration":
		return "a string"
	case t == "bool":
		return "true or false"
	default:
		return "an object"
	}
}

// jsonValueWords names a JSON value as the decoder describes it ("number",
// "number 1.5", "string", "bool", "array", "object").
func jsonValueWords(v string) string {
	switch kind, detail, _ := strings.Cut(v, " "); kind {
	case "number":
		if detail != "" {
			return "the number " + detail
		}
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "array":
		return "a list"
	case "object":
		return "an object"
	default:
		return v
	}
}
