package validate

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/workerenv"
)

// MaxReplicas bounds spec.replicas and spec.scaling.maxReplicas.
const MaxReplicas = 1000

// resourceNames returns the resource names a component may request or
// limit.
func resourceNames() []string { return []string{"cpu", "memory", "ephemeral-storage"} }

func validateSpec(s api.Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, validateImage(path.Child("image"), s.Image)...)
	errs = append(errs, validateEnv(s.Env, path.Child("env"))...)
	errs = append(errs, validatePod(s, path)...)
	errs = append(errs, validateResources(s.Resources, path.Child("resources"))...)
	errs = append(errs, validateJobs(s.Jobs, path.Child("jobs"))...)
	errs = append(errs, validateWorkers(s, path)...)
	errs = append(errs, validateEgress(s.Egress, path.Child("egress"))...)
	errs = append(errs, validatePlacement(s.Placement, path.Child("placement"))...)
	errs = append(errs, validateOverrides(s, path.Child("overrides"))...)
	if d := s.Deletion.Stream; d != api.Retain && d != api.Delete {
		errs = append(errs, field.NotSupported(path.Child("deletion", "stream"), d, []string{api.Retain, api.Delete}))
	}
	return errs
}

// validateEnv checks names: valid, unique, and not set by tinyctl.
func validateEnv(env []api.EnvVar, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(env))
	for i, e := range env {
		p := path.Index(i).Child("name")
		switch {
		case e.Name == "":
			errs = append(errs, field.Required(p, "an environment variable name"))
		case workerenv.Reserved(e.Name):
			errs = append(errs, field.Forbidden(p, fmt.Sprintf(
				"%s is set by tinyctl (reserved: %s and every %s* name)", e.Name,
				strings.Join(workerenv.ReservedNames(), ", "), workerenv.ReservedPrefix)))
		case seen[e.Name]:
			errs = append(errs, field.Duplicate(p, e.Name))
		default:
			for _, msg := range validation.IsEnvVarName(e.Name) {
				errs = append(errs, field.Invalid(p, e.Name, msg))
			}
		}
		seen[e.Name] = true
		errs = append(errs, validateValueFrom(e, path.Index(i))...)
	}
	return errs
}

// validateResources checks names and quantities, and that no request
// exceeds its limit.
func validateResources(r *api.Resources, path *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	requests, errs := quantities(r.Requests, path.Child("requests"))
	limits, limitErrs := quantities(r.Limits, path.Child("limits"))
	errs = append(errs, limitErrs...)
	for _, name := range resourceNames() {
		req, okReq := requests[name]
		lim, okLim := limits[name]
		if okReq && okLim && req.Cmp(lim) > 0 {
			errs = append(errs, field.Invalid(path.Child("requests").Key(name), r.Requests[name],
				fmt.Sprintf("must be less than or equal to the %s limit (%s)", name, r.Limits[name])))
		}
	}
	return errs
}

// quantities parses a requests or limits map, returning the valid entries.
func quantities(m map[string]string, path *field.Path) (map[string]resource.Quantity, field.ErrorList) {
	var errs field.ErrorList
	out := make(map[string]resource.Quantity, len(m))
	for _, name := range sortedKeys(m) {
		p := path.Key(name)
		if !isResourceName(name) {
			errs = append(errs, field.NotSupported(p, name, resourceNames()))
			continue
		}
		q, err := resource.ParseQuantity(m[name])
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p, m[name], "must be a quantity such as 100m, 128Mi or 1Gi"))
		case q.Sign() < 0:
			errs = append(errs, field.Invalid(p, m[name], "must be greater than or equal to 0"))
		default:
			out[name] = q
		}
	}
	return out, errs
}

func isResourceName(name string) bool { return slices.Contains(resourceNames(), name) }

// validateWorkers checks the worker count: fixed replicas or KEDA scaling,
// never both.
func validateWorkers(s api.Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if s.Replicas != nil {
		if s.Scaling != nil {
			errs = append(errs, field.Forbidden(path.Child("replicas"),
				"may not be set together with spec.scaling: KEDA owns the replica count of a scaled component"))
		}
		errs = append(errs, between(path.Child("replicas"), int64(*s.Replicas), 0, MaxReplicas)...)
	}
	if sc := s.Scaling; sc != nil {
		errs = append(errs, validateScaling(*sc, path.Child("scaling"))...)
	}
	return errs
}

func validateScaling(sc api.Scaling, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	errs = append(errs, between(path.Child("minReplicas"), int64(sc.MinReplicas), 0, MaxReplicas)...)
	errs = append(errs, between(path.Child("maxReplicas"), int64(sc.MaxReplicas), 1, MaxReplicas)...)
	if sc.MaxReplicas >= 1 && sc.MinReplicas > sc.MaxReplicas {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), sc.MinReplicas,
			fmt.Sprintf("must be less than or equal to maxReplicas (%d)", sc.MaxReplicas)))
	}
	errs = append(errs, atLeast(path.Child("lagThreshold"), sc.LagThreshold, 1)...)
	errs = append(errs, atLeast(path.Child("activationLagThreshold"), sc.ActivationLagThreshold, 0)...)
	errs = append(errs, atLeast(path.Child("pollingInterval"), int64(sc.PollingInterval), 1)...)
	errs = append(errs, atLeast(path.Child("cooldownPeriod"), int64(sc.CooldownPeriod), 0)...)
	return errs
}

// validatePlacement checks cluster names and the cluster selector.
func validatePlacement(p *api.Placement, path *field.Path) field.ErrorList {
	if p == nil {
		return nil
	}
	return validateClusterSelection(p.Clusters, p.ClusterSelector, path)
}

// validateClusterSelection checks the cluster names and the label selector
// of a placement or an override.
func validateClusterSelection(clusters []string, sel *metav1.LabelSelector, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := make(map[string]bool, len(clusters))
	for i, name := range clusters {
		cp := path.Child("clusters").Index(i)
		switch {
		case name == "":
			errs = append(errs, field.Required(cp, "a cluster name"))
		case seen[name]:
			errs = append(errs, field.Duplicate(cp, name))
		default:
			errs = append(errs, dns1123Label(cp, name)...)
		}
		seen[name] = true
	}
	if sel != nil {
		sp := path.Child("clusterSelector")
		errs = append(errs, validateLabelMap(sel.MatchLabels, sp.Child("matchLabels"))...)
		for i, req := range sel.MatchExpressions {
			errs = append(errs, metav1validation.ValidateLabelSelectorRequirement(req,
				metav1validation.LabelSelectorValidationOptions{}, sp.Child("matchExpressions").Index(i))...)
		}
	}
	return errs
}
