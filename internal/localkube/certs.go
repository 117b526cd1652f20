package localkube

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// secrets are the credentials one control plane runs with, written as files
// under its state directory.
type secrets struct {
	caPEM      []byte
	caFile     string
	certFile   string
	keyFile    string
	saKeyFile  string
	tokenFile  string
	adminToken string
	// kubeletClientCert and kubeletClientKey are the API server's client
	// certificate for kubelets (logs, exec): in system:masters.
	kubeletClientCert string
	kubeletClientKey  string
	// proxyClientCert and proxyClientKey are what the API server's
	// aggregation layer presents to an extension API server (KEDA's
	// metrics server): CN front-proxy-client, which the request-header
	// flags trust.
	proxyClientCert string
	proxyClientKey  string
}

// FrontProxyClientName is the aggregation layer's client certificate CN,
// the one name --requestheader-allowed-names accepts.
const FrontProxyClientName = "front-proxy-client"

// writeSecrets generates a CA, a serving certificate for 127.0.0.1,
// localhost and advertise (an IP, when not empty), a client certificate in
// system:masters for calls to kubelets, a service-account signing key and
// an admin bearer token in system:masters, and the aggregation layer's
// client certificate.
func writeSecrets(dir, advertise string) (secrets, error) {
	s := secrets{
		caFile:            filepath.Join(dir, "ca.crt"),
		certFile:          filepath.Join(dir, "apiserver.crt"),
		keyFile:           filepath.Join(dir, "apiserver.key"),
		saKeyFile:         filepath.Join(dir, "sa.key"),
		tokenFile:         filepath.Join(dir, "tokens.csv"),
		kubeletClientCert: filepath.Join(dir, "apiserver-kubelet-client.crt"),
		kubeletClientKey:  filepath.Join(dir, "apiserver-kubelet-client.key"),
		proxyClientCert:   filepath.Join(dir, "front-proxy-client.crt"),
		proxyClientKey:    filepath.Join(dir, "front-proxy-client.key"),
	}
	files, err := s.issue(advertise)
	if err != nil {
		return s, err
	}
	for path, b := range files {
		if err := os.WriteFile(path, b, 0o600); err != nil {
			return s, fmt.Errorf("write %s: %w", path, err)
		}
	}
	return s, nil
}

// issue makes the CA, the API server's serving certificate (for
// advertise too), its kubelet and front-proxy client certificates, the
// service-account key and the admin token, and returns the files to
// write by path.
func (s *secrets) issue(advertise string) (map[string][]byte, error) {
	caKey, caCert, caDER, err := newCA()
	if err != nil {
		return nil, err
	}
	s.caPEM = pemBlock("CERTIFICATE", caDER)
	ips := []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("10.0.0.1")}
	if ip := net.ParseIP(advertise); ip != nil {
		ips = append(ips, ip)
	}
	certDER, keyDER, err := newLeaf(caKey, caCert, leaf{
		serial: 2, cn: "kube-apiserver", usage: x509.ExtKeyUsageServerAuth,
		dns: []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
		ips: ips,
	})
	if err != nil {
		return nil, err
	}
	clientDER, clientKeyDER, err := newLeaf(caKey, caCert, leaf{
		serial: 3, cn: "kube-apiserver-kubelet-client", org: "system:masters", usage: x509.ExtKeyUsageClientAuth,
	})
	if err != nil {
		return nil, err
	}
	proxyDER, proxyKeyDER, err := newLeaf(caKey, caCert, leaf{serial: 4, cn: FrontProxyClientName, usage: x509.ExtKeyUsageClientAuth})
	if err != nil {
		return nil, err
	}
	saKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, fmt.Errorf("service-account key: %w", err)
	}
	if s.adminToken, err = randomHex(24); err != nil {
		return nil, err
	}
	return map[string][]byte{
		s.caFile:            s.caPEM,
		s.certFile:          pemBlock("CERTIFICATE", certDER),
		s.keyFile:           pemBlock("EC PRIVATE KEY", keyDER),
		s.saKeyFile:         pemBlock("RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey(saKey)),
		s.tokenFile:         []byte(s.adminToken + ",admin,admin-uid,system:masters\n"),
		s.kubeletClientCert: pemBlock("CERTIFICATE", clientDER),
		s.kubeletClientKey:  pemBlock("EC PRIVATE KEY", clientKeyDER),
		s.proxyClientCert:   pemBlock("CERTIFICATE", proxyDER),
		s.proxyClientKey:    pemBlock("EC PRIVATE KEY", proxyKeyDER),
	}, nil
}

func newCA() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "localkube-ca"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(10 * 365 * 24 * time.Hour),
		IsCA:                  true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("ca certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("ca certificate: %w", err)
	}
	return key, cert, der, nil
}

// leaf describes a certificate the CA signs.
type leaf struct {
	serial  int64
	cn, org string
	usage   x509.ExtKeyUsage
	dns     []string
	ips     []net.IP
}

func newLeaf(caKey *ecdsa.PrivateKey, ca *x509.Certificate, l leaf) (certDER, keyDER []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", l.cn, err)
	}
	subject := pkix.Name{CommonName: l.cn}
	if l.org != "" {
		subject.Organization = []string{l.org}
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(l.serial),
		Subject:      subject,
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{l.usage},
		DNSNames:     l.dns,
		IPAddresses:  l.ips,
	}
	certDER, err = x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("%s certificate: %w", l.cn, err)
	}
	keyDER, err = x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("%s key: %w", l.cn, err)
	}
	return certDER, keyDER, nil
}

func pemBlock(kind string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
}

func randomHex(n int) (string, error) {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("random: %w", err)
	}
	return hex.EncodeToString(b), nil
}
