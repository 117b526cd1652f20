package provision_test

import (
	"context"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
	"github.com/tinyctl/tinyctl/provision"
)

// TestDiscoverNetworkReadsNodesAndServiceCIDRs: the Service range is the
// API server's ServiceCIDR (localkube's --service-cluster-ip-range); the
// pod ranges are the nodes' spec.podCIDRs, a node's range inside another's
// folded into it.
func TestDiscoverNetworkReadsNodesAndServiceCIDRs(t *testing.T) {
	r := newRuntime(t, provision.Options{})
	ctx := context.Background()
	before, err := r.p.DiscoverNetwork(ctx)
	testenv.Must(t, err)
	if !slices.Equal(before.ServiceCIDRs, []string{"10.0.0.0/24"}) {
		t.Errorf("Service ranges %v, want the API server's 10.0.0.0/24", before.ServiceCIDRs)
	}
	nodes := kube.Clientset(t).CoreV1().Nodes()
	for name, cidrs := range map[string][]string{
		"pods-a": {"10.244.0.0/24", "fd00:10:244::/64"},
		"pods-b": {"10.244.1.0/24"},
		"pods-c": {"10.244.1.128/25"}, // inside pods-b's
	} {
		_, err := nodes.Create(ctx, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: corev1.NodeSpec{PodCIDR: cidrs[0], PodCIDRs: cidrs}},
			metav1.CreateOptions{})
		testenv.Must(t, err)
		t.Cleanup(func() { _ = nodes.Delete(context.Background(), name, metav1.DeleteOptions{}) })
	}
	got, err := r.p.DiscoverNetwork(ctx)
	testenv.Must(t, err)
	if want := []string{"10.244.0.0/24", "10.244.1.0/24", "fd00:10:244::/64"}; !slices.Equal(got.PodCIDRs, want) {
		t.Errorf("pod ranges %v, want %v", got.PodCIDRs, want)
	}
}
