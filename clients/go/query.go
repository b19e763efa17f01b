package groundwire

import (
	"context"

	"google.golang.org/protobuf/proto"

	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// QueryOption sets a field of a Retrieve or Answer request. The answer-only options (Template,
// Temperature, MaxAnswerTokens) are ignored by Retrieve.
type QueryOption func(*pb.AnswerRequest)

// Collection searches the named collection (default: the server's default collection).
func Collection(name string) QueryOption {
	return func(r *pb.AnswerRequest) { r.Retrieve.Collection = name }
}

// Mode chooses the retrievers: ModeHybrid (the server default), ModeDense or ModeLexical.
func Mode(mode RetrievalMode) QueryOption {
	return func(r *pb.AnswerRequest) { hybrid(r).Mode = mode }
}

// TopK asks for k hits (1 to the server's max_top_k; default 10).
func TopK(k int32) QueryOption {
	return func(r *pb.AnswerRequest) { r.Retrieve.TopK = proto.Int32(k) }
}

// Filter restricts which chunks may be returned.
func Filter(filters *Filters) QueryOption {
	return func(r *pb.AnswerRequest) { r.Retrieve.Filters = filters }
}

// TokenBudget bounds the assembled context to n tokens (default 2000).
func TokenBudget(n int32) QueryOption {
	return func(r *pb.AnswerRequest) {
		r.Retrieve.Budget = &pb.ContextBudget{Limit: &pb.ContextBudget_MaxTokens{MaxTokens: n}}
	}
}

// CharBudget bounds the assembled context to n characters.
func CharBudget(n int32) QueryOption {
	return func(r *pb.AnswerRequest) {
		r.Retrieve.Budget = &pb.ContextBudget{Limit: &pb.ContextBudget_MaxChars{MaxChars: n}}
	}
}

// MaxRiskLevel admits chunks up to this risk level (default MEDIUM; HIGH needs the admin role).
func MaxRiskLevel(level RiskLevel) QueryOption {
	return func(r *pb.AnswerRequest) { r.Retrieve.MaxRiskLevel = level }
}

// ScoreThreshold drops hits whose final score is below min.
func ScoreThreshold(min float32) QueryOption {
	return func(r *pb.AnswerRequest) { r.Retrieve.ScoreThreshold = proto.Float32(min) }
}

// Template picks the answer prompt template ("qa", "code_qa", "summarize"; default: automatic).
func Template(name string) QueryOption {
	return func(r *pb.AnswerRequest) { r.Template = name }
}

// Temperature sets the generator's sampling temperature, in [0, 2].
func Temperature(t float32) QueryOption {
	return func(r *pb.AnswerRequest) { r.Temperature = proto.Float32(t) }
}

// MaxAnswerTokens bounds the generated answer (1-8192 tokens).
func MaxAnswerTokens(n uint32) QueryOption {
	return func(r *pb.AnswerRequest) { r.MaxTokens = proto.Uint32(n) }
}

// Request edits the raw request, for the fields no option covers (expansion, rerank, fusion...).
func Request(edit func(*pb.AnswerRequest)) QueryOption { return edit }

func hybrid(r *pb.AnswerRequest) *pb.HybridParams {
	if r.Retrieve.Hybrid == nil {
		r.Retrieve.Hybrid = &pb.HybridParams{}
	}
	return r.Retrieve.Hybrid
}

func answerRequest(query string, options []QueryOption) *pb.AnswerRequest {
	r := &pb.AnswerRequest{Retrieve: &pb.RetrieveRequest{Query: query}}
	for _, option := range options {
		option(r)
	}
	return r
}

// Retrieve returns the ranked hits for query and the assembled, citation-tagged context.
func (c *Client) Retrieve(ctx context.Context, query string, options ...QueryOption) (*RetrieveResponse, error) {
	res, err := c.retrieval.Retrieve(ctx, answerRequest(query, options).Retrieve)
	return res, asError(err)
}
