package fleet_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/tinyctl/tinyctl/internal/localkube"
	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var (
	// kubes are the two clusters' API servers; binary is tinyctl.
	kubes  [2]*testenv.Kube
	binary string
)

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, cleanup, err := testenv.BuildTinyctl()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer cleanup()
	binary = bin
	for i := range kubes {
		k, err := testenv.StartKube(localkube.Options{})
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		defer k.Stop()
		kubes[i] = k
	}
	return m.Run()
}
