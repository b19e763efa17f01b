package groundwire

import (
	"context"
	"errors"
	"io"
	"iter"
	"slices"

	"google.golang.org/protobuf/proto"

	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// Documents per upsert message: the server's limit, also bounded by maxMessageBytes.
const (
	maxDocumentsPerMessage = 256
	maxMessageBytes        = 2 << 20
)

// UpsertOption sets a field of an upsert stream's first message.
type UpsertOption func(*pb.UpsertDocumentsRequest)

// Chunking sets the chunking options of the upserted documents (default: the collection's).
func Chunking(options *ChunkingOptions) UpsertOption {
	return func(r *pb.UpsertDocumentsRequest) { r.Chunking = options }
}

// UpsertDocuments writes documents into collection ("" is the server's default collection) and
// returns one result per document, in order (DocumentResult: upserted, unchanged or failed with
// a reason). Upserts are idempotent by id and content, so the whole call is retried on
// UNAVAILABLE and RESOURCE_EXHAUSTED.
func (c *Client) UpsertDocuments(ctx context.Context, collection string, docs []*Document, options ...UpsertOption) (*UpsertDocumentsResponse, error) {
	var res *UpsertDocumentsResponse
	err := c.retry.withRetry(ctx, func() error {
		var err error
		res, err = c.upsert(ctx, collection, slices.Values(docs), options)
		return err
	})
	return res, err
}

// UpsertDocumentsSeq streams the documents of seq into collection as seq yields them, without
// holding them all in memory. seq is read once, so this call is not retried; cancel ctx to stop.
func (c *Client) UpsertDocumentsSeq(ctx context.Context, collection string, seq iter.Seq[*Document], options ...UpsertOption) (*UpsertDocumentsResponse, error) {
	res, err := c.upsert(ctx, collection, seq, options)
	return res, asError(err)
}

func (c *Client) upsert(ctx context.Context, collection string, seq iter.Seq[*Document], options []UpsertOption) (*UpsertDocumentsResponse, error) {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.index.UpsertDocuments(callCtx)
	if err != nil {
		return nil, err
	}
	msg := &pb.UpsertDocumentsRequest{Collection: collection}
	for _, option := range options {
		option(msg)
	}
	sent, size := false, 0
	send := func() error {
		sent = true
		err := stream.Send(msg)
		msg, size = &pb.UpsertDocumentsRequest{Collection: collection}, 0
		return err
	}
	for doc := range seq {
		docSize := proto.Size(doc)
		if len(msg.Documents) > 0 && (len(msg.Documents) == maxDocumentsPerMessage || size+docSize > maxMessageBytes) {
			if err := send(); err != nil {
				break // the stream failed: CloseAndRecv returns why
			}
		}
		msg.Documents = append(msg.Documents, doc)
		size += docSize
	}
	if len(msg.Documents) > 0 || !sent {
		if err := send(); err != nil && !errors.Is(err, io.EOF) {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return stream.CloseAndRecv()
}

// DeleteDocuments removes documents by id; ids that did not exist are listed in NotFound.
func (c *Client) DeleteDocuments(ctx context.Context, collection string, ids ...string) (*DeleteDocumentsResponse, error) {
	res, err := c.index.DeleteDocuments(ctx, &pb.DeleteDocumentsRequest{Collection: collection, DocumentIds: ids})
	return res, asError(err)
}

// GetDocument returns a stored document and its chunks (NOT_FOUND when there is no such document).
func (c *Client) GetDocument(ctx context.Context, collection, id string) (*GetDocumentResponse, error) {
	res, err := c.index.GetDocument(ctx, &pb.GetDocumentRequest{Collection: collection, DocumentId: id})
	return res, asError(err)
}
