package devnode

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/tinyctl/tinyctl/internal/statusview"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// resizer is a component whose worker is this repository's example
// worker, as dev's run annotation names it; its image is nowhere, so
// without the image dev builds its pods could not start.
const resizer = `apiVersion: tinyctl.io/v1alpha1
kind: Component
metadata:
  name: resizer
  namespace: media
  annotations:
    dev.tinyctl.io/run: go run ./examples/worker
spec:
  image: registry.example.com/media/resizer:1.0.0
  command: ["/resizer"]
  resources:
    requests: {cpu: 10m, memory: 16Mi}
    limits: {memory: 128Mi}
  jobs:
    subjects: ["media.resize.*"]
  replicas: 2
  egress: none
`

// TestDevNodeRunsTheWorkersAsPods runs `tinyctl dev --node` with one
// component: its worker, built from the run annotation, runs as two pods
// on the node, the component is Ready with reason Available, jobs sent to
// its subjects are processed by the pods, and Ctrl-C stops everything with
// exit 0.
func TestDevNodeRunsTheWorkersAsPods(t *testing.T) {
	root, err := testenv.RepoRoot()
	testenv.Must(t, err)
	spec := filepath.Join(t.TempDir(), "resizer.yaml")
	testenv.Must(t, os.WriteFile(spec, []byte(resizer), 0o600))
	d := startDev(t, root, "--node", "--nats-port", "-1", "--health-addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--examples", spec)
	out := d.waitFor(t, "Press Ctrl-C to stop everything.", 15*time.Minute) // the banner's last line
	kubeconfig, natsURL := valueAfter(out, "export KUBECONFIG="), valueAfter(out, "export TINYCTL_NATS_URL=")
	if !strings.Contains(out, "media.resizer: runs as pods of image tinyctl.local/dev/media-resizer:dev") ||
		!strings.Contains(out, "A real node runs the workers as pods") {
		t.Errorf("dev --node does not say its workers run as pods of the image it built:\n%s", out)
	}

	// Ready: two pods run the revision.
	testenv.Eventually(t, 3*time.Minute, func() error {
		it, err := status(natsURL)
		if err != nil {
			return err
		}
		if it.Ready != "True" || it.Reason != "Available" {
			return fmt.Errorf("resizer: ready %s reason %s (%s), want Ready Available", it.Ready, it.Reason, it.Message)
		}
		return nil
	})
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	testenv.Must(t, err)
	pods, err := kubernetes.NewForConfigOrDie(cfg).CoreV1().Pods("media").List(context.Background(),
		metav1.ListOptions{LabelSelector: "app.kubernetes.io/name=resizer"})
	testenv.Must(t, err)
	if len(pods.Items) != 2 || pods.Items[0].Spec.Containers[0].Image != "tinyctl.local/dev/media-resizer:dev" {
		t.Errorf("resizer pods: %d, want 2 of image tinyctl.local/dev/media-resizer:dev", len(pods.Items))
	}

	// Jobs go to the pods.
	nc, err := nats.Connect(natsURL)
	testenv.Must(t, err)
	defer nc.Close()
	js, err := jetstream.New(nc)
	testenv.Must(t, err)
	ctx := context.Background()
	const jobs = 20
	for i := range jobs {
		_, err := js.Publish(ctx, "media.resize.small", fmt.Appendf(nil, `{"image":"s3://b/%d.png","sizes":[64]}`, i))
		testenv.Must(t, err)
	}
	testenv.Eventually(t, time.Minute, func() error {
		c, err := js.Consumer(ctx, "tinyctl_media_resizer", "tinyctl_media_resizer_worker")
		if err != nil {
			return err
		}
		ci := c.CachedInfo()
		if ci.NumPending != 0 || ci.NumAckPending != 0 || ci.AckFloor.Consumer < jobs {
			return fmt.Errorf("consumer: %d pending, %d unacknowledged, %d acked; want every one of %d acked", ci.NumPending, ci.NumAckPending, ci.AckFloor.Consumer, jobs)
		}
		return nil
	})

	d.interrupt(t)
}

// status reads `tinyctl status resizer -n media -o json`'s one row.
func status(natsURL string) (statusview.StatusItem, error) {
	out, err := exec.Command(tinyctlBin, "status", "resizer", "-n", "media", "-o", "json", "--nats-url", natsURL, "--nats-context", "").Output()
	if err != nil {
		return statusview.StatusItem{}, fmt.Errorf("status: %w", err)
	}
	var list statusview.StatusList
	if err := json.Unmarshal(out, &list); err != nil || len(list.Items) != 1 {
		return statusview.StatusItem{}, fmt.Errorf("status: %d rows (%v): %s", len(list.Items), err, out)
	}
	return list.Items[0], nil
}

// dev is a running `tinyctl dev`, its output collected.
type dev struct {
	cmd   *exec.Cmd
	mu    sync.Mutex
	out   strings.Builder
	lines chan string
	done  chan struct{}
}

// startDev starts `tinyctl dev args...` in dir; cleanup kills it if the
// test did not stop it.
func startDev(t *testing.T, dir string, args ...string) *dev {
	t.Helper()
	d := &dev{cmd: exec.Command(tinyctlBin, append([]string{"dev"}, args...)...), lines: make(chan string, 1000), done: make(chan struct{})}
	d.cmd.Dir, d.cmd.Env = dir, os.Environ()
	stdout, err := d.cmd.StdoutPipe()
	testenv.Must(t, err)
	d.cmd.Stderr = d.cmd.Stdout
	testenv.Must(t, d.cmd.Start())
	t.Cleanup(func() { _ = d.cmd.Process.Kill() })
	go func() {
		defer close(d.done)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			d.mu.Lock()
			fmt.Fprintln(&d.out, sc.Text())
			d.mu.Unlock()
			select {
			case d.lines <- sc.Text():
			default:
			}
		}
	}()
	return d
}

// waitFor returns the output so far once a line contains marker.
func (d *dev) waitFor(t *testing.T, marker string, within time.Duration) string {
	t.Helper()
	deadline := time.After(within)
	for {
		select {
		case l := <-d.lines:
			if strings.Contains(l, marker) {
				d.mu.Lock()
				defer d.mu.Unlock()
				return d.out.String()
			}
		case <-d.done:
			t.Fatalf("dev exited before %q:\n%s", marker, d.output())
		case <-deadline:
			t.Fatalf("no %q within %s:\n%s", marker, within, d.output())
		}
	}
}

func (d *dev) output() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.out.String()
}

// interrupt presses Ctrl-C and wants dev to exit 0 within two minutes.
func (d *dev) interrupt(t *testing.T) {
	t.Helper()
	testenv.Must(t, d.cmd.Process.Signal(syscall.SIGINT))
	select {
	case <-d.done:
	case <-time.After(2 * time.Minute):
		t.Fatalf("dev did not stop within 2 minutes of Ctrl-C:\n%s", d.output())
	}
	if err := d.cmd.Wait(); err != nil {
		t.Fatalf("dev exited with %v after Ctrl-C, want 0:\n%s", err, d.output())
	}
}

func valueAfter(out, prefix string) string {
	for _, l := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(l), prefix); ok {
			return v
		}
	}
	return ""
}
