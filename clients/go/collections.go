package groundwire

import (
	"context"

	pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"
)

// CollectionOption sets a field of a CreateCollection request.
type CollectionOption func(*pb.CreateCollectionRequest)

// Description sets the collection's free-text description.
func Description(text string) CollectionOption {
	return func(r *pb.CreateCollectionRequest) { r.Description = text }
}

// DenseIndex configures the collection's vector index (default: auto, exact flat then HNSW).
func DenseIndex(config *DenseIndexConfig) CollectionOption {
	return func(r *pb.CreateCollectionRequest) { r.DenseIndex = config }
}

// DefaultChunking sets the chunking options for documents of the collection.
func DefaultChunking(options *ChunkingOptions) CollectionOption {
	return func(r *pb.CreateCollectionRequest) { r.Chunking = options }
}

// CreateCollection creates an empty collection (ALREADY_EXISTS if the name is taken).
func (c *Client) CreateCollection(ctx context.Context, name string, options ...CollectionOption) (*CollectionInfo, error) {
	req := &pb.CreateCollectionRequest{Name: name}
	for _, option := range options {
		option(req)
	}
	res, err := c.index.CreateCollection(ctx, req)
	return res.GetCollection(), asError(err)
}

// DropCollection deletes a collection and all its data; it returns how many documents it held.
func (c *Client) DropCollection(ctx context.Context, name string) (uint64, error) {
	res, err := c.index.DropCollection(ctx, &pb.DropCollectionRequest{Name: name})
	return res.GetDroppedDocuments(), asError(err)
}

// ListCollections lists the caller's collections, sorted by name.
func (c *Client) ListCollections(ctx context.Context) ([]*CollectionInfo, error) {
	res, err := c.index.ListCollections(ctx, &pb.ListCollectionsRequest{})
	return res.GetCollections(), asError(err)
}

// Stats reports a collection's sizes, index state and cache figures ("" is the default collection).
func (c *Client) Stats(ctx context.Context, collection string) (*StatsResponse, error) {
	res, err := c.index.Stats(ctx, &pb.StatsRequest{Collection: collection})
	return res, asError(err)
}
