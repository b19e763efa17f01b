package groundwire

import (
	"context"
	"errors"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// Client is a connection to a groundwire server. It is safe for concurrent use; Close it when done.
type Client struct {
	conn      *grpc.ClientConn
	retry     RetryPolicy
	index     pb.IndexServiceClient
	retrieval pb.RetrievalServiceClient
	health    healthpb.HealthClient
}

// New makes a client for address ("host:port"). It connects lazily, on the first call; use Dial to
// connect and check the server's health up front. Without WithTLS or WithClientCertificate the
// connection is plaintext (the server's default).
func New(address string, options ...Option) (*Client, error) {
	c := &config{retry: DefaultRetryPolicy}
	for _, option := range options {
		option(c)
	}
	dial := []grpc.DialOption{grpc.WithUnaryInterceptor(c.retry.unaryRetry)}
	if c.tls {
		creds, err := transportCredentials(c)
		if err != nil {
			return nil, err
		}
		dial = append(dial, grpc.WithTransportCredentials(creds))
	} else {
		dial = append(dial, grpc.WithTransportCredentials(insecure.NewCredentials()))
	}
	if c.apiKey != "" {
		dial = append(dial, grpc.WithPerRPCCredentials(bearerKey{key: c.apiKey, requireTLS: c.tls}))
	}
	conn, err := grpc.NewClient(address, append(dial, c.dialOptions...)...)
	if err != nil {
		return nil, err
	}
	return &Client{
		conn:      conn,
		retry:     c.retry,
		index:     pb.NewIndexServiceClient(conn),
		retrieval: pb.NewRetrievalServiceClient(conn),
		health:    healthpb.NewHealthClient(conn),
	}, nil
}

// Dial is New followed by a health check: it returns once the server answers SERVING, or an error
// (the context bounds how long it tries, retries included).
func Dial(ctx context.Context, address string, options ...Option) (*Client, error) {
	client, err := New(address, options...)
	if err != nil {
		return nil, err
	}
	serving, err := client.Health(ctx)
	if err == nil && !serving {
		err = errors.New("groundwire: the server is not serving yet")
	}
	if err != nil {
		client.Close()
		return nil, err
	}
	return client, nil
}

// Close closes the connection; calls in flight fail with CANCELED.
func (c *Client) Close() error { return c.conn.Close() }

// Conn is the underlying connection, for stubs of services the client does not wrap.
func (c *Client) Conn() *grpc.ClientConn { return c.conn }

// IndexService is the generated stub, for calls the client does not wrap (snapshots, memories...).
// Its unary calls get the same credentials and retry policy.
func (c *Client) IndexService() pb.IndexServiceClient { return c.index }

// RetrievalService is the generated stub of the retrieval service (see IndexService).
func (c *Client) RetrievalService() pb.RetrievalServiceClient { return c.retrieval }

// Health reports whether the server's overall health status is SERVING (grpc.health.v1).
func (c *Client) Health(ctx context.Context) (bool, error) {
	res, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		return false, asError(err)
	}
	return res.GetStatus() == healthpb.HealthCheckResponse_SERVING, nil
}
