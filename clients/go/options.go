package groundwire

import (
	"time"

	"google.golang.org/grpc"
)

// Option configures a Client (see New).
type Option func(*config)

type config struct {
	apiKey      string
	tls         bool
	caFile      string
	certFile    string
	keyFile     string
	serverName  string
	retry       RetryPolicy
	dialOptions []grpc.DialOption
}

// RetryPolicy says how calls failing with UNAVAILABLE or RESOURCE_EXHAUSTED are retried.
//
// The wait before attempt n+1 is the server's RetryInfo delay when it sent one, else
// InitialBackoff * Multiplier^(n-1) capped at MaxBackoff, with jitter (half fixed, half random).
// A retry whose wait would pass the context's deadline is not made; the last error is returned.
type RetryPolicy struct {
	// MaxAttempts is the number of attempts in total, first one included (1 disables retries).
	MaxAttempts int
	// InitialBackoff is the wait before the first retry when the server sent no RetryInfo.
	InitialBackoff time.Duration
	// MaxBackoff caps the exponential backoff (not the server's RetryInfo delay).
	MaxBackoff time.Duration
	// Multiplier grows the backoff after each retry.
	Multiplier float64
}

// DefaultRetryPolicy is used unless WithRetryPolicy says otherwise: 4 attempts, 100 ms doubling up to 5 s.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, InitialBackoff: 100 * time.Millisecond, MaxBackoff: 5 * time.Second, Multiplier: 2}

// WithAPIKey sends key as the metadata "authorization: Bearer <key>" on every call.
// Over a plaintext connection the key travels in clear: use TLS beyond loopback.
func WithAPIKey(key string) Option { return func(c *config) { c.apiKey = key } }

// WithTLS turns TLS on and verifies the server with the PEM CA bundle caFile
// (empty: the system's root CAs).
func WithTLS(caFile string) Option {
	return func(c *config) { c.tls, c.caFile = true, caFile }
}

// WithClientCertificate presents the PEM certificate and key to the server (mutual TLS).
// It turns TLS on; combine it with WithTLS to verify the server with a private CA.
func WithClientCertificate(certFile, keyFile string) Option {
	return func(c *config) { c.tls, c.certFile, c.keyFile = true, certFile, keyFile }
}

// WithServerName overrides the name the server certificate is verified against
// (default: the host of the address).
func WithServerName(name string) Option { return func(c *config) { c.serverName = name } }

// WithRetryPolicy replaces DefaultRetryPolicy.
func WithRetryPolicy(policy RetryPolicy) Option { return func(c *config) { c.retry = policy } }

// WithDialOptions adds gRPC dial options (for example a custom dialer or keepalive parameters).
func WithDialOptions(options ...grpc.DialOption) Option {
	return func(c *config) { c.dialOptions = append(c.dialOptions, options...) }
}
