package groundwire

import (
	"context"
	"errors"
	"io"
	"iter"

	"google.golang.org/grpc"

	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// AnswerEvent is one event of an answer stream: *Started, then *Delta events, then *Summary.
type AnswerEvent interface{ answerEvent() }

// Started is the first event: the retrieval the answer is grounded in and the template used.
type Started struct{ *pb.AnswerStarted }

// Delta is generated text since the previous delta.
type Delta struct{ Text string }

// Summary is the last event: finish reason, usage, the validated citations and the full text.
type Summary struct{ *pb.AnswerSummary }

func (*Started) answerEvent() {}
func (*Delta) answerEvent()   {}
func (*Summary) answerEvent() {}

// AnswerStream reads the events of one Answer call. Recv until io.EOF (or range over Events);
// Close cancels the call early.
type AnswerStream struct {
	stream  grpc.ServerStreamingClient[pb.AnswerResponse]
	ctx     context.Context
	cancel  context.CancelFunc
	first   *pb.AnswerResponse
	summary *pb.AnswerSummary
	done    error
}

// Answer retrieves for query and streams a generated answer. Opening the stream is retried like a
// unary call (until the first event arrives); once events flow, an error ends the stream.
// Cancelling ctx or calling Close cancels the generation on the server.
func (c *Client) Answer(ctx context.Context, query string, options ...QueryOption) (*AnswerStream, error) {
	req := answerRequest(query, options)
	var s *AnswerStream
	err := c.retry.withRetry(ctx, func() error {
		callCtx, cancel := context.WithCancel(ctx)
		stream, err := c.retrieval.Answer(callCtx, req)
		if err == nil {
			var first *pb.AnswerResponse
			if first, err = stream.Recv(); err == nil {
				s = &AnswerStream{stream: stream, ctx: callCtx, cancel: cancel, first: first}
				return nil
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("groundwire: the answer stream ended before its first event")
			}
		}
		cancel()
		return err
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// Recv returns the next event; io.EOF after the summary; an *Error when the call failed
// (CANCELED after Close or a cancelled context, DEADLINE_EXCEEDED when the deadline passed).
func (s *AnswerStream) Recv() (AnswerEvent, error) {
	if s.done != nil {
		return nil, s.done
	}
	if err := s.ctx.Err(); err != nil { // cancelled or past its deadline: say so, even if events were buffered
		s.done = asError(err)
		return nil, s.done
	}
	msg := s.first
	s.first = nil
	if msg == nil {
		var err error
		if msg, err = s.stream.Recv(); err != nil {
			if !errors.Is(err, io.EOF) {
				err = asError(err)
			}
			s.done = err
			s.cancel()
			return nil, err
		}
	}
	switch event := msg.GetEvent().(type) {
	case *pb.AnswerResponse_Started:
		return &Started{event.Started}, nil
	case *pb.AnswerResponse_Delta:
		return &Delta{Text: event.Delta.GetText()}, nil
	case *pb.AnswerResponse_Summary:
		s.summary = event.Summary
		return &Summary{event.Summary}, nil
	}
	return s.Recv() // an event kind this client does not know (a newer server): skip it
}

// Events ranges over the events; the last pair carries the error if the stream failed
// (io.EOF is not reported). Breaking out of the loop cancels the call.
func (s *AnswerStream) Events() iter.Seq2[AnswerEvent, error] {
	return func(yield func(AnswerEvent, error) bool) {
		defer s.Close()
		for {
			event, err := s.Recv()
			if errors.Is(err, io.EOF) {
				return
			}
			if !yield(event, err) || err != nil {
				return
			}
		}
	}
}

// Summary is the final summary once it has been received, else nil.
func (s *AnswerStream) Summary() *pb.AnswerSummary { return s.summary }

// Close cancels the call if it is still running; later Recv calls return CANCELED (or io.EOF if
// the stream had already ended).
func (s *AnswerStream) Close() {
	s.cancel()
}
