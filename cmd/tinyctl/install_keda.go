//go:build !noinstall

package main

import (
	"errors"

	"github.com/spf13/pflag"

	"github.com/tinyctl/tinyctl/provision"
)

// kedaFlags are install's flags that install KEDA from its chart.
type kedaFlags struct {
	fs                     *pflag.FlagSet
	with                   bool
	version, repo, dir, ns string
	values                 string
}

func (f *kedaFlags) addFlags(fs *pflag.FlagSet) {
	f.fs = fs
	fs.BoolVar(&f.with, "with-keda", false,
		"also install KEDA (its operator and metrics server) from the chart embedded in tinyctl, or from --keda-repo or --keda-chart-dir")
	fs.StringVar(&f.version, "keda-version", "", "version of KEDA's chart in --keda-repo (default "+provision.KEDAVersion+")")
	fs.StringVar(&f.repo, "keda-repo", "", "install KEDA's own chart from this chart repository ("+provision.KEDARepo+", or a mirror) instead of the embedded one")
	fs.StringVar(&f.dir, "keda-chart-dir", "", "install KEDA from this local chart directory or .tgz instead of a repository")
	fs.StringVar(&f.ns, "keda-namespace", provision.KEDANamespace, "namespace of the KEDA release")
	fs.StringVar(&f.values, "keda-values", "", "YAML file of values for KEDA's chart")
}

// release is the KEDA release the flags ask for, or nil without
// --with-keda.
func (f *kedaFlags) release() (*provision.Release, error) {
	changed := func(names ...string) bool {
		for _, n := range names {
			if f.fs.Changed(n) {
				return true
			}
		}
		return false
	}
	switch {
	case !f.with && changed("keda-version", "keda-repo", "keda-chart-dir", "keda-namespace", "keda-values"):
		return nil, usageError{errors.New("--keda-version, --keda-repo, --keda-chart-dir, --keda-namespace and --keda-values need --with-keda")}
	case !f.with:
		return nil, nil
	case f.dir != "" && changed("keda-version", "keda-repo"):
		return nil, usageError{errors.New("--keda-chart-dir installs the chart it holds: it cannot be combined with --keda-version or --keda-repo")}
	}
	vals, err := readValues(f.values)
	if err != nil {
		return nil, err
	}
	rel := provision.KEDA(provision.KEDAOptions{Repo: f.repo, Version: f.version, ChartPath: f.dir, Namespace: f.ns, Values: vals})
	return &rel, nil
}
