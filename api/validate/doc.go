// Package validate checks a Component before it is published and again
// before it is applied: Component returns every problem at once with its
// field path (apimachinery's field.ErrorList, as the Kubernetes API server
// reports them), Check also fills the defaults and scopes its subjects by
// a cluster's Tenancy, and Warnings names what is allowed but likely a
// mistake. Image references, NATS subjects, labels, egress rules and
// per-cluster overrides each have their own rules here.
package validate
