package groundwire

import (
	"context"
	"math/rand/v2"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// retryable reports whether a call failing with code may be tried again.
func retryable(code codes.Code) bool {
	return code == codes.Unavailable || code == codes.ResourceExhausted
}

// withRetry runs attempt until it succeeds, fails with a code that is not retryable, runs out of
// attempts, or the next wait would outlive ctx. The error returned is an *Error.
func (p RetryPolicy) withRetry(ctx context.Context, attempt func() error) error {
	backoff := p.InitialBackoff
	for n := 1; ; n++ {
		err := asError(attempt())
		if err == nil {
			return nil
		}
		e := err.(*Error)
		if !retryable(e.Code) || n >= p.MaxAttempts {
			return e
		}
		wait := e.RetryDelay
		if wait <= 0 {
			wait = backoff/2 + rand.N(backoff/2+1)
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return e
		}
		timer := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			timer.Stop()
			return e
		case <-timer.C:
		}
		backoff = min(time.Duration(float64(backoff)*p.Multiplier), p.MaxBackoff)
	}
}

// unaryRetry is the interceptor that gives every unary call (the raw stubs' too) the retry policy.
func (p RetryPolicy) unaryRetry(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn,
	invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
	return p.withRetry(ctx, func() error { return invoker(ctx, method, req, reply, cc, opts...) })
}
