package testenv

import (
	"context"
	"fmt"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// KubeEvents lists the Kubernetes Events (events.k8s.io/v1) of namespace
// ns: those reporter wrote, each as "Kind/name Type Reason" of the object
// it is about, and, to show what else was there, every event with its
// reporting controller.
func KubeEvents(ctx context.Context, cs kubernetes.Interface, ns, reporter string) (by []string, all string, err error) {
	list, err := cs.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, "", err
	}
	var every []string
	for _, e := range list.Items {
		line := e.Regarding.Kind + "/" + e.Regarding.Name + " " + e.Type + " " + e.Reason
		if e.ReportingController == reporter {
			by = append(by, line)
		}
		every = append(every, fmt.Sprintf("%s by %s", line, e.ReportingController))
	}
	return by, strings.Join(every, "; "), nil
}
