package localkube

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// readyTimeout bounds how long Start waits for /readyz.
const readyTimeout = 90 * time.Second

// Options configure Start.
type Options struct {
	// Binaries to run; zero means EnsureBinaries.
	Binaries Binaries
	// Log receives build progress and start/stop messages; nil discards.
	Log io.Writer
	// AuditLog, when true, makes the API server write a JSON audit log of
	// every mutating request to AuditLogPath, so tests can count writes.
	AuditLog bool
	// EtcdOf, when set, is a running control plane whose etcd this one
	// shares, under a key prefix of its own, instead of starting another:
	// many API servers (a fleet of clusters) for the cost of one etcd. It
	// must outlive this control plane.
	EtcdOf *ControlPlane
	// AdvertiseAddress, when set (an IP of this machine, not loopback),
	// makes the API server listen on every interface and publish that
	// address as the endpoint of the default namespace's kubernetes
	// Service, so that pods of a real node (package localnode) reach it;
	// its serving certificate names the address. Config and Kubeconfig
	// still use 127.0.0.1.
	AdvertiseAddress string
	// Profiling serves the API server's /debug/pprof (to system:masters),
	// for benchmarks that look at where its CPU goes.
	Profiling bool
}

// ControlPlane is a running etcd plus kube-apiserver on loopback.
type ControlPlane struct {
	// Config reaches the API server as an admin (system:masters).
	Config *rest.Config
	// Kubeconfig is the path of a kubeconfig file for kubectl and tinyctl.
	Kubeconfig string
	// Dir is the state directory: certificates, data, logs.
	Dir string

	opts      Options
	sec       secrets
	etcdPorts [2]int
	apiPort   int
	etcd      *Process
	api       *Process
}

// Start launches etcd and kube-apiserver and waits until the API server is
// ready. It reaps control planes abandoned by earlier killed runs first. On
// failure it stops whatever it started and returns an error that includes
// the tail of the failing process's log.
func Start(ctx context.Context, opts Options) (*ControlPlane, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Binaries == (Binaries{}) {
		b, err := EnsureBinaries(ctx, opts.Log)
		if err != nil {
			return nil, err
		}
		opts.Binaries = b
	}
	reapStale()
	if err := os.MkdirAll(stateRoot(), 0o755); err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	dir, err := os.MkdirTemp(stateRoot(), fmt.Sprintf("run-%d-", os.Getpid()))
	if err != nil {
		return nil, fmt.Errorf("state dir: %w", err)
	}
	cp := &ControlPlane{Dir: dir, opts: opts}
	if err := cp.prepare(); err != nil {
		cp.Stop()
		return nil, err
	}
	if err := cp.start(ctx); err != nil {
		cp.Stop()
		return nil, err
	}
	return cp, nil
}

func (cp *ControlPlane) prepare() error {
	var err error
	if cp.sec, err = writeSecrets(cp.Dir, cp.opts.AdvertiseAddress); err != nil {
		return err
	}
	ports, err := FreePorts(3)
	if err != nil {
		return err
	}
	cp.etcdPorts, cp.apiPort = [2]int{ports[0], ports[1]}, ports[2]
	if cp.opts.AuditLog {
		if err := os.WriteFile(filepath.Join(cp.Dir, "audit-policy.yaml"), []byte(auditPolicy), 0o600); err != nil {
			return fmt.Errorf("audit policy: %w", err)
		}
	}
	cp.Config = &rest.Config{
		Host:            "https://127.0.0.1:" + strconv.Itoa(cp.apiPort),
		BearerToken:     cp.sec.adminToken,
		TLSClientConfig: rest.TLSClientConfig{CAData: cp.sec.caPEM},
		QPS:             200,
		Burst:           400,
	}
	cp.Kubeconfig = filepath.Join(cp.Dir, "kubeconfig")
	return clientcmd.WriteToFile(cp.kubeconfig(), cp.Kubeconfig)
}

