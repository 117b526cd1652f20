package workload

import (
	"hash/maphash"
	"strconv"

	"k8s.io/client-go/tools/cache"
)

// ComponentIndex names the index of the caches (this package's and the
// loop's children) that finds one component's objects without scanning
// every object: a restart reconciles every component, and a scan each would
// make it quadratic.
//
// It files an object under a bucket of its component label, not under the
// label itself. client-go keeps a set per index value, and a set costs about
// 300 bytes however few keys it holds: an index by label, one set per child,
// took 9 MB at 10,000 components (30,000 children). With componentBuckets
// buckets a set holds many keys and the index costs a few bytes per child;
// a lookup gets the objects of a bucket (about a dozen at 10,000
// components) and keeps those of its component.
const ComponentIndex = "component-bucket"

// componentBuckets is the number of buckets ComponentIndex files objects
// under.
const componentBuckets = 1024

var (
	// bucketSeed keys componentBucket's hash for the process's lifetime,
	// which is as long as any cache lives.
	bucketSeed = maphash.MakeSeed()
	// bucketNames are the index values, made once.
	bucketNames = func() (names [componentBuckets]string) {
		for i := range names {
			names[i] = strconv.Itoa(i)
		}
		return names
	}()
)

// IndexComponentBucket returns the index function of ComponentIndex, which
// reads an object's component label with component ("" for none).
func IndexComponentBucket(component func(obj any) string) cache.IndexFunc {
	return func(obj any) ([]string, error) {
		if c := component(obj); c != "" {
			return []string{componentBucket(c)}, nil
		}
		return nil, nil
	}
}

// InComponentBucket returns the objects of idx in the bucket of component
// label want: those of want and of a few other components, which the caller
// leaves out.
func InComponentBucket(idx cache.Indexer, want string) []any {
	objs, _ := idx.ByIndex(ComponentIndex, componentBucket(want))
	return objs
}

// componentBucket returns the bucket of component label c.
func componentBucket(c string) string {
	return bucketNames[maphash.String(bucketSeed, c)%componentBuckets]
}
