// Package devnode is the end-to-end test of `tinyctl dev --node`: dev mode
// with a real node (package localnode), run as a user runs it, from the
// repository's root, with its workers as pods.
package devnode

import (
	"fmt"
	"os"
	"testing"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// tinyctlBin is the tinyctl binary under test.
var tinyctlBin string

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	bin, cleanup, err := testenv.BuildTinyctl()
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e/devnode:", err)
		return 1
	}
	defer cleanup()
	tinyctlBin = bin
	return m.Run()
}
