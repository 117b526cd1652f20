package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/api"
	"github.com/tinyctl/tinyctl/api/overrides"
	"github.com/tinyctl/tinyctl/api/validate"
	"github.com/tinyctl/tinyctl/client"
	"github.com/tinyctl/tinyctl/internal/cli"
	"github.com/tinyctl/tinyctl/render"
)

// clusterFlag is --cluster: render with the settings a cluster's controller
// reports in its heartbeat instead of the defaults.
type clusterFlag struct{ name string }

func (f *clusterFlag) addFlag(fs *pflag.FlagSet) {
	fs.StringVar(&f.name, "cluster", "", "render with the settings and overrides of this cluster, as its controller reports them (default: a default `tinyctl install`, a cluster named default, without labels)")
	cli.BindEnv(fs, "cluster", "TINYCTL_CLUSTER")
}

// clusterView is what commands need to know about the target cluster:
// how it renders, which subjects each namespace may use there, and its
// name and labels, which select the component's overrides.
type clusterView struct {
	render  render.Cluster
	tenancy validate.Tenancy
	cluster overrides.Cluster
}

// resolve returns c as it runs on the cluster: with the overrides that
// select it merged in. It returns an error naming the overrides that
// conflict there.
func (v clusterView) resolve(c api.Component) (api.Component, error) {
	return overrides.Resolve(c, v.cluster)
}

// view returns the defaults (a cluster named render.DefaultClusterName
// without labels), or the named cluster's settings and labels as its live
// heartbeat carries them.
func (f *clusterFlag) view(ctx context.Context, o *options) (clusterView, error) {
	if f.name == "" {
		return clusterView{render: render.DefaultCluster(), cluster: overrides.Cluster{Name: render.DefaultClusterName}}, nil
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
	v := clusterView{render: hb.Settings.WithDefaults(), cluster: overrides.Cluster{Name: hb.Cluster, Labels: hb.Labels}}
	if hb.Tenancy != nil {
		v.tenancy = *hb.Tenancy
	}
	return v, nil
}
