package overrides

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
)

// origin is where a field's value on this cluster comes from: the path of
// the override that set it (nil: the base spec) and the value as text.
type origin struct {
	path  *field.Path
	value string
}

// merger merges the overrides that select one cluster into spec, keeping
// the origin of every field it sets (keyed "image", "env[NAME]",
// "resources.limits[memory]", ...) to report conflicts with both paths.
type merger struct {
	spec    *api.Spec
	cluster string
	origins map[string]origin
	errs    field.ErrorList
}

func (m *merger) merge(o api.Override, path *field.Path) {
	if o.Image != "" && m.take("image", path.Child("image"), o.Image) {
		m.spec.Image = o.Image
	}
	if o.Replicas != nil && m.take("replicas", path.Child("replicas"), itoa(*o.Replicas)) {
		m.spec.Replicas = ptr(*o.Replicas)
	}
	m.mergeScaling(o, path)
	for j, e := range o.Env {
		if m.take("env["+e.Name+"]", path.Child("env").Index(j), envText(e)) {
			m.setEnv(e)
		}
	}
	if r := o.Resources; r != nil {
		m.mergeQuantities("requests", r.Requests, path.Child("resources", "requests"))
		m.mergeQuantities("limits", r.Limits, path.Child("resources", "limits"))
	}
	if o.Suspend != nil && m.take("suspend", path.Child("suspend"), strconv.FormatBool(*o.Suspend)) {
		m.spec.Suspend = *o.Suspend
	}
	m.mergeScheduling(o, path)
}

// mergeScheduling merges an override's node selector (key by key) and
// replaces the tolerations and the priority class.
func (m *merger) mergeScheduling(o api.Override, path *field.Path) {
	for _, k := range slices.Sorted(maps.Keys(o.NodeSelector)) {
		if m.take("nodeSelector["+k+"]", path.Child("nodeSelector").Key(k), o.NodeSelector[k]) {
			m.spec.NodeSelector = maps.Clone(m.spec.NodeSelector)
			if m.spec.NodeSelector == nil {
				m.spec.NodeSelector = map[string]string{}
			}
			m.spec.NodeSelector[k] = o.NodeSelector[k]
		}
	}
	if len(o.Tolerations) > 0 && m.take("tolerations", path.Child("tolerations"), tolerationsText(o.Tolerations)) {
		m.spec.Tolerations = o.Tolerations
	}
	if pc := o.PriorityClassName; pc != "" && m.take("priorityClassName", path.Child("priorityClassName"), pc) {
		m.spec.PriorityClassName = pc
	}
}

// take records that the override at path sets the field key to value and
// reports whether the value is to be applied. A second override setting
// the same value agrees; a different value is a conflict, reported at the
// later override's path naming the earlier one.
func (m *merger) take(key string, path *field.Path, value string) bool {
	prev, ok := m.origins[key]
	switch {
	case !ok:
		m.origins[key] = origin{path: path, value: value}
		return true
	case prev.value != value:
		m.errs = append(m.errs, field.Invalid(path, value, fmt.Sprintf(
			"conflicts with %s (%q): both overrides select cluster %s", prev.path, prev.value, m.cluster)))
	}
	return false
}

func (m *merger) mergeScaling(o api.Override, path *field.Path) {
	if m.spec.Scaling == nil {
		return // validation refuses limits without spec.scaling
	}
	if v := o.MinReplicas; v != nil && m.take("minReplicas", path.Child("minReplicas"), itoa(*v)) {
		m.spec.Scaling.MinReplicas = *v
	}
	if v := o.MaxReplicas; v != nil && m.take("maxReplicas", path.Child("maxReplicas"), itoa(*v)) {
		m.spec.Scaling.MaxReplicas = *v
	}
}

// envText is a variable's value as an override conflict names it: the
// literal, or the key it comes from.
func envText(e api.EnvVar) string {
	switch f := e.ValueFrom; {
	case f == nil:
		return e.Value
	case f.SecretKeyRef != nil:
		return "secret " + f.SecretKeyRef.Name + "/" + f.SecretKeyRef.Key
	case f.ConfigMapKeyRef != nil:
		return "configMap " + f.ConfigMapKeyRef.Name + "/" + f.ConfigMapKeyRef.Key
	}
	return ""
}