// auditPolicy records every mutating request at Metadata level.
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`

// Port is the API server's secure port.
func (cp *ControlPlane) Port() int { return cp.apiPort }

// CAFile is the path of the certificate authority's certificate (PEM): it
// signed the API server's serving certificate and its client certificate
// for kubelets.
func (cp *ControlPlane) CAFile() string { return cp.sec.caFile }

// ServiceAccountKeyFile is the path of the key (PEM) that signs service
// account tokens, for a controller manager.
func (cp *ControlPlane) ServiceAccountKeyFile() string { return cp.sec.saKeyFile }

// AuditLogPath is where the API server writes its audit log when
// Options.AuditLog is set.
func (cp *ControlPlane) AuditLogPath() string { return filepath.Join(cp.Dir, "audit.log") }

func (cp *ControlPlane) kubeconfig() clientcmdapi.Config {
	return clientcmdapi.Config{
		Clusters:       map[string]*clientcmdapi.Cluster{"localkube": {Server: cp.Config.Host, CertificateAuthorityData: cp.sec.caPEM}},
		AuthInfos:      map[string]*clientcmdapi.AuthInfo{"admin": {Token: cp.sec.adminToken}},
		Contexts:       map[string]*clientcmdapi.Context{"localkube": {Cluster: "localkube", AuthInfo: "admin"}},
		CurrentContext: "localkube",
	}
}

// etcdURL is where this control plane's etcd listens for clients.
func (cp *ControlPlane) etcdURL() string {
	if cp.opts.EtcdOf != nil {
		return cp.opts.EtcdOf.etcdURL()
	}
	return fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPorts[0])
}

func (cp *ControlPlane) start(ctx context.Context) error {
	var err error
	if cp.opts.EtcdOf == nil {
		cp.etcd, err = StartProcess(cp.Dir, "etcd", cp.opts.Binaries.Etcd,
			"--data-dir", filepath.Join(cp.Dir, "etcd-data"),
			"--listen-client-urls", cp.etcdURL(),
			"--listen-peer-urls", fmt.Sprintf("http://127.0.0.1:%d", cp.etcdPorts[1]))
		if err != nil {
			return err
		}
	}
	cp.api, err = StartProcess(cp.Dir, "kube-apiserver", cp.opts.Binaries.APIServer, cp.apiServerArgs(cp.etcdURL())...)
	if err != nil {
		return err
	}
	started := time.Now()
	if err := cp.waitReady(ctx); err != nil {
		return err
	}
	fmt.Fprintf(cp.opts.Log, "localkube: kube-apiserver ready at %s in %s\n", cp.Config.Host, time.Since(started).Round(time.Millisecond))
	return nil
}

func (cp *ControlPlane) apiServerArgs(etcdURL string) []string {
	bind := "127.0.0.1"
	if cp.opts.AdvertiseAddress != "" {
		bind = "0.0.0.0"
	}
	args := []string{
		"--etcd-servers=" + etcdURL,
		"--bind-address=" + bind,
		"--secure-port=" + strconv.Itoa(cp.apiPort),
		"--cert-dir=" + cp.Dir,
		"--tls-cert-file=" + cp.sec.certFile,
		"--tls-private-key-file=" + cp.sec.keyFile,
		"--client-ca-file=" + cp.sec.caFile,
		"--token-auth-file=" + cp.sec.tokenFile,
		"--authorization-mode=RBAC",
		"--service-cluster-ip-range=10.0.0.0/24",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + cp.sec.saKeyFile,
		"--service-account-signing-key-file=" + cp.sec.saKeyFile,
		"--kubelet-client-certificate=" + cp.sec.kubeletClientCert,
		"--kubelet-client-key=" + cp.sec.kubeletClientKey,
		// The aggregation layer, for extension API servers such as
		// KEDA's external metrics server.
		"--requestheader-client-ca-file=" + cp.sec.caFile,
		"--requestheader-allowed-names=" + FrontProxyClientName,
		"--requestheader-username-headers=X-Remote-User",
		"--requestheader-group-headers=X-Remote-Group",
		"--requestheader-extra-headers-prefix=X-Remote-Extra-",
		"--proxy-client-cert-file=" + cp.sec.proxyClientCert,
		"--proxy-client-key-file=" + cp.sec.proxyClientKey,
		"--allow-privileged=true",
		"--profiling=" + strconv.FormatBool(cp.opts.Profiling),
		"--v=1",
	}
	if cp.opts.EtcdOf != nil {
		args = append(args, "--etcd-prefix=/"+filepath.Base(cp.Dir))
	}
	if cp.opts.AdvertiseAddress != "" {
		args = append(args, "--advertise-address="+cp.opts.AdvertiseAddress)
	}
	if cp.opts.AuditLog {
		args = append(args,
			"--audit-policy-file="+filepath.Join(cp.Dir, "audit-policy.yaml"),
			"--audit-log-path="+cp.AuditLogPath(),
			"--audit-log-format=json",
			"--audit-log-mode=blocking")
	}
	return args
}

// waitReady polls /readyz until it answers 200, a child exits, or the
// deadline passes.
func (cp *ControlPlane) waitReady(ctx context.Context) error {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(cp.sec.caPEM)
	client := &http.Client{
		Timeout:   2 * time.Second,
		Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}},
	}
	defer client.CloseIdleConnections()
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		for _, p := range []*Process{cp.etcd, cp.api} {
			if p == nil {
				continue // a shared etcd
			}
			if done, err := p.Exited(); done {
				return fmt.Errorf("%w\n%s", err, cp.logTail(p.name))
			}
		}
		if last = cp.probe(ctx, client); last == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kube-apiserver not ready: %v: %w\n%s", last, ctx.Err(), cp.logTail("kube-apiserver"))
		case <-tick.C:
		}
	}
}

func (cp *ControlPlane) probe(ctx context.Context, client *http.Client) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cp.Config.Host+"/readyz", nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+cp.sec.adminToken)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("readyz: %s", resp.Status)
	}
	return nil
}

// logTail returns the last lines of a child's log for error messages.
func (cp *ControlPlane) logTail(name string) string { return LogTail(cp.Dir, name) }

// Restart stops the API server and etcd and starts them again on the same
// ports with the same data, credentials and certificates, for fault tests.
func (cp *ControlPlane) Restart(ctx context.Context) error {
	cp.stopChildren()
	return cp.start(ctx)
}

// Stop ends both processes and removes the state directory. It is safe to
// call more than once.
func (cp *ControlPlane) Stop() {
	cp.stopChildren()
	if cp.Dir != "" {
		_ = os.RemoveAll(cp.Dir)
	}
}

func (cp *ControlPlane) stopChildren() {
	if cp.api != nil {
		cp.api.Stop()
		cp.api = nil
	}
	if cp.etcd != nil {
		cp.etcd.Stop()
		cp.etcd = nil
	}
}
