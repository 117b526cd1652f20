package keyring

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"strings"
	"time"
)

// The Secret of the broker's routes (a JetStream cluster of several
// servers): a CA of its own and one certificate, valid as server and as
// client, that every server presents on its routes and requires from the
// others. The keys are a kubernetes.io/tls Secret's, with the CA beside.
const (
	RoutesSecret  = "nats-routes"
	RoutesCAKey   = "ca.crt"
	RoutesCertKey = "tls.crt"
	RoutesKeyKey  = "tls.key"
)

// RoutesValidity is how long a routes certificate (and its CA) is valid.
// Nothing outside the broker's pods sees them; renewing means deleting the
// Secret, running install again and restarting the broker pods.
const RoutesValidity = 10 * 365 * 24 * time.Hour

// RouteNames are the names a broker's route certificate must be valid
// for: every pod of StatefulSet fullname behind its headless Service in
// namespace ns (routes dial pod DNS names; nats-server checks a route to a
// gossiped IP against the first configured name).
func RouteNames(fullname, ns string) []string {
	host := fullname + "-headless." + ns + ".svc"
	return []string{"*." + host, "*." + host + ".cluster.local"}
}

// NewRoutesCertificate returns the data of a routes Secret: a new CA
// (ECDSA P-256) and a certificate it signs for names (DNS names, or IP
// addresses), usable to serve and to dial, with its key. Both are valid
// from now for RoutesValidity.
func NewRoutesCertificate(names []string, now time.Time) (map[string][]byte, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	ca := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "tinyctl broker routes CA"},
		NotBefore:             now.Add(-time.Minute),
		NotAfter:              now.Add(RoutesValidity),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("routes CA: %w", err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	leaf := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "tinyctl broker route"},
		NotBefore:    now.Add(-time.Minute),
		NotAfter:     now.Add(RoutesValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	for _, n := range names {
		if ip := net.ParseIP(n); ip != nil {
			leaf.IPAddresses = append(leaf.IPAddresses, ip)
		} else {
			leaf.DNSNames = append(leaf.DNSNames, n)
		}
	}
	caCert, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	der, err := x509.CreateCertificate(rand.Reader, leaf, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("routes certificate: %w", err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{
		RoutesCAKey:   pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}),
		RoutesCertKey: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		RoutesKeyKey:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}),
	}, nil
}

// RoutesCertificateCovers reports whether the routes Secret data holds a
// certificate that is valid at now for every one of names, signed by the
// CA beside it, with its private key.
func RoutesCertificateCovers(data map[string][]byte, names []string, now time.Time) error {
	if _, err := tls.X509KeyPair(data[RoutesCertKey], data[RoutesKeyKey]); err != nil {
		return fmt.Errorf("%s and %s: %w", RoutesCertKey, RoutesKeyKey, err)
	}
	block, _ := pem.Decode(data[RoutesCertKey])
	if block == nil {
		return fmt.Errorf("no PEM certificate under %s", RoutesCertKey)
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return fmt.Errorf("%s: %w", RoutesCertKey, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data[RoutesCAKey]) {
		return fmt.Errorf("no PEM certificate under %s", RoutesCAKey)
	}
	for _, n := range names {
		host := n
		if rest, ok := strings.CutPrefix(n, "*."); ok {
			host = "pod." + rest // any name the wildcard covers
		}
		if _, err := cert.Verify(x509.VerifyOptions{DNSName: host, Roots: pool, CurrentTime: now,
			KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}}); err != nil {
			return err
		}
	}
	return nil
}

// serial is a random 128-bit certificate serial number.
func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 128))
	if err != nil {
		panic(err) // crypto/rand does not fail on supported platforms
	}
	return n
}
