package localnode

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tinyctl/tinyctl/internal/localkube"
)

// kubeletConfig is the KubeletConfiguration of a node here: cgroupfs on
// this machine's cgroup v1, no swap check, containerd's socket, the DNS
// server on the node's address, clients authenticated by the control
// plane's CA (the API server's kubelet client certificate) and authorized
// by the API server, and eviction thresholds low enough that a shared
// machine's disk does not evict the pods under test.
const kubeletConfig = `apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
cgroupDriver: cgroupfs
failCgroupV1: false
failSwapOn: false
containerRuntimeEndpoint: unix://%[1]s
clusterDNS: [%[2]q]
clusterDomain: cluster.local
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: %[3]q}
authorization:
  mode: Webhook
evictionHard:
  memory.available: 100Mi
  nodefs.available: 1%%
  nodefs.inodesFree: 1%%
  imagefs.available: 1%%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
serializeImagePulls: false
rotateCertificates: false
resolvConf: /etc/resolv.conf
`

// startKubelet writes kubelet's configuration and starts it with the
// control plane's admin kubeconfig; the node name is the host name (it
// resolves to this machine, so the API server reaches kubelet for logs
// and exec).
func (n *Node) startKubelet(context.Context) error {
	root := filepath.Join(n.Dir, "kubelet")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	conf := filepath.Join(root, "config.yaml")
	body := fmt.Sprintf(kubeletConfig, n.socket(), n.IP, n.cp.CAFile())
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		return err
	}
	return n.run("kubelet", n.opts.Binaries.Kubelet,
		"--config="+conf,
		"--kubeconfig="+n.cp.Kubeconfig,
		"--root-dir="+root,
		"--cert-dir="+filepath.Join(root, "pki"),
		"--node-ip="+n.IP,
		"--v=1")
}

// kubeProxyConfig runs kube-proxy in iptables mode for the pod range,
// leaving conntrack's sysctls and its own OOM score alone (this machine
// cannot lower it).
const kubeProxyConfig = `apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection:
  kubeconfig: %[1]q
mode: iptables
clusterCIDR: %[2]q
hostnameOverride: %[3]q
healthzBindAddress: 127.0.0.1:%[4]d
metricsBindAddress: 127.0.0.1:%[5]d
oomScoreAdj: 0
conntrack:
  maxPerCore: 0
  min: 0
  tcpEstablishedTimeout: 0s
  tcpCloseWaitTimeout: 0s
`

// startControllers starts kube-controller-manager (ReplicaSets, service
// accounts and their tokens' CA, the node lifecycle), kube-scheduler and
// kube-proxy, each with the admin kubeconfig and no leader election.
func (n *Node) startControllers(context.Context) error {
	ports, err := localkube.FreePorts(4)
	if err != nil {
		return err
	}
	kc := n.cp.Kubeconfig
	if err := n.run("kube-controller-manager", n.opts.Binaries.ControllerManager,
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false",
		"--service-account-private-key-file="+n.cp.ServiceAccountKeyFile(),
		"--root-ca-file="+n.cp.CAFile(),
		"--use-service-account-credentials=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[0]),
		"--cluster-name=localkube",
		// The node's spec.podCIDR says which range its pods get, as node
		// IPAM says it on most clusters: the whole PodCIDR, one node.
		"--allocate-node-cidrs=true", "--cluster-cidr="+PodCIDR, "--node-cidr-mask-size-ipv4=16",
		"--v=1"); err != nil {
		return err
	}
	if err := n.run("kube-scheduler", n.opts.Binaries.Scheduler,
		"--kubeconfig="+kc, "--authentication-kubeconfig="+kc, "--authorization-kubeconfig="+kc,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(ports[1]),
		"--v=1"); err != nil {
		return err
	}
	conf := filepath.Join(n.Dir, "kube-proxy.yaml")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf(kubeProxyConfig, kc, PodCIDR, n.Name, ports[2], ports[3])), 0o644); err != nil {
		return err
	}
	return n.run("kube-proxy", n.opts.Binaries.Proxy, "--config="+conf, "--v=1")
}
