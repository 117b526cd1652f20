package natstest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TLSFiles are the PEM files of a small test PKI: a CA, a server
// certificate for 127.0.0.1, ::1 and localhost, and a client certificate,
// all signed by that CA.
type TLSFiles struct {
	CA         string
	ServerCert string
	ServerKey  string
	ClientCert string
	ClientKey  string
}

// WriteTLSFiles generates a fresh PKI (ECDSA P-256) and writes it to a new
// directory under tb.TempDir(). Two calls give two unrelated PKIs, which is
// how tests build a certificate the server must refuse. It fails the test on
// any error.
func WriteTLSFiles(tb testing.TB) TLSFiles {
	tb.Helper()
	dir := filepath.Join(tb.TempDir(), "pki")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		tb.Fatalf("testenv: create pki dir: %v", err)
	}
	caKey, ca := newTestCA(tb)
	files := TLSFiles{
		CA:         filepath.Join(dir, "ca.pem"),
		ServerCert: filepath.Join(dir, "server.pem"),
		ServerKey:  filepath.Join(dir, "server-key.pem"),
		ClientCert: filepath.Join(dir, "client.pem"),
		ClientKey:  filepath.Join(dir, "client-key.pem"),
	}
	writePEM(tb, files.CA, "CERTIFICATE", ca.Raw)
	server := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "localhost"},
		DNSNames:    []string{"localhost"},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	issueLeaf(tb, caKey, ca, server, files.ServerCert, files.ServerKey)
	client := &x509.Certificate{
		Subject:     pkix.Name{CommonName: "tinyctl-test-client"},
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	issueLeaf(tb, caKey, ca, client, files.ClientCert, files.ClientKey)
	return files
}

func newTestCA(tb testing.TB) (*ecdsa.PrivateKey, *x509.Certificate) {
	tb.Helper()
	key := newECKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          serial(tb),
		Subject:               pkix.Name{CommonName: "tinyctl test CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatalf("testenv: create CA: %v", err)
	}
	ca, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatalf("testenv: parse CA: %v", err)
	}
	return key, ca
}

// issueLeaf completes tmpl (serial, validity, key usage), signs it with the
// CA and writes the certificate and its key.
func issueLeaf(tb testing.TB, caKey *ecdsa.PrivateKey, ca, tmpl *x509.Certificate, certPath, keyPath string) {
	tb.Helper()
	key := newECKey(tb)
	tmpl.SerialNumber = serial(tb)
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(24 * time.Hour)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		tb.Fatalf("testenv: sign %s: %v", tmpl.Subject.CommonName, err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		tb.Fatalf("testenv: marshal key: %v", err)
	}
	writePEM(tb, certPath, "CERTIFICATE", der)
	writePEM(tb, keyPath, "EC PRIVATE KEY", keyDER)
}

func newECKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatalf("testenv: generate key: %v", err)
	}
	return key
}

func serial(tb testing.TB) *big.Int {
	tb.Helper()
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		tb.Fatalf("testenv: serial: %v", err)
	}
	return n
}

func writePEM(tb testing.TB, path, kind string, der []byte) {
	tb.Helper()
	data := pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der})
	if err := os.WriteFile(path, data, 0o600); err != nil {
		tb.Fatalf("testenv: write %s: %v", path, err)
	}
}
