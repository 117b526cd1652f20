package provision

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	helmclient "github.com/mittwald/go-helm-client"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/tinyctl/tinyctl/apply"
	"github.com/tinyctl/tinyctl/render"
)

// Defaults of Options.
const (
	DefaultTimeout = 5 * time.Minute
	// DefaultStuckAfter is how old a pending release must be before it is
	// treated as interrupted rather than in progress.
	DefaultStuckAfter = DefaultTimeout + time.Minute
	// DefaultMaxHistory is how many revisions Helm keeps per release.
	DefaultMaxHistory = 10
)

// Options tune a Provisioner. Zero fields take the documented defaults.
type Options struct {
	// Namespace is the runtime namespace (default tinyctl-system, where
	// render expects the broker).
	Namespace string
	// Wait makes every release wait until its workloads are ready (they
	// never are on a control plane without nodes).
	Wait bool
	// Timeout bounds each Helm operation and each wait (default 5m).
	Timeout time.Duration
	// StuckAfter is the age after which a pending-install or
	// pending-upgrade release counts as interrupted (default 6m).
	StuckAfter time.Duration
	// CacheDir holds chart repository indexes and downloaded charts
	// (default <user cache dir>/tinyctl/helm).
	CacheDir string
	// HelmLog receives Helm's debug messages; nil discards them.
	HelmLog func(format string, args ...any)
	// Now is the clock used to age pending releases (default time.Now).
	Now func() time.Time
}

func (o Options) withDefaults() Options {
	if o.Namespace == "" {
		o.Namespace = render.DefaultNATSNamespace
	}
	if o.Timeout <= 0 {
		o.Timeout = DefaultTimeout
	}
	if o.StuckAfter <= 0 {
		o.StuckAfter = DefaultStuckAfter
	}
	if o.CacheDir == "" {
		o.CacheDir = defaultCacheDir()
	}
	if o.HelmLog == nil {
		o.HelmLog = func(string, ...any) {}
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

func defaultCacheDir() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		dir = os.TempDir()
	}
	return filepath.Join(dir, "tinyctl", "helm")
}

// Provisioner installs, upgrades and removes the tinyctl runtime of one
// cluster. It is safe for sequential use; run one install at a time per
// runtime namespace.
type Provisioner struct {
	cfg     *rest.Config
	opts    Options
	kube    kubernetes.Interface
	dyn     dynamic.Interface
	applier *apply.Manager

	mu    sync.Mutex
	helms map[string]*helmclient.HelmClient
}

// New returns a Provisioner for the cluster cfg reaches. It contacts no
// server; it fails only when cfg cannot build clients.
func New(cfg *rest.Config, opts Options) (*Provisioner, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("provision: kubernetes client: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("provision: dynamic client: %w", err)
	}
	a, err := apply.New(cfg, render.AnnotationContentHash)
	if err != nil {
		return nil, fmt.Errorf("provision: %w", err)
	}
	return &Provisioner{
		cfg: rest.CopyConfig(cfg), opts: opts.withDefaults(),
		kube: kube, dyn: dyn, applier: a,
		helms: map[string]*helmclient.HelmClient{},
	}, nil
}

// Namespace returns the runtime namespace.
func (p *Provisioner) Namespace() string { return p.opts.Namespace }
