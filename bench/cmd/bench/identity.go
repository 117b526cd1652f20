package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// controllerAccount is the ServiceAccount every controller under
// measurement runs as, in namespace controllerNamespace: as in a cluster,
// its requests go through API Priority and Fairness (flow schema
// service-accounts, priority level workload-low), which exempts the
// admin's system:masters requests.
const (
	controllerAccount   = "controller"
	controllerNamespace = "tinyctl-system"
)

// serviceAccountKubeconfig creates the controllers' ServiceAccount, binds
// it to cluster-admin (what it may do is not under measurement; whose
// requests they are is) and writes a kubeconfig with a token for it into
// dir.
func (e *env) serviceAccountKubeconfig(ctx context.Context, dir string) (string, error) {
	cs, err := kubernetes.NewForConfig(e.cp.Config)
	if err != nil {
		return "", err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: controllerNamespace}}
	if _, err := cs.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("namespace %s: %w", controllerNamespace, err)
	}
	sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: controllerAccount, Namespace: controllerNamespace}}
	if _, err := cs.CoreV1().ServiceAccounts(controllerNamespace).Create(ctx, sa, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("service account: %w", err)
	}
	crb := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "bench-controller"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: controllerAccount, Namespace: controllerNamespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, crb, metav1.CreateOptions{}); err != nil {
		return "", fmt.Errorf("cluster role binding: %w", err)
	}
	day := int64(24 * 60 * 60)
	tok, err := cs.CoreV1().ServiceAccounts(controllerNamespace).CreateToken(ctx, controllerAccount,
		&authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{ExpirationSeconds: &day}}, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters["bench"] = &clientcmdapi.Cluster{Server: e.cp.Config.Host, CertificateAuthorityData: e.cp.Config.CAData}
	cfg.AuthInfos[controllerAccount] = &clientcmdapi.AuthInfo{Token: tok.Status.Token}
	cfg.Contexts["bench"] = &clientcmdapi.Context{Cluster: "bench", AuthInfo: controllerAccount}
	cfg.CurrentContext = "bench"
	path := filepath.Join(dir, "controller.kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		return "", err
	}
	return path, os.Chmod(path, 0o600)
}
