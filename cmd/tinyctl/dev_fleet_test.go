package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestDevFleetRunsAHubAndItsClusters runs `tinyctl dev --clusters 2`: the
// examples published at the hub become Deployments in both clusters' API
// servers (the one placed on env=prod in neither), `tinyctl clusters` at
// the hub lists both as members with their labels, and Ctrl-C stops it.
func TestDevFleetRunsAHubAndItsClusters(t *testing.T) {
	cmd := exec.Command(binary, "dev", "--clusters", "2", "--nats-port", "-1", "--examples", "examples")
	cmd.Dir = filepath.Join("..", "..")
	cmd.Env = os.Environ()
	stdout, err := cmd.StdoutPipe()
	testenv.Must(t, err)
	cmd.Stderr = cmd.Stdout
	testenv.Must(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	out := readUntil(t, lines, "Press Ctrl-C", 4*time.Minute)
	go func() { // keep reading, or the dev process blocks on its output
		for range lines {
		}
	}()
	hubURL := valueAfter(out, "export TINYCTL_NATS_URL=")
	kubeconfigs := map[string]string{}
	for _, m := range regexp.MustCompile(`(dev-\d) \(labels [^)]*\): KUBECONFIG=(\S+)`).FindAllStringSubmatch(out, -1) {
		kubeconfigs[m[1]] = m[2]
	}
	if hubURL == "" || len(kubeconfigs) != 2 {
		t.Fatalf("hub URL %q, kubeconfigs %v in:\n%s", hubURL, kubeconfigs, out)
	}
	for name, kc := range kubeconfigs {
		cs := clientFor(t, kc)
		testenv.Eventually(t, 60*time.Second, func() error {
			_, err := cs.AppsV1().Deployments("media").Get(context.Background(), "thumbnailer", metav1.GetOptions{})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
		if _, err := cs.AppsV1().Deployments("search").Get(context.Background(), "search-indexer", metav1.GetOptions{}); err == nil {
			t.Errorf("%s runs search-indexer, placed on env=prod", name)
		}
	}
	var list struct {
		Items []struct {
			Name   string
			Labels map[string]string
			Member *struct{ Domain string }
		}
	}
	testenv.Eventually(t, 30*time.Second, func() error {
		c := exec.Command(binary, "clusters", "-o", "json", "--nats-url", hubURL, "--nats-context", "")
		b, err := c.Output()
		if err != nil {
			return err
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return err
		}
		if len(list.Items) != 2 || list.Items[0].Member == nil || list.Items[1].Labels["region"] != "r2" {
			return fmt.Errorf("clusters at the hub: %s", b)
		}
		return nil
	})
	testenv.Must(t, cmd.Process.Signal(syscall.SIGINT))
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("dev --clusters exited with %v after Ctrl-C, want 0", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("dev --clusters did not stop within 60s of Ctrl-C")
	}
}
