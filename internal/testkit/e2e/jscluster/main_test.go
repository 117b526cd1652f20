package jscluster_test

import (
	"testing"

	"github.com/tinyctl/tinyctl/internal/testkit/testenv"
)

var (
	kube   *testenv.Kube
	binary string // tinyctl
)

func TestMain(m *testing.M) { testenv.RunWithKubeAndTinyctl(m, &kube, &binary) }
