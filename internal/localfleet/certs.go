package localfleet

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// pki is the throwaway certificate material of one plane, kept as files in its directory.
type pki struct {
	dir string
	// serviceIP is the address of the in-cluster API server Service, which the serving
	// certificate names beside 127.0.0.1; none if empty.
	serviceIP string
}

// File names inside a plane's pki directory.
const (
	caCertFile      = "ca.crt"
	caKeyFile       = "ca.key"
	servingCertFile = "apiserver.crt"
	servingKeyFile  = "apiserver.key"
	adminCertFile   = "admin.crt"
	adminKeyFile    = "admin.key"
	saKeyFile       = "sa.key"
	saPubFile       = "sa.pub"
)

func (p pki) path(name string) string { return filepath.Join(p.dir, name) }

// ensure writes a CA, an API server serving certificate for 127.0.0.1, a system:masters client
// certificate and a service-account signing key pair, unless they already exist (a restarted
// plane keeps its identity so existing kubeconfigs stay valid).
func (p pki) ensure() error {
	if fileExists(p.path(saPubFile)) {
		return nil
	}
	if err := os.MkdirAll(p.dir, 0o700); err != nil {
		return err
	}
	caKey, err := newKey()
	if err != nil {
		return err
	}
	now := time.Now().Add(-time.Hour)
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "flotilla-local-ca"},
		NotBefore:             now,
		NotAfter:              now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, caKey.Public(), caKey)
	if err != nil {
		return fmt.Errorf("create CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return err
	}
	serving := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses:  []net.IP{net.ParseIP("127.0.0.1")},
		DNSNames: []string{"localhost", "kubernetes", "kubernetes.default",
			"kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
	}
	if ip := net.ParseIP(p.serviceIP); ip != nil {
		serving.IPAddresses = append(serving.IPAddresses, ip)
	}
	admin := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "flotilla-admin", Organization: []string{"system:masters"}},
		NotBefore:    now,
		NotAfter:     now.Add(10 * 365 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if err := p.writeCert(caCertFile, caKeyFile, caDER, caKey); err != nil {
		return err
	}
	if err := p.issue(servingCertFile, servingKeyFile, serving, ca, caKey); err != nil {
		return err
	}
	if err := p.issue(adminCertFile, adminKeyFile, admin, ca, caKey); err != nil {
		return err
	}
	saKey, err := newKey()
	if err != nil {
		return err
	}
	if err := writePEM(p.path(saKeyFile), "EC PRIVATE KEY", mustMarshalKey(saKey)); err != nil {
		return err
	}
	pub, err := x509.MarshalPKIXPublicKey(saKey.Public())
	if err != nil {
		return err
	}
	return writePEM(p.path(saPubFile), "PUBLIC KEY", pub)
}

func (p pki) issue(certFile, keyFile string, tmpl, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("issue certificate %s: %w", tmpl.Subject.CommonName, err)
	}
	return p.writeCert(certFile, keyFile, der, key)
}

func (p pki) writeCert(certFile, keyFile string, der []byte, key *ecdsa.PrivateKey) error {
	if err := writePEM(p.path(certFile), "CERTIFICATE", der); err != nil {
		return err
	}
	return writePEM(p.path(keyFile), "EC PRIVATE KEY", mustMarshalKey(key))
}

// read returns the PEM bytes of the named file.
func (p pki) read(name string) ([]byte, error) { return os.ReadFile(p.path(name)) }

func newKey() (*ecdsa.PrivateKey, error) { return ecdsa.GenerateKey(elliptic.P256(), rand.Reader) }

func mustMarshalKey(key *ecdsa.PrivateKey) []byte {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		panic(err) // only fails for keys on unsupported curves; P-256 is supported
	}
	return der
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	return n
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
