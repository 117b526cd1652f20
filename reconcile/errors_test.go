package reconcile

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/nats-io/nats.go/jetstream"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/bus"
	"github.com/tinyctl/tinyctl/bus/streams"
	"github.com/tinyctl/tinyctl/render"
)

func TestClassify(t *testing.T) {
	deploy := schema.GroupResource{Group: "apps", Resource: "deployments"}
	tests := []struct {
		name       string
		err        error
		wantClass  Class
		wantReason string
	}{
		{"invalid spec", fmt.Errorf("decode: %w", api.ErrInvalid), Permanent, "InvalidSpec"},
		{"render refuses a field", fmt.Errorf("render: %w", renderRefusal(t)), Permanent, "InvalidSpec"},
		{"invalid spec next to a failed status write", errors.Join(fmt.Errorf("render: %w", renderRefusal(t)), context.DeadlineExceeded), Transient, "Retrying"},
		{"api server says invalid", fmt.Errorf("Deployment/a/b apply failed: %w", apierrors.NewInvalid(schema.GroupKind{Group: "apps", Kind: "Deployment"}, "b", nil)), Permanent, "Rejected"},
		{"crd missing", fmt.Errorf("ScaledObject: %w", apply.ErrKindNotInstalled), Waiting, "KindNotInstalled"},
		{"kind the controller may not list", fmt.Errorf("ScaledObject/a/b not applied: %w", ErrKindForbidden), Waiting, "KindForbidden"},
		{"namespace missing", fmt.Errorf("ns: %w", ErrNamespaceMissing), Waiting, "NamespaceMissing"},
		{"nats permissions", fmt.Errorf("stream: %w", bus.ErrPermissionDenied), Waiting, "PermissionDenied"},
		{"a newer tenure wrote the child", fmt.Errorf("Deployment/a/b: %w", apply.ErrFenced), Waiting, "Fenced"},
		{"the fence policy refused the write (a Forbidden, not a missing grant)",
			fmt.Errorf("Deployment/a/b apply refused: %w: %w", apply.ErrFenced, apierrors.NewForbidden(deploy, "b", errors.New("tinyctl.io/fence is older"))), Waiting, "Fenced"},
		{"consumer drift the server refuses", &streams.DriftError{}, Permanent, "ConsumerDrift"},
		{"replicas above cluster size", fmt.Errorf("stream x: %w", &jetstream.APIError{Code: 500, ErrorCode: 10074, Description: "replicas > 1 not supported in non-clustered mode"}), Permanent, "StreamRejected"},
		{"jetstream not leader", fmt.Errorf("stream x: %w", &jetstream.APIError{Code: 503, ErrorCode: 10009}), Transient, "Retrying"},
		{"api server conflict", apierrors.NewConflict(deploy, "b", errors.New("changed")), Transient, "Retrying"},
		{"timeout", context.DeadlineExceeded, Transient, "Retrying"},
		{"explicit class wins", withClass(Permanent, "NamespaceNotAllowed", errors.New("no")), Permanent, "NamespaceNotAllowed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			class, reason := Classify(tt.err)
			if class != tt.wantClass || reason != tt.wantReason {
				t.Errorf("Classify = %s, %q; want %s, %q", class, reason, tt.wantClass, tt.wantReason)
			}
		})
	}
}

// renderRefusal is render's error for a component whose stream maxAge
// nats-server would refuse.
func renderRefusal(t *testing.T) error {
	c := api.Component{APIVersion: api.APIVersion, Kind: api.Kind, Metadata: api.Metadata{Name: "a", Namespace: "b"},
		Spec: api.Spec{Image: "x:1", Jobs: api.Jobs{Subjects: []string{"b.a"}, Stream: api.StreamSpec{MaxAge: "1ms"}}}}
	_, err := render.Render(c, 1, render.Cluster{})
	if err == nil {
		t.Fatal("render accepted a 1ms maxAge")
	}
	return err
}
