package jscluster_test

import (
	"testing"

	"github.com/tinyctl/tinyctl/internal/testenv"
)

var (
	kube   *testenv.Kube
	binary string // tinyctl
)

func TestMain(m *testing.M) { testenv.RunWithKubeAndTinyctl(m, &kube, &binary) }
