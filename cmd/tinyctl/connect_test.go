package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

// TestNoNATSSaysWhatToDo is a new user's first command with nothing
// running: a quick, clear error (the connect gives up after 5s, not after
// --request-timeout) that names the URL and the way out.
func TestNoNATSSaysWhatToDo(t *testing.T) {
	url := "nats://" + testenv.FreeAddr(t) // nothing listens there
	cmd := exec.Command(binary, "list", "--nats-url", url, "--nats-context", "")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != exitError {
		t.Fatalf("exit = %v, want %d\n%s", err, exitError, out)
	}
	for _, want := range []string{"connect to " + url, "Is NATS running there?", "go run ./cmd/tinyctl dev"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output does not say %q:\n%s", want, out)
		}
	}
}
