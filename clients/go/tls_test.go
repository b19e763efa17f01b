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

// must panics on an error: the PKI is made inside the shared secured server's sync.Once, which
// turns the panic into that server's start-up error.
func must[T any](value T, err error) T {
	if err != nil {
		panic(err)
	}
	return value
}

func writePEM(path, kind string, der []byte) {
	must(0, os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600))
}

func newKey() *ecdsa.PrivateKey {
	return must(ecdsa.GenerateKey(elliptic.P256(), rand.Reader))
}

// issue signs template for key with the CA (a self-signed CA when parent is nil) and writes both.
func issue(template, parent *x509.Certificate, key, parentKey *ecdsa.PrivateKey, certPath, keyPath string) *x509.Certificate {
	if parent == nil {
		parent, parentKey = template, key
	}
	der := must(x509.CreateCertificate(rand.Reader, template, parent, &key.PublicKey, parentKey))
	writePEM(certPath, "CERTIFICATE", der)
	if keyPath != "" {
		writePEM(keyPath, "PRIVATE KEY", must(x509.MarshalPKCS8PrivateKey(key)))
	}
	return must(x509.ParseCertificate(der))
}

func newPKI(dir string) pki {
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
	caKey := newKey()
	ca := issue(caTemplate(1, "groundwire go test CA"), nil, caKey, nil, p.CA, "")
	issue(caTemplate(2, "another CA"), nil, newKey(), nil, p.OtherCA, "")
	issue(&x509.Certificate{SerialNumber: big.NewInt(3), Subject: pkix.Name{CommonName: "localhost"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), DNSNames: []string{"localhost"},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}, ca, newKey(), caKey, p.ServerCert, p.ServerKey)
	issue(&x509.Certificate{SerialNumber: big.NewInt(4), Subject: pkix.Name{CommonName: "go test client"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(48 * time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}, ca, newKey(), caKey, p.ClientCert, p.ClientKey)
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

// TestTLS runs against the secured server, which requires client certificates (mutual TLS); the
// server is verified with the test CA's file (WithTLS).
func TestTLS(t *testing.T) {
	t.Parallel() // waits for the secured server's start-up with TestAPIKeyRequiredAndSent
	server := securedServer(t)
	p := server.pki
	client := newClient(t, server.Address, server.options()...)
	indexed(t, client, "tls")
	res, err := client.Retrieve(timeout(t), "key rotation", groundwire.Collection("tls"), groundwire.TopK(1))
	if err != nil || res.GetHits()[0].GetChunk().GetDocumentId() != "rotation" {
		t.Fatalf("over mutual TLS: %v %v", res, err)
	}
	key := groundwire.WithAPIKey(server.key)
	listFails(t, server.Address, codes.Unavailable, key)                           // plaintext against TLS
	listFails(t, server.Address, codes.Unavailable, key, groundwire.WithTLS(p.CA)) // no client certificate
	listFails(t, server.Address, codes.Unavailable, key, groundwire.WithTLS(p.OtherCA),
		groundwire.WithClientCertificate(p.ClientCert, p.ClientKey)) // the server's certificate is not trusted
	if _, err := groundwire.New(server.Address, groundwire.WithTLS(filepath.Join(p.dir, "missing.crt"))); err == nil {
		t.Fatal("a missing CA file was accepted")
	}
}
