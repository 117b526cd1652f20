package devmode

import (
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/cluster"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/internal/localrun"
	"github.com/tinyctl/tinyctl/render"
)

// workerStopGrace is how long a local worker gets to drain after SIGTERM:
// the grace Kubernetes gives a pod.
const workerStopGrace = 30 * time.Second

// renderCluster is what the dev controller renders for; local workers get the
// same environment with natsURL, the embedded server, as NATS_URL.
func renderCluster(natsURL string) render.Cluster {
	return render.Cluster{Name: ClusterName, NATS: render.NATS{URL: natsURL}}
}

// localWorkers are the worker processes dev mode started.
type localWorkers struct {
	procs    map[string]*localrun.Process // by component
	stopping atomic.Bool
}

// startWorkers runs a local worker for every component placed on the dev
// cluster that names one in api.AnnotationDevRun, from the current
// directory, and says for every other component why none runs. A worker
// that cannot start is reported and skipped.
func startWorkers(out io.Writer, comps []api.Component, natsURL string) *localWorkers {
	w := &localWorkers{procs: map[string]*localrun.Process{}}
	for _, c := range comps {
		name := c.Metadata.Namespace + "/" + c.Metadata.Name
		p, err := startWorker(out, c, name, natsURL)
		if err != nil {
			fmt.Fprintf(out, "  %s: no local worker: %v\n", name, err)
			continue
		}
		if p != nil {
			w.procs[name] = p
			go w.reportExit(out, name, p)
		}
	}
	return w
}

// reportExit says when a worker exits before dev mode stops it; it is not
// restarted.
func (w *localWorkers) reportExit(out io.Writer, name string, p *localrun.Process) {
	<-p.Done()
	if !w.stopping.Load() {
		fmt.Fprintf(out, "  %s: local worker exited (%v); it is not restarted\n", name, exitStatus(p.Err()))
	}
}

func exitStatus(err error) string {
	if err == nil {
		return "status 0"
	}
	return err.Error()
}

// startWorker starts c's local worker, or returns nil and says why none
// runs.
func startWorker(out io.Writer, c api.Component, name, natsURL string) (*localrun.Process, error) {
	run := strings.Fields(c.Metadata.Annotations[api.AnnotationDevRun])
	switch {
	case !(cluster.Identity{Name: ClusterName, Labels: ClusterLabels}).Places(c):
		fmt.Fprintf(out, "  %s: no local worker: its placement does not select cluster %q\n", name, ClusterName)
		return nil, nil
	case len(run) == 0:
		fmt.Fprintf(out, "  %s: no local worker: no pods run in dev mode; set metadata.annotations[%q] to a command (e.g. \"go run ./examples/worker\") to run one here\n",
			name, api.AnnotationDevRun)
		return nil, nil
	}
	c, err := overrides.Resolve(c, cluster.Identity{Name: ClusterName, Labels: ClusterLabels})
	if err != nil {
		return nil, err
	}
	objs, err := render.Render(c, 0, renderCluster(natsURL))
	if err != nil {
		return nil, err
	}
	env, err := localrun.Env(objs.Deployment, nil)
	if err != nil {
		return nil, err
	}
	// SIGINT, as Ctrl-C in a terminal: `go run` dies of SIGTERM at once and
	// leaves its program orphaned, but on SIGINT waits for the program.
	p, err := localrun.Start(localrun.Command{Name: name, Argv: run, Env: append(localrun.Inherited(), env...),
		StopSignal: syscall.SIGINT}, out)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "  %s: local worker started: %s (pid %d), output prefixed %q\n", name, strings.Join(run, " "), p.Pid(), name+" | ")
	return p, nil
}

// stop signals every worker at once and waits for them to drain.
func (w *localWorkers) stop(out io.Writer) {
	w.stopping.Store(true)
	errs := make(chan error, len(w.procs))
	for name, p := range w.procs {
		go func() {
			if err := p.Stop(workerStopGrace); err != nil {
				errs <- fmt.Errorf("%s: local worker exited with %w", name, err)
				return
			}
			errs <- nil
		}()
	}
	for range w.procs {
		if err := <-errs; err != nil {
			fmt.Fprintf(out, "  %v\n", err)
		}
	}
}
