package validate

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/podlayout"
)

// MaxTerminationGracePeriod bounds spec.terminationGracePeriodSeconds: an
// hour is longer than any drain a node's maintenance waits for.
const MaxTerminationGracePeriod = 3600

// Toleration operators and taint effects Kubernetes accepts.
var (
	tolerationOperators = []string{"Equal", "Exists"}
	taintEffects        = []string{"NoSchedule", "PreferNoSchedule", "NoExecute"}
)

// systemPriorityClasses are kept for the cluster's own components: the API
// server admits them only in kube-system, where tinyctl runs nothing.
var systemPriorityClasses = []string{"system-node-critical", "system-cluster-critical"}

// validatePod checks what the worker's pod takes from its namespace and
// from the scheduler.
func validatePod(s api.Spec, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateEnvFrom(s.EnvFrom, p.Child("envFrom"))...)
	errs = append(errs, validateVolumes(s.Volumes, p.Child("volumes"))...)
	seen := map[string]bool{}
	for i, r := range s.ImagePullSecrets {
		ip := p.Child("imagePullSecrets").Index(i).Child("name")
		if seen[r.Name] {
			errs = append(errs, field.Duplicate(ip, r.Name))
		}
		seen[r.Name] = true
		errs = append(errs, objectName(ip, r.Name, "a Secret")...)
	}
	errs = append(errs, validateScheduling(s.NodeSelector, s.Tolerations, s.PriorityClassName, p)...)
	if n := s.ServiceAccountName; n != "" {
		errs = append(errs, objectName(p.Child("serviceAccountName"), n, "a ServiceAccount")...)
	}
	errs = append(errs, validateAffinity(s.Affinity, p.Child("affinity"))...)
	errs = append(errs, validateSpread(s.TopologySpreadConstraints, p.Child("topologySpreadConstraints"))...)
	errs = append(errs, validateProbes(s.Probes, p.Child("probes"))...)
	errs = append(errs, validateMetricsPort(s.MetricsPort, s.Probes, p.Child("metricsPort"))...)
	if g := s.TerminationGracePeriodSeconds; g != nil {
		errs = append(errs, between(p.Child("terminationGracePeriodSeconds"), *g, 1, MaxTerminationGracePeriod)...)
	}
	return errs
}

// validateScheduling checks a node selector, tolerations and a priority
// class, of the spec or of an override at p.
func validateScheduling(nodeSelector map[string]string, tolerations []api.Toleration, priorityClass string, p *field.Path) field.ErrorList {
	errs := validateLabelMap(nodeSelector, p.Child("nodeSelector"))
	for i, t := range tolerations {
		errs = append(errs, validateToleration(t, p.Child("tolerations").Index(i))...)
	}
	if pc := priorityClass; pc != "" {
		pp := p.Child("priorityClassName")
		errs = append(errs, objectName(pp, pc, "")...)
		if slices.Contains(systemPriorityClasses, pc) {
			errs = append(errs, field.Forbidden(pp, pc+" is for the cluster's own components (the API server admits it only in kube-system)"))
		}
	}
	return errs
}

// validateValueFrom checks an env variable that takes its value from a
// Secret or ConfigMap key.
func validateValueFrom(e api.EnvVar, p *field.Path) field.ErrorList {
	if e.ValueFrom == nil {
		return nil
	}
	var errs field.ErrorList
	if e.Value != "" {
		// Forbidden, not Invalid: the message must not echo the value,
		// which may be the very secret valueFrom was meant to hold.
		errs = append(errs, field.Forbidden(p.Child("value"), "may not be set together with valueFrom"))
	}
	vp := p.Child("valueFrom")
	s, c := e.ValueFrom.SecretKeyRef, e.ValueFrom.ConfigMapKeyRef
	switch {
	case s == nil && c == nil:
		errs = append(errs, field.Required(vp, "secretKeyRef or configMapKeyRef"))
	case s != nil && c != nil:
		errs = append(errs, field.Invalid(vp, "secretKeyRef and configMapKeyRef", "set one of secretKeyRef or configMapKeyRef, not both"))
	case s != nil:
		errs = append(errs, keyRef(*s, vp.Child("secretKeyRef"), true)...)
	default:
		errs = append(errs, keyRef(*c, vp.Child("configMapKeyRef"), false)...)
	}
	return errs
}

