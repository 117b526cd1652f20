package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api/validate"
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

// clusterView is what commands need to know about the target cluster:
// how it renders, and which subjects each namespace may use there.
type clusterView struct {
	render  render.Cluster
	tenancy validate.Tenancy
}

// view returns the defaults, or the named cluster's settings as its live
// heartbeat carries them.
func (f *clusterFlag) view(ctx context.Context, o *options) (clusterView, error) {
	if f.name == "" {
		return clusterView{render: render.DefaultCluster()}, nil
	}
	s, err := o.open(ctx, "", false)
	if err != nil {
		return clusterView{}, err
	}
	defer s.Close()
	hb, err := s.Cluster(ctx, f.name)
	switch {
	case errors.Is(err, client.ErrNotFound):
		return clusterView{}, fmt.Errorf("cluster %q has no live heartbeat: is its controller running? (tinyctl status -A lists the clusters that report)", f.name)
	case err != nil:
		return clusterView{}, err
	case hb.Settings == nil:
		return clusterView{}, fmt.Errorf("cluster %q: its controller does not report its settings (upgrade it)", f.name)
	}
	v := clusterView{render: hb.Settings.WithDefaults()}
	if hb.Tenancy != nil {
		v.tenancy = *hb.Tenancy
	}
	return v, nil
}
