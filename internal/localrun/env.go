package localrun

import (
	"fmt"
	"os"
	"slices"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/tinyctl/tinyctl/api/workerenv"
	"github.com/tinyctl/tinyctl/render"
)

// Env returns the environment of d's worker container as NAME=value
// lines, in the container's order. mounts maps a mount path of the
// container to the local directory that stands in for it: a value that
// names a file under the mount path names the same file under the local
// directory. The health address is left out: no kubelet probes a local
// process, and every local worker would want the same port. It fails when
// d has no worker container, when a variable takes its value from
// elsewhere (a Secret, a field), or when a mount path is not one of the
// container's.
func Env(d *appsv1.Deployment, mounts map[string]string) ([]string, error) {
	ctr, err := workerContainer(d)
	if err != nil {
		return nil, err
	}
	for path := range mounts {
		if !slices.ContainsFunc(ctr.VolumeMounts, func(m corev1.VolumeMount) bool { return m.MountPath == path }) {
			return nil, fmt.Errorf("deployment %s/%s mounts nothing at %s", d.Namespace, d.Name, path)
		}
	}
	out := make([]string, 0, len(ctr.Env))
	for _, e := range ctr.Env {
		if e.Name == workerenv.HealthAddr || e.Name == workerenv.MetricsAddr {
			continue // two local workers would fight over the port
		}
		if e.ValueFrom != nil {
			return nil, fmt.Errorf("deployment %s/%s: env %s comes from a reference, which a local process cannot resolve", d.Namespace, d.Name, e.Name)
		}
		out = append(out, e.Name+"="+remount(e.Value, mounts))
	}
	return out, nil
}

// remount moves value from under a mount path to its local directory.
func remount(value string, mounts map[string]string) string {
	for path, local := range mounts {
		if rest, ok := strings.CutPrefix(value, path+"/"); ok {
			return local + "/" + rest
		}
	}
	return value
}

// Inherited returns this process's environment without the variables
// tinyctl sets on workers, for a local worker that also needs PATH, HOME
// and Go's settings (a `go run`) but must not pick up, say, a NATS_CREDS
// of the user's shell.
func Inherited() []string {
	return slices.DeleteFunc(os.Environ(), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return workerenv.Reserved(name)
	})
}

func workerContainer(d *appsv1.Deployment) (corev1.Container, error) {
	for _, c := range d.Spec.Template.Spec.Containers {
		if c.Name == render.ContainerName {
			return c, nil
		}
	}
	return corev1.Container{}, fmt.Errorf("deployment %s/%s has no %q container", d.Namespace, d.Name, render.ContainerName)
}