func keyRef(r api.KeyRef, p *field.Path, secret bool) field.ErrorList {
	errs := reference(p.Child("name"), r.Name, secret)
	if r.Key == "" {
		return append(errs, field.Required(p.Child("key"), "the key whose value the variable takes"))
	}
	for _, msg := range validation.IsConfigMapKey(r.Key) {
		errs = append(errs, field.Invalid(p.Child("key"), r.Key, msg))
	}
	return errs
}

func validateEnvFrom(from []api.EnvFromSource, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, f := range from {
		ip := p.Index(i)
		if f.Prefix != "" {
			for _, msg := range validation.IsEnvVarName(f.Prefix) {
				errs = append(errs, field.Invalid(ip.Child("prefix"), f.Prefix, msg))
			}
		}
		errs = append(errs, secretOrConfigMap(ip, "secretRef", f.SecretRef, "configMapRef", f.ConfigMapRef)...)
	}
	return errs
}

// validateVolumes checks names and mount paths (unique, clear of what
// tinyctl mounts) and what each volume mounts.
func validateVolumes(vols []api.Volume, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	names, mounts := map[string]bool{}, map[string]bool{}
	for i, v := range vols {
		ip := p.Index(i)
		np := ip.Child("name")
		switch {
		case v.Name == podlayout.TmpVolume || v.Name == podlayout.CredentialsVolume:
			errs = append(errs, field.Forbidden(np, fmt.Sprintf("%s is the name of a volume tinyctl mounts (%s, %s)", v.Name, podlayout.TmpVolume, podlayout.CredentialsVolume)))
		case names[v.Name]:
			errs = append(errs, field.Duplicate(np, v.Name))
		default:
			errs = append(errs, objectName(np, v.Name, "a volume")...)
		}
		names[v.Name] = true
		errs = append(errs, mountPath(ip.Child("mountPath"), v.MountPath, mounts)...)
		errs = append(errs, secretOrConfigMap(ip, "secret", v.Secret, "configMap", v.ConfigMap)...)
		errs = append(errs, validateItems(v.Items, ip.Child("items"))...)
	}
	return errs
}

// mountPath checks an absolute, clean path that neither repeats another
// volume's nor lies at, under or above a path tinyctl mounts.
func mountPath(p *field.Path, mp string, seen map[string]bool) field.ErrorList {
	switch {
	case mp == "":
		return field.ErrorList{field.Required(p, "an absolute path in the worker container")}
	case !path.IsAbs(mp) || path.Clean(mp) != mp:
		return field.ErrorList{field.Invalid(p, mp, "must be an absolute path without . or .. parts or a trailing slash")}
	case seen[mp]:
		return field.ErrorList{field.Duplicate(p, mp)}
	}
	seen[mp] = true
	for _, own := range []string{podlayout.TmpMountPath, podlayout.CredentialsDir} {
		if underPath(mp, own) || underPath(own, mp) {
			return field.ErrorList{field.Forbidden(p, fmt.Sprintf("overlaps %s, which tinyctl mounts", own))}
		}
	}
	return nil
}

// underPath reports whether path a is b or lies under it.
func underPath(a, b string) bool { return a == b || b == "/" || strings.HasPrefix(a, b+"/") }

