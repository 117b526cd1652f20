package validate

import (
	"fmt"
	"slices"
	"strings"

	"github.com/nats-io/nats-server/v2/server"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
)

// Tenancy says which subjects the components of each namespace may use,
// both to bind as jobs (spec.jobs.subjects) and to publish
// (spec.jobs.publish), so that one team's component cannot capture or
// forge another team's jobs. The zero value is the default: a component in
// namespace ns may use only subjects under "ns." (the pattern "ns.>").
type Tenancy struct {
	// Prefixes lists, for some namespaces, the subject patterns their
	// components may use instead of the default ("orders.>", say).
	Prefixes map[string][]string `json:"prefixes,omitempty"`
	// Off turns the check off: every namespace may use every subject (a
	// single-tenant cluster).
	Off bool `json:"off,omitempty"`
	// Egress says which addresses allow lists may not reach (the zero
	// value: the metadata ranges).
	Egress EgressReach `json:"egress,omitzero"`
}

// Allowed returns the subject patterns components of namespace may use.
func (t Tenancy) Allowed(namespace string) []string {
	if p, ok := t.Prefixes[namespace]; ok {
		return p
	}
	return []string{namespace + ".>"}
}

// Subjects reports every subject of c (defaulted) that its namespace may
// not use, with its field path.
func (t Tenancy) Subjects(c api.Component) field.ErrorList {
	if t.Off {
		return nil
	}
	ns := c.Metadata.Namespace
	allowed := t.Allowed(ns)
	var errs field.ErrorList
	jobs := field.NewPath("spec", "jobs")
	for _, list := range []struct {
		path     *field.Path
		subjects []string
	}{{jobs.Child("subjects"), c.Spec.Jobs.Subjects}, {jobs.Child("publish"), c.Spec.Jobs.Publish}} {
		for i, s := range list.subjects {
			if subjectProblem(s) != "" || within(s, allowed) {
				continue // a malformed subject is reported by Component
			}
			errs = append(errs, field.Forbidden(list.path.Index(i), fmt.Sprintf(
				"%q is outside the subjects namespace %s may use (%s)", s, ns, strings.Join(allowed, ", "))))
		}
	}
	return errs
}

// Producer checks the subjects a producer of namespace ns would publish
// jobs to: each a valid job subject that the namespace may use. It returns
// an error naming every subject that is not, or nil.
func (t Tenancy) Producer(ns string, subjects []string) error {
	if len(subjects) == 0 {
		return fmt.Errorf("a producer needs at least one subject")
	}
	var problems []string
	for _, s := range subjects {
		switch p := subjectProblem(s); {
		case p != "":
			problems = append(problems, fmt.Sprintf("%q: %s", s, p))
		case !t.Off && !within(s, t.Allowed(ns)):
			problems = append(problems, fmt.Sprintf("%q is outside the subjects namespace %s may use (%s)", s, ns, strings.Join(t.Allowed(ns), ", ")))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("producer subjects: %s", strings.Join(problems, "; "))
	}
	return nil
}

// within reports whether every subject s matches also matches one of the
// patterns.
func within(s string, patterns []string) bool {
	return slices.ContainsFunc(patterns, func(p string) bool { return server.SubjectMatchesFilter(s, p) })
}

// ParseTenancy reads namespace=pattern[,pattern...] entries (the form of
// `tinyctl serve --subject-prefixes`), or "off". A namespace given twice,
// an empty list or an invalid pattern is an error.
func ParseTenancy(entries []string) (Tenancy, error) {
	var t Tenancy
	for _, e := range entries {
		if e == "off" {
			t.Off = true
			continue
		}
		ns, list, ok := strings.Cut(e, "=")
		if !ok || ns == "" || list == "" {
			return Tenancy{}, fmt.Errorf("subject prefixes %q: want namespace=pattern[,pattern...]", e)
		}
		if _, dup := t.Prefixes[ns]; dup {
			return Tenancy{}, fmt.Errorf("subject prefixes: namespace %s given twice", ns)
		}
		patterns := strings.Split(list, ",")
		for _, p := range patterns {
			if problem := subjectProblem(p); problem != "" {
				return Tenancy{}, fmt.Errorf("subject prefixes of %s: %q: %s", ns, p, problem)
			}
		}
		if t.Prefixes == nil {
			t.Prefixes = map[string][]string{}
		}
		t.Prefixes[ns] = patterns
	}
	return t, nil
}

// Check is Normalize followed by t's checks of the subjects and of the
// egress addresses: the defaulted component, or an *InvalidError listing
// every problem of all.
func Check(c api.Component, t Tenancy) (api.Component, error) {
	d := defaults.Apply(c)
	errs := append(Component(d), t.Subjects(d)...)
	errs = append(errs, t.Egress.Egress(d)...)
	if err := AsError(errs); err != nil {
		return api.Component{}, err
	}
	return d, nil
}
