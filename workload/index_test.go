package workload

import (
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/tools/cache"
)

// TestComponentIndexFindsEachComponentsObjects: 3 objects for each of 5,000
// components, filed under at most componentBuckets index values; each
// component's lookup, filtered, is exactly its own 3.
func TestComponentIndexFindsEachComponentsObjects(t *testing.T) {
	label := func(obj any) string { return obj.(*metav1.ObjectMeta).Labels["component"] }
	idx := cache.NewIndexer(func(obj any) (string, error) { return obj.(*metav1.ObjectMeta).Name, nil },
		cache.Indexers{ComponentIndex: IndexComponentBucket(label)})
	const components = 5000
	for i := range components {
		for kind := range 3 {
			c := fmt.Sprintf("ns.c%d", i)
			if err := idx.Add(&metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", c, kind), Labels: map[string]string{"component": c}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := idx.Add(&metav1.ObjectMeta{Name: "unlabelled"}); err != nil {
		t.Fatal(err)
	}
	if n := len(idx.ListIndexFuncValues(ComponentIndex)); n == 0 || n > componentBuckets {
		t.Fatalf("%d index values, want 1 to %d", n, componentBuckets)
	}
	for i := range components {
		want := fmt.Sprintf("ns.c%d", i)
		var found int
		for _, o := range InComponentBucket(idx, want) {
			if label(o) == want {
				found++
			}
		}
		if found != 3 {
			t.Fatalf("component %s: found %d objects, want 3", want, found)
		}
	}
}
