package groundwire_test

import (
	"errors"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	groundwire "github.com/groundwire/groundwire/clients/go"
)

func TestAPIKeyRequiredAndSent(t *testing.T) {
	t.Parallel() // waits for the secured server's start-up with TestTLS
	server := securedServer(t)
	ctx := timeout(t)
	tls := server.tlsOptions()
	for name, options := range map[string][]groundwire.Option{
		"no key":    tls,
		"wrong key": append(tls[:len(tls):len(tls)], groundwire.WithAPIKey("gw_not-a-key")),
	} {
		_, err := newClient(t, server.Address, options...).ListCollections(ctx)
		var gwErr *groundwire.Error
		if !errors.As(err, &gwErr) || gwErr.Code != codes.Unauthenticated {
			t.Fatalf("%s: want UNAUTHENTICATED, got %v", name, err)
		}
	}
	_, err := newClient(t, server.Address, tls...).ListCollections(ctx)
	if !strings.Contains(err.Error(), "authorization: Bearer") {
		t.Fatalf("the message does not say how to authenticate: %v", err)
	}

	client := newClient(t, server.Address, server.options()...)
	indexed(t, client, "authed")
	res, err := client.Retrieve(ctx, "backups and snapshots", groundwire.Collection("authed"), groundwire.TopK(1))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetHits()) != 1 || res.GetHits()[0].GetChunk().GetDocumentId() != "backups" {
		t.Fatalf("hits %v", res.GetHits())
	}
}
