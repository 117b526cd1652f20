package render

import (
	"fmt"

	"github.com/nats-io/nats.go/jetstream"
	appsv1 "k8s.io/api/apps/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/tinyctl/tinyctl/api"
)

// Objects is everything one component needs in one cluster.
type Objects struct {
	// Deployment runs the worker. Its replicas are unset when ScaledObject
	// is not nil, so that applying it never fights KEDA.
	Deployment *appsv1.Deployment
	// NetworkPolicy denies all ingress and allows the component's egress.
	NetworkPolicy *networkingv1.NetworkPolicy
	// PodDisruptionBudget keeps all but one worker pod through voluntary
	// disruptions, nil when the component runs at most one pod.
	PodDisruptionBudget *policyv1.PodDisruptionBudget
	// ScaledObject is a keda.sh/v1alpha1 ScaledObject, nil when the
	// component has no spec.scaling.
	ScaledObject *unstructured.Unstructured
	// Stream is the work-queue stream named StreamName(namespace, name).
	Stream jetstream.StreamConfig
	// Consumer is the durable consumer named ConsumerName(namespace, name)
	// on Stream.
	Consumer jetstream.ConsumerConfig
	// DeadLetters is the dead-letter stream of a component with
	// spec.jobs.deadLetter (nil without), named
	// deadletter.StreamName(Stream.Name).
	DeadLetters *jetstream.StreamConfig
}

// Render derives the Objects of component c at spec-bucket revision
// revision for cluster cl (zero fields of cl take their defaults). c must be
// defaulted and valid; Render returns an error naming the field when c still
// holds something the API server or nats-server would refuse (an unparsable
// quantity or duration, a duplicate environment variable, a stream limit the
// server rejects). Such errors wrap api.ErrInvalid: retrying the same
// revision cannot succeed.
func Render(c api.Component, revision uint64, cl Cluster) (Objects, error) {
	cl = cl.WithDefaults()
	if cl.RunAsUser < 0 {
		return Objects{}, fmt.Errorf("cluster runAsUser %d: must be positive", cl.RunAsUser)
	}
	m := meta{c: c, revision: revision, cluster: cl.Name}
	var (
		o   Objects
		err error
	)
	if o.Stream, err = streamConfig(c, cl.Streams); err != nil {
		return Objects{}, invalid(c, "stream", err)
	}
	if o.Consumer, err = consumerConfig(c); err != nil {
		return Objects{}, invalid(c, "consumer", err)
	}
	if c.Spec.Jobs.DeadLetter {
		o.Stream, o.DeadLetters = withDeadLetters(o.Stream, o.Consumer)
	}
	if o.Deployment, err = deployment(c, cl, m); err != nil {
		return Objects{}, invalid(c, "deployment", err)
	}
	if o.NetworkPolicy, err = networkPolicy(c, cl, m); err != nil {
		return Objects{}, invalid(c, "network policy", err)
	}
	if o.PodDisruptionBudget, err = podDisruptionBudget(c, m); err != nil {
		return Objects{}, invalid(c, "pod disruption budget", err)
	}
	if o.ScaledObject, err = scaledObject(c, cl, m); err != nil {
		return Objects{}, invalid(c, "scaled object", err)
	}
	return o, nil
}

func invalid(c api.Component, part string, err error) error {
	return fmt.Errorf("component %s %s: %w: %w", key(c), part, api.ErrInvalid, err)
}

// Children returns the Kubernetes objects of o as unstructured objects ready
// for server-side apply, in the order they must be applied: the
// NetworkPolicy first, so that no worker pod runs before its egress is
// confined (the loop stops at the first failed apply), then the
// Deployment, its PodDisruptionBudget and its ScaledObject when it has
// them. The empty status
// of typed objects is left out, as an apply configuration does. It fails
// only if an object cannot be converted, which Render never produces.
func (o Objects) Children() ([]*unstructured.Unstructured, error) {
	out := make([]*unstructured.Unstructured, 0, 4)
	objs := []runtime.Object{o.NetworkPolicy, o.Deployment}
	if o.PodDisruptionBudget != nil {
		objs = append(objs, o.PodDisruptionBudget)
	}
	for _, obj := range objs {
		u, err := toUnstructured(obj)
		if err != nil {
			return nil, err
		}
		out = append(out, u)
	}
	if o.ScaledObject != nil {
		out = append(out, o.ScaledObject.DeepCopy())
	}
	return out, nil
}

// toUnstructured converts a typed object built here. The objects are
// built as typed structs, not client-go apply configurations: the fields
// are checked by the compiler either way, and the content hash is taken
// from the typed objects' JSON, which apply configurations would change
// (every child of every cluster applied again once, on upgrade).
func toUnstructured(obj any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return nil, fmt.Errorf("%T to unstructured: %w", obj, err)
	}
	delete(m, "status")
	return &unstructured.Unstructured{Object: m}, nil
}

func key(c api.Component) string {
	return c.Metadata.Namespace + "/" + c.Metadata.Name
}

// meta builds the ObjectMeta shared by a component's Kubernetes children.
type meta struct {
	c        api.Component
	revision uint64
	cluster  string
}

// objectMeta returns the child's metadata without the revision and hash
// annotations; stamp adds them once the content is final.
func (m meta) objectMeta(extra map[string]string) metav1.ObjectMeta {
	ann := map[string]string{}
	for k, v := range extra {
		ann[k] = v
	}
	md := m.c.Metadata
	return metav1.ObjectMeta{
		Name:        md.Name,
		Namespace:   md.Namespace,
		Labels:      objectLabels(md.Namespace, md.Name, md.Labels),
		Annotations: ann,
	}
}
