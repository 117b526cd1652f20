package render_test

import (
	"fmt"

	"github.com/tinyctl/tinyctl/api/defaults"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/render"
)

// Render a KEDA-scaled worker and print what it binds: the stream and
// durable consumer the worker is told about, and the names KEDA's trigger
// watches, which are the same.
func ExampleRender() {
	c := defaults.Apply(api.Component{
		APIVersion: api.APIVersion,
		Kind:       api.Kind,
		Metadata:   api.Metadata{Name: "extractor", Namespace: "workers"},
		Spec: api.Spec{
			Image:   "registry.example.com/acme/extractor:1.4.2",
			Jobs:    api.Jobs{Subjects: []string{"jobs.extract.>"}},
			Scaling: &api.Scaling{MinReplicas: 0, MaxReplicas: 20},
		},
	})
	objs, err := render.Render(c, 42, render.DefaultCluster())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("stream:", objs.Stream.Name, objs.Stream.Subjects, objs.Stream.Retention)
	fmt.Println("consumer:", objs.Consumer.Durable, objs.Consumer.AckPolicy)
	fmt.Println("deployment:", objs.Deployment.Namespace+"/"+objs.Deployment.Name, "replicas set:", objs.Deployment.Spec.Replicas != nil)

	triggers, _, _ := unstructured.NestedSlice(objs.ScaledObject.Object, "spec", "triggers")
	t := triggers[0].(map[string]any)
	md := t["metadata"].(map[string]any)
	fmt.Println("trigger:", t["type"], md["stream"], md["consumer"], "lag", md["lagThreshold"])
	fmt.Println("revision:", objs.Deployment.Annotations[render.AnnotationRevision])
	// Output:
	// stream: tinyctl_workers_extractor [jobs.extract.>] WorkQueue
	// consumer: tinyctl_workers_extractor_worker AckExplicit
	// deployment: workers/extractor replicas set: false
	// trigger: nats-jetstream tinyctl_workers_extractor tinyctl_workers_extractor_worker lag 10
	// revision: 42
}
