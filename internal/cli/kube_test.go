package cli_test

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/tinyctl/tinyctl/internal/cli"
)

func TestNoKubeconfigSaysWhereOneComesFrom(t *testing.T) {
	t.Setenv("HOME", t.TempDir())
	t.Setenv("KUBECONFIG", "")
	_, err := (&cli.KubeFlags{}).RESTConfig(time.Second, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "no Kubernetes cluster configured") ||
		!strings.Contains(err.Error(), "export KUBECONFIG=") {
		t.Fatalf("err = %v, want a hint on --kubeconfig, KUBECONFIG and tinyctl dev", err)
	}
}
