package provision_test

import (
	"context"
	"encoding/json"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// containerArgs returns the args of a workload's first container.
func containerArgs(t *testing.T, obj *unstructured.Unstructured) []string {
	t.Helper()
	ctrs, _, _ := unstructured.NestedSlice(obj.Object, "spec", "template", "spec", "containers")
	if len(ctrs) == 0 {
		t.Fatalf("%s has no containers", obj.GetName())
	}
	args, _, _ := unstructured.NestedStringSlice(ctrs[0].(map[string]any), "args")
	return args
}

// createConfigMap creates an empty ConfigMap, as a user would.
func createConfigMap(t *testing.T, ns, name string) {
	t.Helper()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if _, err := kube.Clientset(t).CoreV1().ConfigMaps(ns).Create(context.Background(), cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func toJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
