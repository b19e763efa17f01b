package groundwire_test

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

// secured is a server that requires a client certificate (mutual TLS) and an API key. The TLS and
// API-key tests share it: each server start-up loads the embedding model, which is the slow part.
type secured struct {
	*liveServer
	pki pki
	key string
}

var (
	securedOnce   sync.Once
	securedShared *secured
	securedErr    error
)

// tlsOptions trust the test CA and present the client certificate (no API key).
func (s *secured) tlsOptions() []groundwire.Option {
	return []groundwire.Option{groundwire.WithTLS(s.pki.CA), groundwire.WithClientCertificate(s.pki.ClientCert, s.pki.ClientKey)}
}

// options are tlsOptions plus the API key: everything the server asks for.
func (s *secured) options() []groundwire.Option {
	return append(s.tlsOptions(), groundwire.WithAPIKey(s.key))
}

// securedServer starts the secured server on first use; TestMain stops it.
func securedServer(t *testing.T) *secured {
	t.Helper()
	securedOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				securedErr = fmt.Errorf("making the secured server's files: %v", p)
			}
		}()
		securedShared, securedErr = startSecured()
	})
	if securedErr != nil {
		t.Fatal(securedErr)
	}
	return securedShared
}

func startSecured() (*secured, error) {
	dir, err := os.MkdirTemp(tempRoot, "secured-")
	if err != nil {
		return nil, err
	}
	s := &secured{pki: newPKI(dir)}
	secret := make([]byte, 32)
	rand.Read(secret)
	s.key = "gw_" + hex.EncodeToString(secret)
	hash := sha256.Sum256([]byte(s.key)) // the keys file holds the SHA-256 hex of each key
	keys := filepath.Join(dir, "keys.toml")
	entry := fmt.Sprintf("[[keys]]\nid = \"go-test\"\ntenant = \"gotest\"\nrole = \"admin\"\nsha256 = %q\n", hex.EncodeToString(hash[:]))
	if err := os.WriteFile(keys, []byte(entry), 0o600); err != nil {
		return nil, err
	}
	if s.liveServer, err = startServer(dir,
		"GROUNDWIRE_AUTH__KEYS_FILE="+keys, "GROUNDWIRE_AUTH__REQUIRED=true",
		"GROUNDWIRE_SERVER__TLS_CERT_FILE="+s.pki.ServerCert, "GROUNDWIRE_SERVER__TLS_KEY_FILE="+s.pki.ServerKey,
		"GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE="+s.pki.CA); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if err := s.waitServing(ctx, s.tlsOptions()...); err != nil {
		s.Stop()
		return nil, err
	}
	return s, nil
}

// stopSecured stops the secured server if a test started it; it returns the server's log.
func stopSecured() string {
	if securedShared == nil {
		return ""
	}
	securedShared.Stop()
	return securedShared.Log()
}
