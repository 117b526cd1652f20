package overrides_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/overrides"
)

func ExampleResolve() {
	c := component(
		api.Override{ClusterSelector: region("eu"), Image: euImage, Env: []api.EnvVar{{Name: "REGION", Value: "eu"}}},
		api.Override{Clusters: []string{"eu-1"}, Image: canary},
	)
	for _, cl := range []cluster.Identity{us1, eu2, eu1} {
		got, err := overrides.Resolve(c, cl)
		if err != nil {
			fmt.Printf("%s: %v\n", cl.Name, err)
			continue
		}
		var env []string
		for _, e := range got.Spec.Env {
			env = append(env, e.Name+"="+e.Value)
		}
		fmt.Printf("%s: %s %v\n", cl.Name, got.Spec.Image, env)
	}
	// Output:
	// us-1: registry.example.com/acme/resizer:1.0.0 [LOG_LEVEL=info MODE=fast]
	// eu-2: registry.example.com/acme/resizer:1.0.0-eu [LOG_LEVEL=info MODE=fast REGION=eu]
	// eu-1: overrides for cluster "eu-1": spec.overrides[1].image: Invalid value: "registry.example.com/acme/resizer:1.1.0-rc1": conflicts with spec.overrides[0].image ("registry.example.com/acme/resizer:1.0.0-eu"): both overrides select cluster eu-1
}
