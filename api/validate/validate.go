package validate

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/defaults"
)

// Reserved label and annotation keys: tinyctl sets them on every child it
// creates, so a component may not.
const (
	ReservedKeyDomain = "tinyctl.io"
	ManagedByLabel    = "app.kubernetes.io/managed-by"
)

// Validate checks a component that has been through Default and returns
// every problem it finds, each with its field path (for example
// "spec.jobs.subjects[1]"), in field order. An empty list means the
// component is valid. Validate never panics and never stops at the first
// problem; turn its result into an error with AsError.
func Component(c api.Component) field.ErrorList {
	var errs field.ErrorList
	if c.APIVersion != api.APIVersion {
		errs = append(errs, field.NotSupported(field.NewPath("apiVersion"), c.APIVersion, []string{api.APIVersion}))
	}
	if c.Kind != api.Kind {
		errs = append(errs, field.NotSupported(field.NewPath("kind"), c.Kind, []string{api.Kind}))
	}
	errs = append(errs, validateMetadata(c.Metadata, field.NewPath("metadata"))...)
	errs = append(errs, validateSpec(c.Spec, field.NewPath("spec"))...)
	return errs
}

// InvalidError is a component that failed validation. It matches api.ErrInvalid
// with errors.Is.
type InvalidError struct {
	Errors field.ErrorList
}

// Error lists every problem, kubectl style: on one line when there is one,
// otherwise one "* path: problem" line each.
func (e *InvalidError) Error() string {
	if len(e.Errors) == 1 {
		return "invalid component: " + e.Errors[0].Error()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "invalid component (%d problems):", len(e.Errors))
	for _, fe := range e.Errors {
		b.WriteString("\n* ")
		b.WriteString(fe.Error())
	}
	return b.String()
}

// Is reports whether target is api.ErrInvalid.
func (e *InvalidError) Is(target error) bool { return target == api.ErrInvalid }

// AsError returns an *InvalidError holding errs, or nil when errs is
// empty, so that `if err := AsError(Component(c)); err != nil` reads
// naturally.
func AsError(errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return &InvalidError{Errors: errs}
}

// Normalize defaults c and validates the result. It returns the defaulted
// component, or an *InvalidError listing every problem.
func Normalize(c api.Component) (api.Component, error) {
	d := defaults.Apply(c)
	if err := AsError(Component(d)); err != nil {
		return api.Component{}, err
	}
	return d, nil
}

func validateMetadata(m api.Metadata, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	switch {
	case m.Name == "":
		errs = append(errs, field.Required(path.Child("name"), "a DNS-1123 label such as pdf-extractor"))
	case len(m.Name) > api.MaxNameLength:
		errs = append(errs, field.TooLong(path.Child("name"), m.Name, api.MaxNameLength))
	default:
		errs = append(errs, dns1123Label(path.Child("name"), m.Name)...)
	}
	if m.Namespace == "" {
		errs = append(errs, field.Required(path.Child("namespace"), "a DNS-1123 label (Default sets \"default\")"))
	} else {
		errs = append(errs, dns1123Label(path.Child("namespace"), m.Namespace)...)
	}
	errs = append(errs, validateLabelMap(m.Labels, path.Child("labels"))...)
	errs = append(errs, reservedKeys(m.Labels, path.Child("labels"))...)
	errs = append(errs, controllerLabels(withoutReserved(m.Labels), path.Child("labels"))...)
	errs = append(errs, validateAnnotationMap(m.Annotations, path.Child("annotations"))...)
	errs = append(errs, reservedKeys(withoutDevRun(m.Annotations), path.Child("annotations"))...)
	return errs
}

// withoutReserved is labels less the keys reservedKeys reports, so that a
// key is reported once.
func withoutReserved(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		if !isReservedKey(k) {
			out[k] = v
		}
	}
	return out
}

// withoutDevRun is annotations less api.AnnotationDevRun, the one tinyctl
// key a user sets (for `tinyctl dev`, never on a child).
func withoutDevRun(annotations map[string]string) map[string]string {
	if _, ok := annotations[api.AnnotationDevRun]; !ok {
		return annotations
	}
	out := maps.Clone(annotations)
	delete(out, api.AnnotationDevRun)
	return out
}

// dns1123Label reports value if it is not a DNS-1123 label.
func dns1123Label(path *field.Path, value string) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Label(value) {
		errs = append(errs, field.Invalid(path, value, msg))
	}
	return errs
}

// validateLabelMap checks Kubernetes label keys and values in key order, so
// that the problems come out in the same order every time.
func validateLabelMap(labels map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		errs = append(errs, metav1validation.ValidateLabels(map[string]string{k: labels[k]}, path)...)
	}
	return errs
}

// validateAnnotationMap checks annotation keys in key order, then their total
// size.
func validateAnnotationMap(annotations map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(annotations) {
		errs = append(errs, apivalidation.ValidateAnnotations(map[string]string{k: ""}, path)...)
	}
	if apivalidation.ValidateAnnotationsSize(annotations) != nil {
		errs = append(errs, field.TooLong(path, "", apivalidation.TotalAnnotationSizeLimitB))
	}
	return errs
}

// reservedKeys reports the keys of m that tinyctl reserves for itself.
func reservedKeys(m map[string]string, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(m) {
		if isReservedKey(k) {
			errs = append(errs, field.Forbidden(path.Key(k),
				fmt.Sprintf("keys under %s/ and %s are set by tinyctl", ReservedKeyDomain, ManagedByLabel)))
		}
	}
	return errs
}

// isReservedKey reports whether a label or annotation key belongs to
// tinyctl: app.kubernetes.io/managed-by, or any key whose prefix is
// tinyctl.io or one of its subdomains.
func isReservedKey(k string) bool {
	if k == ManagedByLabel {
		return true
	}
	prefix, _, ok := strings.Cut(strings.ToLower(k), "/")
	return ok && (prefix == ReservedKeyDomain || strings.HasSuffix(prefix, "."+ReservedKeyDomain))
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