func validateItems(items []api.KeyToPath, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	paths := map[string]bool{}
	for i, it := range items {
		ip := p.Index(i)
		if it.Key == "" {
			errs = append(errs, field.Required(ip.Child("key"), "the key to mount"))
		}
		for _, msg := range validation.IsConfigMapKey(it.Key) {
			if it.Key != "" {
				errs = append(errs, field.Invalid(ip.Child("key"), it.Key, msg))
			}
		}
		pp := ip.Child("path")
		switch {
		case it.Path == "":
			errs = append(errs, field.Required(pp, "the file's path under the mount path"))
		case path.IsAbs(it.Path) || path.Clean(it.Path) != it.Path || strings.HasPrefix(it.Path, ".."):
			errs = append(errs, field.Invalid(pp, it.Path, "must be a relative path without . or .. parts"))
		case paths[it.Path]:
			errs = append(errs, field.Duplicate(pp, it.Path))
		}
		paths[it.Path] = true
	}
	return errs
}

// secretOrConfigMap checks that exactly one of a Secret and a ConfigMap
// (the fields named secretField and configMapField under p) is named, and
// its name.
func secretOrConfigMap(p *field.Path, secretField string, secret *api.ObjectRef, configMapField string, configMap *api.ObjectRef) field.ErrorList {
	switch {
	case secret == nil && configMap == nil:
		return field.ErrorList{field.Required(p, secretField+" or "+configMapField)}
	case secret != nil && configMap != nil:
		return field.ErrorList{field.Invalid(p, secretField+" and "+configMapField,
			fmt.Sprintf("set one of %s or %s, not both", secretField, configMapField))}
	case secret != nil:
		return reference(p.Child(secretField, "name"), secret.Name, true)
	}
	return reference(p.Child(configMapField, "name"), configMap.Name, false)
}

// reference checks the name of a Secret or ConfigMap a component reads;
// Secrets named like minted worker credentials are refused.
func reference(p *field.Path, name string, secret bool) field.ErrorList {
	kind := "a ConfigMap"
	if secret {
		kind = "a Secret"
	}
	if name == "" {
		return field.ErrorList{field.Required(p, "the name of "+kind+" in the component's namespace")}
	}
	if secret && strings.HasSuffix(name, podlayout.MintedSecretSuffix) {
		return field.ErrorList{field.Forbidden(p, fmt.Sprintf(
			"Secrets named *%s hold NATS credentials tinyctl mints for a component; a component may not read another's identity (rename the Secret)",
			podlayout.MintedSecretSuffix))}
	}
	return objectName(p, name, kind)
}

// objectName checks a Kubernetes object name (a DNS-1123 subdomain); a
// volume name must be a DNS-1123 label.
func objectName(p *field.Path, name, kind string) field.ErrorList {
	if name == "" {
		return field.ErrorList{field.Required(p, "a name")}
	}
	if kind == "a volume" {
		return dns1123Label(p, name)
	}
	var errs field.ErrorList
	for _, msg := range validation.IsDNS1123Subdomain(name) {
		errs = append(errs, field.Invalid(p, name, msg))
	}
	return errs
}

// validateToleration checks a toleration as the API server would.
func validateToleration(t api.Toleration, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if t.Key != "" {
		for _, msg := range validation.IsQualifiedName(t.Key) {
			errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
		}
	}
	switch t.Operator {
	case "", "Equal":
		if t.Key == "" {
			errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "must be Exists when key is empty (the toleration then matches every taint)"))
		}
		for _, msg := range validation.IsValidLabelValue(t.Value) {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
		}
	case "Exists":
		if t.Value != "" {
			errs = append(errs, field.Invalid(p.Child("value"), t.Value, "must be empty when operator is Exists"))
		}
	default:
		errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, tolerationOperators))
	}
	if t.Effect != "" && !slices.Contains(taintEffects, t.Effect) {
		errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect, taintEffects))
	}
	if t.TolerationSeconds != nil && t.Effect != "NoExecute" {
		errs = append(errs, field.Invalid(p.Child("tolerationSeconds"), *t.TolerationSeconds, "may be set only with effect NoExecute"))
	}
	return errs
}
