package localfleet

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

func TestPKIIssuesVerifiableCertificates(t *testing.T) {
	k := pki{dir: t.TempDir()}
	if err := k.ensure(); err != nil {
		t.Fatal(err)
	}
	caPEM, err := k.read(caCertFile)
	if err != nil {
		t.Fatal(err)
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(caPEM) {
		t.Fatal("CA certificate does not parse")
	}
	serving := loadCert(t, k, servingCertFile, servingKeyFile)
	if _, err := serving.Verify(x509.VerifyOptions{Roots: roots, DNSName: "127.0.0.1"}); err != nil {
		t.Errorf("serving certificate is not valid for 127.0.0.1: %v", err)
	}
	admin := loadCert(t, k, adminCertFile, adminKeyFile)
	if _, err := admin.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("admin certificate is not a valid client certificate: %v", err)
	}
	if got := admin.Subject.Organization; len(got) != 1 || got[0] != "system:masters" {
		t.Errorf("admin organization = %v, want [system:masters]", got)
	}

	// A second ensure keeps the identity, so kubeconfigs survive a plane restart.
	before, _ := os.ReadFile(k.path(caCertFile))
	if err := k.ensure(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(k.path(caCertFile))
	if string(before) != string(after) {
		t.Error("ensure replaced an existing CA")
	}
}

func loadCert(t *testing.T, k pki, certFile, keyFile string) *x509.Certificate {
	t.Helper()
	pair, err := tls.LoadX509KeyPair(k.path(certFile), k.path(keyFile))
	if err != nil {
		t.Fatalf("load %s: %v", certFile, err)
	}
	return pair.Leaf
}
