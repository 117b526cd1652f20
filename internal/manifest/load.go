package manifest

import (
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tinyctl/tinyctl/api/decode"
	"github.com/tinyctl/tinyctl/api/validate"

	"k8s.io/apimachinery/pkg/util/validation/field"
	sigsjson "sigs.k8s.io/json"

	"github.com/tinyctl/tinyctl/api"
)

// Problem is one reason a document cannot be published (or, in
// Set.Warnings, advice about one that can).
type Problem struct {
	// Source names the input (a path or StdinName).
	Source string
	// Document counts the source's non-empty documents from 1; 0 means the
	// problem concerns the whole source.
	Document int
	// Line is the line of Source where the document starts.
	Line int
	// Path is the field path, such as "spec.jobs.subjects[1]", or "".
	Path string
	// Message says what is wrong.
	Message string
}

// String renders "FILE: document N (line L): PATH: MESSAGE", leaving out
// the parts that are unknown.
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.Source)
	b.WriteString(": ")
	if p.Document > 0 {
		fmt.Fprintf(&b, "document %d (line %d): ", p.Document, p.Line)
	}
	if p.Path != "" {
		b.WriteString(p.Path)
		b.WriteString(": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Component is a document that passed decoding and validation.
type Component struct {
	// Component is defaulted and valid.
	api.Component
	// Key is its spec-bucket key and Canonical the bytes to store there.
	Key       string
	Canonical []byte
	// Where the document came from.
	Source   string
	Document int
	Line     int
}

// Set is what Load found in a list of sources.
type Set struct {
	// Components are in input order; nil whenever Problems is not empty.
	Components []Component
	// Warnings are api.Warnings of valid documents; they never block.
	Warnings []Problem
	// Problems are every decode and validation error of every document.
	Problems []Problem
}

// Options tune Load.
type Options struct {
	// Namespace, when not empty, is given to documents that name none; a
	// document that names another namespace is a problem (kubectl's rule
	// for -n).
	Namespace string
	// Tenancy says which subjects each namespace may use (the zero value:
	// only those under its own name).
	Tenancy validate.Tenancy
}

// Load reads every source document by document (decode.Decoder: each
// document capped at decode.MaxSize, a source at nothing), defaults and
// validates each with its subjects scoped by opts.Tenancy (validate.Check)
// and collects validate.Warnings. Two documents naming the same component
// are a problem too, and so is a source that cannot be read. When any
// problem is found the Set holds all of them and no components.
func Load(srcs []Source, opts Options) Set {
	var set Set
	seen := map[string]Problem{}
	for _, src := range srcs {
		if err := load(src, opts, seen, &set); err != nil {
			set.Problems = append(set.Problems, Problem{Source: src.Name, Message: err.Error()})
		}
	}
	if len(set.Problems) > 0 {
		set.Components, set.Warnings = nil, nil
	}
	return set
}

// load adds src's components, warnings and problems to set. It returns
// the error that stopped reading src.
func load(src Source, opts Options, seen map[string]Problem, set *Set) error {
	rc, err := src.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	dec := decode.NewDecoder(rc)
	for {
		d, err := dec.Next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		at := Problem{Source: src.Name, Document: d.Index + 1, Line: d.Line}
		c, problems := check(d, at, opts, d.Start)
		if len(problems) == 0 {
			problems = duplicate(seen, c.Key, at)
		}
		set.Problems = append(set.Problems, problems...)
		if len(problems) > 0 || len(set.Problems) > 0 {
			continue // nothing will be published: keep only the problems
		}
		set.Components = append(set.Components, c)
		for _, w := range validate.Warnings(c.Component) {
			set.Warnings = append(set.Warnings, at.with("", w))
		}
	}
}

// check decodes, defaults and validates one document.
// start is the file line where the document's text begins.
func check(d decode.Document, at Problem, opts Options, start int) (Component, []Problem) {
	if d.Err != nil {
		return Component{}, append(decodeProblems(d.Err, at, start), partialProblems(d.Err, at, opts)...)
	}
	return normalize(d.Component, at, opts)
}

// partialProblems validates what did decode when the only decode problems
// were unknown or duplicate fields, so one run reports every problem.
func partialProblems(err error, at Problem, opts Options) []Problem {
	var de *decode.Error
	if !errors.As(err, &de) || de.Partial == nil {
		return nil
	}
	_, problems := normalize(*de.Partial, at, opts)
	return problems
}

// normalize applies --namespace, defaults and validates c, and encodes it.
func normalize(c api.Component, at Problem, opts Options) (Component, []Problem) {
	if opts.Namespace != "" {
		switch c.Metadata.Namespace {
		case "":
			c.Metadata.Namespace = opts.Namespace
		case opts.Namespace:
		default:
			fe := field.Invalid(field.NewPath("metadata", "namespace"), c.Metadata.Namespace,
				fmt.Sprintf("does not match the namespace %q given with --namespace", opts.Namespace))
			return Component{}, []Problem{at.with(fe.Field, fe.ErrorBody())}
		}
	}
	n, err := validate.Check(c, opts.Tenancy)
	if err != nil {
		return Component{}, validationProblems(err, at)
	}
	b, err := api.Canonical(n)
	if err != nil {
		return Component{}, []Problem{at.with("", err.Error())}
	}
	return Component{Component: n, Key: api.KeyOf(n), Canonical: b, Source: at.Source, Document: at.Document, Line: at.Line}, nil
}

// duplicate records key's first location, or reports it as a problem.
func duplicate(seen map[string]Problem, key string, at Problem) []Problem {
	first, ok := seen[key]
	if !ok {
		seen[key] = at
		return nil
	}
	fe := field.Duplicate(field.NewPath("metadata", "name"), key)
	return []Problem{at.with(fe.Field, fmt.Sprintf("%s: also in %s document %d", fe.ErrorBody(), first.Source, first.Document))}
}

func (p Problem) with(path, msg string) Problem {
	p.Path, p.Message = path, msg
	return p
}

// decodeProblems lists a decode error's problems, with unknown and
// duplicate fields split into path and message and YAML syntax errors
// pointing at lines of the file.
func decodeProblems(err error, at Problem, start int) []Problem {
	var de *decode.Error
	if !errors.As(err, &de) {
		return []Problem{at.with("", err.Error())}
	}
	out := make([]Problem, 0, len(de.Errs))
	for _, e := range de.Errs {
		var fe sigsjson.FieldError
		if errors.As(e, &fe) {
			msg := strings.TrimSuffix(fe.Error(), " "+strconv.Quote(fe.FieldPath()))
			out = append(out, at.with(fe.FieldPath(), msg))
			continue
		}
		out = append(out, at.with("", fileLines(e.Error(), start)))
	}
	return out
}

// validationProblems lists every field error of a validation failure.
func validationProblems(err error, at Problem) []Problem {
	var ie *validate.InvalidError
	if !errors.As(err, &ie) {
		return []Problem{at.with("", err.Error())}
	}
	out := make([]Problem, 0, len(ie.Errors))
	for _, fe := range ie.Errors {
		out = append(out, at.with(fe.Field, fe.ErrorBody()))
	}
	return out
}
