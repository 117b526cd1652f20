package validate

import (
	"fmt"

	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/tinyctl/tinyctl/api"
)

// MaxOverrides bounds spec.overrides: each reconcile matches every one
// against the cluster.
const MaxOverrides = 64

// Overrides are checked on their own here, each against the base spec.
// Whether two of them conflict, or whether a merged value breaks a rule
// (a minReplicas above the maxReplicas another override sets), depends on
// which clusters they select together, so package overrides checks that
// per cluster when it resolves the spec.

// validateOverrides checks every entry of spec.overrides against the base
// spec s.
func validateOverrides(s api.Spec, path *field.Path) field.ErrorList {
	if len(s.Overrides) > MaxOverrides {
		return field.ErrorList{field.TooMany(path, len(s.Overrides), MaxOverrides)}
	}
	var errs field.ErrorList
	for i, o := range s.Overrides {
		errs = append(errs, validateOverride(o, s, path.Index(i))...)
	}
	return errs
}

func validateOverride(o api.Override, s api.Spec, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(o.Clusters) == 0 && o.ClusterSelector == nil {
		errs = append(errs, field.Required(path, "select the clusters it applies to with clusters or clusterSelector"))
	}
	errs = append(errs, validateClusterSelection(o.Clusters, o.ClusterSelector, path)...)
	if !o.SetsSomething() {
		errs = append(errs, field.Required(path, "set at least one of image, replicas, minReplicas, maxReplicas, env, resources, suspend, nodeSelector, tolerations, priorityClassName"))
	}
	if o.Image != "" {
		errs = append(errs, validateImage(path.Child("image"), o.Image)...)
	}
	if o.Replicas != nil {
		if s.Scaling != nil {
			errs = append(errs, field.Forbidden(path.Child("replicas"),
				"spec.scaling is set: KEDA owns the replica count (override minReplicas or maxReplicas instead)"))
		}
		errs = append(errs, between(path.Child("replicas"), int64(*o.Replicas), 0, MaxReplicas)...)
	}
	errs = append(errs, validateScalingLimits(o, s.Scaling != nil, path)...)
	errs = append(errs, validateEnv(o.Env, path.Child("env"))...)
	errs = append(errs, validateResources(o.Resources, path.Child("resources"))...)
	errs = append(errs, validateScheduling(o.NodeSelector, o.Tolerations, o.PriorityClassName, path)...)
	return errs
}

// validateScalingLimits checks an override's minReplicas and maxReplicas;
// scaled says whether the base spec has scaling to override.
func validateScalingLimits(o api.Override, scaled bool, path *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, f := range []struct {
		name   string
		v      *int32
		lowest int64
	}{{"minReplicas", o.MinReplicas, 0}, {"maxReplicas", o.MaxReplicas, 1}} {
		switch {
		case f.v == nil:
		case !scaled:
			errs = append(errs, field.Forbidden(path.Child(f.name),
				"spec.scaling is not set: there are no scaling limits to override (override replicas instead)"))
		default:
			errs = append(errs, between(path.Child(f.name), int64(*f.v), f.lowest, MaxReplicas)...)
		}
	}
	if scaled && o.MinReplicas != nil && o.MaxReplicas != nil && *o.MaxReplicas >= 1 && *o.MinReplicas > *o.MaxReplicas {
		errs = append(errs, field.Invalid(path.Child("minReplicas"), *o.MinReplicas,
			fmt.Sprintf("must be less than or equal to maxReplicas (%d)", *o.MaxReplicas)))
	}
	return errs
}
