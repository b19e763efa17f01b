package groundwire_test

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

func TestAPIKeyRequiredAndSent(t *testing.T) {
	t.Parallel() // starts its own server: overlap its start-up with the other such test
	secret := make([]byte, 32)
	rand.Read(secret)
	key := "gw_" + hex.EncodeToString(secret)
	hash := sha256.Sum256([]byte(key))
	keys := filepath.Join(t.TempDir(), "keys.toml")
	entry := fmt.Sprintf("[[keys]]\nid = \"go-test\"\ntenant = \"gotest\"\nrole = \"admin\"\nsha256 = %q\n", hex.EncodeToString(hash[:]))
	if err := os.WriteFile(keys, []byte(entry), 0o600); err != nil {
		t.Fatal(err)
	}
	server := startOwnServer(t, nil, "GROUNDWIRE_AUTH__KEYS_FILE="+keys, "GROUNDWIRE_AUTH__REQUIRED=true")
	ctx := timeout(t)

	for name, options := range map[string][]groundwire.Option{
		"no key":    nil,
		"wrong key": {groundwire.WithAPIKey("gw_not-a-key")},
	} {
		_, err := newClient(t, server.Address, options...).ListCollections(ctx)
		var gwErr *groundwire.Error
		if !errors.As(err, &gwErr) || gwErr.Code != codes.Unauthenticated {
			t.Fatalf("%s: want UNAUTHENTICATED, got %v", name, err)
		}
	}
	_, err := newClient(t, server.Address).ListCollections(ctx)
	if !strings.Contains(err.Error(), "authorization: Bearer") {
		t.Fatalf("the message does not say how to authenticate: %v", err)
	}

	client := newClient(t, server.Address, groundwire.WithAPIKey(key))
	indexed(t, client, "authed")
	res, err := client.Retrieve(ctx, "backups and snapshots", groundwire.Collection("authed"), groundwire.TopK(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetHits()) != 1 || res.GetHits()[0].GetChunk().GetDocumentId() != "backups" {
		t.Fatalf("hits %v", res.GetHits())
	}
}
