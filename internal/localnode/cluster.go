package localnode

import (
	"context"
	"fmt"
	"io"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// Cluster is a one-node cluster: a localkube control plane that pods can
// reach, and a node.
type Cluster struct {
	*localkube.ControlPlane
	Node *Node
}

// StartCluster starts a control plane advertised on the host's address and
// a node for it, with the images given (the pause image among them). On
// failure it stops what it started.
func StartCluster(ctx context.Context, images []string, log io.Writer) (*Cluster, error) {
	if log == nil {
		log = io.Discard
	}
	if err := checkPrerequisites(); err != nil {
		return nil, err
	}
	ip, err := HostIP()
	if err != nil {
		return nil, err
	}
	cp, err := localkube.Start(ctx, localkube.Options{Log: log, AdvertiseAddress: ip, AuditLog: true})
	if err != nil {
		return nil, err
	}
	n, err := Start(ctx, cp, Options{Images: images, Log: log})
	if err != nil {
		cp.Stop()
		return nil, fmt.Errorf("node: %w", err)
	}
	return &Cluster{ControlPlane: cp, Node: n}, nil
}

// Stop stops the node, then the control plane.
func (c *Cluster) Stop() {
	c.Node.Stop()
	c.ControlPlane.Stop()
}
