// Package groundwire is the Go client of the groundwire retrieval-augmented-generation server.
//
// It wraps the gRPC stubs generated from proto/groundwire/v1 (package
// github.com/groundwire/groundwire/clients/go/gen/groundwire/v1) thinly: one Client holds the
// connection, every call takes a context.Context for deadlines and cancellation, UNAVAILABLE and
// RESOURCE_EXHAUSTED are retried with exponential backoff (honouring the server's RetryInfo
// delay), and failures are returned as *Error, which carries the gRPC code, the message and the
// BadRequest field violations.
//
//	client, err := groundwire.New("127.0.0.1:50051", groundwire.WithAPIKey(key))
//	if err != nil { ... }
//	defer client.Close()
//	res, err := client.Retrieve(ctx, "how do I rotate keys?", groundwire.TopK(5))
package groundwire
