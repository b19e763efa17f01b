package groundwire_test

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

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

// pki is a test CA with a server certificate (localhost, 127.0.0.1) and a client certificate, as files.
type pki struct {
	dir                                                       string
	CA, ServerCert, ServerKey, ClientCert, ClientKey, OtherCA string
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

func newKey(t *testing.T) *ecdsa.PrivateKey {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return key
}

// issue signs template for key with the CA (a self-signed CA when parent is nil) and writes both.
func issue(t *testing.T, template, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey, certPath, keyPath string) *x509.Certificate {
	t.Helper()
	if parent == nil {
		parent, parentKey = template, key
	}
	der, err := x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	writePEM(t, certPath, "CERTIFICATE", der)
	if keyPath != "" {
		pkcs8, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			t.Fatal(err)
		}
		writePEM(t, keyPath, "PRIVATE KEY", pkcs8)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return cert
}

func newPKI(t *testing.T) pki {
	dir := t.TempDir()
	p := pki{dir: dir}
	for name, field := range map[string]*string{"ca.crt": &p.CA, "server.crt": &p.ServerCert, "server.key": &p.ServerKey,
		"client.crt": &p.ClientCert, "client.key": &p.ClientKey, "other-ca.crt": &p.OtherCA} {
		*field = filepath.Join(dir, name)
	}
	now := time.Now()
	caTemplate := func(serial int64, name string) *x509.Certificate {
		return &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: name},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), IsCA: true, BasicConstraintsValid: true,
			KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	}
	caKey := newKey(t)
	ca := issue(t, caTemplate(1, "groundwire go test CA"), nil, caKey, nil, p.CA, "")
	issue(t, caTemplate(2, "another CA"), nil, newKey(t), nil, p.OtherCA, "")
	issue(t, &x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, newKey(t), caKey, p.ServerCert, p.ServerKey)
	issue(t, &x509.Certificate{SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: "go test client"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, newKey(t), caKey, p.ClientCert, p.ClientKey)
	return p
}

// listFails asserts that ListCollections through a client made with options fails with code.
func listFails(t *testing.T, address string, code codes.Code, options ...groundwire.Option) {
	t.Helper()
	options = append(options, groundwire.WithRetryPolicy(groundwire.RetryPolicy{MaxAttempts: 1}))
	_, err := newClient(t, address, options...).ListCollections(timeout(t))
	if status.Code(err) != code {
		t.Fatalf("want %v, got %v", code, err)
	}
}

// TestTLS runs against a server that requires client certificates (mutual TLS); the server is
// verified with the test CA's file (WithTLS).
func TestTLS(t *testing.T) {
	t.Parallel() // starts its own server: overlap its start-up with the other such test
	p := newPKI(t)
	withCert := []groundwire.Option{groundwire.WithTLS(p.CA), groundwire.WithClientCertificate(p.ClientCert, p.ClientKey)}
	server := startOwnServer(t, withCert, "GROUNDWIRE_SERVER__TLS_CERT_FILE="+p.ServerCert,
		"GROUNDWIRE_SERVER__TLS_KEY_FILE="+p.ServerKey, "GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE="+p.CA)

	client := newClient(t, server.Address, withCert...)
	indexed(t, client, "tls")
	res, err := client.Retrieve(timeout(t), "key rotation", groundwire.Collection("tls"), groundwire.TopK(1))
	if err != nil || res.GetHits()[0].GetChunk().GetDocumentId() != "rotation" {
		t.Fatalf("over mutual TLS: %v %v", res, err)
	}
	listFails(t, server.Address, codes.Unavailable)                           // plaintext against TLS
	listFails(t, server.Address, codes.Unavailable, groundwire.WithTLS(p.CA)) // no client certificate
	listFails(t, server.Address, codes.Unavailable, groundwire.WithTLS(p.OtherCA),
		groundwire.WithClientCertificate(p.ClientCert, p.ClientKey)) // the server's certificate is not trusted
	if _, err := groundwire.New(server.Address, groundwire.WithTLS(filepath.Join(p.dir, "missing.crt"))); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}
