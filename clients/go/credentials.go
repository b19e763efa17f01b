package groundwire

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"

	"google.golang.org/grpc/credentials"
)

// bearerKey is the per-RPC credential carrying the API key.
type bearerKey struct {
	key        string
	requireTLS bool
}

func (b bearerKey) GetRequestMetadata(context.Context, ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + b.key}, nil
}

func (b bearerKey) RequireTransportSecurity() bool { return b.requireTLS }

// transportCredentials builds the TLS credentials of a config (TLS must be on).
func transportCredentials(c *config) (credentials.TransportCredentials, error) {
	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.serverName}
	if c.caFile != "" {
		pem, err := os.ReadFile(c.caFile)
		if err != nil {
			return nil, fmt.Errorf("groundwire: reading the CA file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("groundwire: the CA file %s holds no PEM certificate", c.caFile)
		}
		tlsConfig.RootCAs = pool
	}
	if c.certFile != "" || c.keyFile != "" {
		pair, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
		if err != nil {
			return nil, fmt.Errorf("groundwire: loading the client certificate: %w", err)
		}
		tlsConfig.Certificates = []tls.Certificate{pair}
	}
	return credentials.NewTLS(tlsConfig), nil
}
