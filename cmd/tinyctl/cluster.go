package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/render"
)

// clusterFlag is --cluster: render with the settings a cluster's controller
// reports in its heartbeat instead of the defaults.
type clusterFlag struct{ name string }

func (f *clusterFlag) addFlag(fs *pflag.FlagSet) {
	fs.StringVar(&f.name, "cluster", "", "render with the settings the controller of this cluster reports (default: the settings of a default `tinyctl install`)")
	cli.BindEnv(fs, "cluster", "TINYCTL_CLUSTER")
}

// settings returns the render settings to use: the defaults, or the named
// cluster's as its live heartbeat carries them.
func (f *clusterFlag) settings(ctx context.Context, o *options) (render.Cluster, error) {
	if f.name == "" {
		return render.DefaultCluster(), nil
	}
	s, err := o.open(ctx, "", false)
	if err != nil {
		return render.Cluster{}, err
	}
	defer s.Close()
	hb, err := s.Cluster(ctx, f.name)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return render.Cluster{}, fmt.Errorf("cluster %q has no live heartbeat: is its controller running? (tinyctl status -A lists the clusters that report)", f.name)
	case err != nil:
		return render.Cluster{}, err
	case hb.Settings == nil:
		return render.Cluster{}, fmt.Errorf("cluster %q: its controller does not report its settings (upgrade it)", f.name)
	}
	return hb.Settings.WithDefaults(), nil
}
