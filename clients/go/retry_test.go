package groundwire_test

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/durationpb"

	groundwire "github.com/groundwire/groundwire/clients/go"
	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// flakyServer is an in-test RetrievalService that fails the first `failures` calls with `code`
// (and a RetryInfo of `delay` when it is > 0), then answers; it records when each call arrived.
// The real server cannot be made to refuse on demand, so retries are tested against this one.
type flakyServer struct {
	pb.UnimplementedRetrievalServiceServer
	code     codes.Code
	delay    time.Duration
	failures int

	mu       sync.Mutex
	attempts []time.Time
}

func (f *flakyServer) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, time.Now())
	if len(f.attempts) > f.failures {
		return nil
	}
	st := status.New(f.code, "try again later")
	if f.delay > 0 {
		withInfo, err := st.WithDetails(&errdetails.RetryInfo{RetryDelay: durationpb.New(f.delay)})
		if err != nil {
			panic(err)
		}
		st = withInfo
	}
	return st.Err()
}

func (f *flakyServer) Retrieve(_ context.Context, req *pb.RetrieveRequest) (*pb.RetrieveResponse, error) {
	if err := f.fail(); err != nil {
		return nil, err
	}
	return &pb.RetrieveResponse{Collection: req.GetCollection()}, nil
}

func (f *flakyServer) Answer(_ *pb.AnswerRequest, stream grpc.ServerStreamingServer[pb.AnswerResponse]) error {
	if err := f.fail(); err != nil {
		return err
	}
	for _, event := range []*pb.AnswerResponse{
		{Event: &pb.AnswerResponse_Started{Started: &pb.AnswerStarted{Template: "qa"}}},
		{Event: &pb.AnswerResponse_Delta{Delta: &pb.AnswerDelta{Text: "hello"}}},
		{Event: &pb.AnswerResponse_Summary{Summary: &pb.AnswerSummary{FinishReason: "stop", Text: "hello"}}},
	} {
		if err := stream.Send(event); err != nil {
			return err
		}
	}
	return nil
}

func (f *flakyServer) gaps() []time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	var gaps []time.Duration
	for i := 1; i < len(f.attempts); i++ {
		gaps = append(gaps, f.attempts[i].Sub(f.attempts[i-1]))
	}
	return gaps
}

func serveFlaky(t *testing.T, f *flakyServer) *groundwire.Client {
	t.Helper()
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	server := grpc.NewServer()
	pb.RegisterRetrievalServiceServer(server, f)
	go server.Serve(listener)
	t.Cleanup(server.Stop)
	return newClient(t, listener.Addr().String())
}

// The RetryInfo delay (400 ms) is above the default backoff (at most 100 ms before the first
// retry, 200 ms before the second): gaps of at least 400 ms show the client waited as told.
func TestRetryHonoursRetryInfo(t *testing.T) {
	for _, code := range []codes.Code{codes.Unavailable, codes.ResourceExhausted} {
		f := &flakyServer{code: code, delay: 400 * time.Millisecond, failures: 2}
		res, err := serveFlaky(t, f).Retrieve(timeout(t), "q", groundwire.Collection("c"))
		if err != nil || res.GetCollection() != "c" {
			t.Fatalf("%v: %v %v", code, res, err)
		}
		gaps := f.gaps()
		if len(gaps) != 2 || gaps[0] < f.delay || gaps[1] < f.delay {
			t.Fatalf("%v: want 3 attempts at least %v apart, got gaps %v", code, f.delay, gaps)
		}
	}
}

func TestRetryGivesUp(t *testing.T) {
	// Out of attempts: the last error, with its RetryInfo.
	f := &flakyServer{code: codes.Unavailable, failures: 10}
	_, err := serveFlaky(t, f).Retrieve(timeout(t), "q")
	var gwErr *groundwire.Error
	if !errors.As(err, &gwErr) || gwErr.Code != codes.Unavailable || len(f.gaps()) != groundwire.DefaultRetryPolicy.MaxAttempts-1 {
		t.Fatalf("want UNAVAILABLE after %d attempts, got %v after %d", groundwire.DefaultRetryPolicy.MaxAttempts, err, len(f.gaps())+1)
	}

	// A server delay beyond the caller's deadline: no retry is made.
	f = &flakyServer{code: codes.ResourceExhausted, delay: time.Hour, failures: 1}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err = serveFlaky(t, f).Retrieve(ctx, "q")
	if !errors.As(err, &gwErr) || gwErr.Code != codes.ResourceExhausted || gwErr.RetryDelay != time.Hour || len(f.gaps()) != 0 {
		t.Fatalf("want one RESOURCE_EXHAUSTED attempt, got %v after %d", err, len(f.gaps())+1)
	}

	// Codes that are not transient are not retried.
	f = &flakyServer{code: codes.InvalidArgument, failures: 1}
	_, err = serveFlaky(t, f).Retrieve(timeout(t), "q")
	if status.Code(err) != codes.InvalidArgument || len(f.gaps()) != 0 {
		t.Fatalf("want one INVALID_ARGUMENT attempt, got %v after %d", err, len(f.gaps())+1)
	}
}

func TestAnswerRetriesOpening(t *testing.T) {
	f := &flakyServer{code: codes.Unavailable, delay: 200 * time.Millisecond, failures: 1}
	stream, err := serveFlaky(t, f).Answer(timeout(t), "q")
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for event, err := range stream.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if delta, ok := event.(*groundwire.Delta); ok {
			text += delta.Text
		}
	}
	if text != "hello" || stream.Summary().GetFinishReason() != "stop" || len(f.gaps()) != 1 || f.gaps()[0] < f.delay {
		t.Fatalf("text %q, summary %v, gaps %v", text, stream.Summary(), f.gaps())
	}
}