// setEnv replaces the variable named e.Name in place (its value and where
// the value comes from), or adds e last.
func (m *merger) setEnv(e api.EnvVar) {
	if i := slices.IndexFunc(m.spec.Env, func(b api.EnvVar) bool { return b.Name == e.Name }); i >= 0 {
		m.spec.Env[i] = e
		return
	}
	m.spec.Env = append(m.spec.Env, e)
}

// mergeQuantities merges an override's requests or limits (kind) into the
// spec's, resource by resource.
func (m *merger) mergeQuantities(kind string, q map[string]string, path *field.Path) {
	for _, name := range slices.Sorted(maps.Keys(q)) {
		if !m.take("resources."+kind+"["+name+"]", path.Key(name), q[name]) {
			continue
		}
		if m.spec.Resources == nil {
			m.spec.Resources = &api.Resources{}
		}
		target := &m.spec.Resources.Requests
		if kind == "limits" {
			target = &m.spec.Resources.Limits
		}
		if *target == nil {
			*target = map[string]string{}
		}
		(*target)[name] = q[name]
	}
}

// checkScaling reports merged scaling limits that cross, at the override
// that set minReplicas (or, when the spec did, the one that set
// maxReplicas).
func (m *merger) checkScaling() {
	sc := m.spec.Scaling
	if sc == nil || sc.MinReplicas <= sc.MaxReplicas {
		return
	}
	minO, minSet := m.origins["minReplicas"]
	maxO, maxSet := m.origins["maxReplicas"]
	if !minSet && !maxSet {
		return // the base spec's own problem: validation reports it
	}
	maxFrom := "spec.scaling"
	if maxSet {
		maxFrom = maxO.path.String()
	}
	if minSet {
		m.errs = append(m.errs, field.Invalid(minO.path, sc.MinReplicas, fmt.Sprintf(
			"must be less than or equal to maxReplicas (%d, from %s) on cluster %s", sc.MaxReplicas, maxFrom, m.cluster)))
		return
	}
	m.errs = append(m.errs, field.Invalid(maxO.path, sc.MaxReplicas, fmt.Sprintf(
		"must be greater than or equal to minReplicas (%d, from spec.scaling) on cluster %s", sc.MinReplicas, m.cluster)))
}

// checkResources reports merged requests above their limits, at the
// override that set the request (or, when the spec did, the limit).
func (m *merger) checkResources() {
	r := m.spec.Resources
	if r == nil {
		return
	}
	for _, name := range slices.Sorted(maps.Keys(r.Requests)) {
		lim, ok := r.Limits[name]
		if !ok || !exceeds(r.Requests[name], lim) {
			continue
		}
		reqO, reqSet := m.origins["resources.requests["+name+"]"]
		limO, limSet := m.origins["resources.limits["+name+"]"]
		switch {
		case reqSet:
			from := "spec.resources.limits[" + name + "]"
			if limSet {
				from = limO.path.String()
			}
			m.errs = append(m.errs, field.Invalid(reqO.path, reqO.value, fmt.Sprintf(
				"must be less than or equal to the %s limit (%s, from %s) on cluster %s", name, lim, from, m.cluster)))
		case limSet:
			m.errs = append(m.errs, field.Invalid(limO.path, limO.value, fmt.Sprintf(
				"must be greater than or equal to the %s request (%s, from spec.resources.requests[%s]) on cluster %s",
				name, r.Requests[name], name, m.cluster)))
		}
	}
}

// exceeds reports whether quantity a is above b; a value that does not
// parse (validation refuses it) exceeds nothing.
func exceeds(a, b string) bool {
	qa, errA := resource.ParseQuantity(a)
	qb, errB := resource.ParseQuantity(b)
	return errA == nil && errB == nil && qa.Cmp(qb) > 0
}

func itoa(v int32) string { return strconv.Itoa(int(v)) }

func ptr[T any](v T) *T { return &v }

// tolerationsText is a list of tolerations as a conflict names it, kubectl
// style: KEY=VALUE:EFFECT, KEY:EFFECT for Exists, each with its seconds.
func tolerationsText(ts []api.Toleration) string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		s := t.Key
		if t.Operator != "Exists" {
			s += "=" + t.Value
		}
		s += ":" + t.Effect
		if t.TolerationSeconds != nil {
			s += fmt.Sprintf(" for %ds", *t.TolerationSeconds)
		}
		out = append(out, s)
	}
	return strings.Join(out, ", ")
}
