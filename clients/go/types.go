package groundwire

import pb "github.com/groundwire/groundwire/clients/go/gen/groundwire/v1"

// Aliases of the generated messages used with the client, so callers need not import the stubs.
type (
	Document                = pb.Document
	Chunk                   = pb.Chunk
	Filters                 = pb.Filters
	MetadataRange           = pb.MetadataRange
	MetadataIn              = pb.MetadataIn
	Hit                     = pb.Hit
	Citation                = pb.Citation
	RetrieveResponse        = pb.RetrieveResponse
	CollectionInfo          = pb.CollectionInfo
	ChunkingOptions         = pb.ChunkingOptions
	DenseIndexConfig        = pb.DenseIndexConfig
	StatsResponse           = pb.StatsResponse
	UpsertDocumentsResponse = pb.UpsertDocumentsResponse
	DocumentResult          = pb.DocumentResult
	DocumentOutcome         = pb.DocumentOutcome
	DeleteDocumentsResponse = pb.DeleteDocumentsResponse
	GetDocumentResponse     = pb.GetDocumentResponse
	RetrievalMode           = pb.RetrievalMode
	RiskLevel               = pb.RiskLevel
	SourceType              = pb.SourceType
)

// Retrieval modes (see Mode).
const (
	ModeHybrid  = pb.RetrievalMode_RETRIEVAL_MODE_HYBRID
	ModeDense   = pb.RetrievalMode_RETRIEVAL_MODE_DENSE
	ModeLexical = pb.RetrievalMode_RETRIEVAL_MODE_LEXICAL
)

// Outcomes of one upserted document (DocumentResult.Outcome).
const (
	OutcomeUpserted  = pb.DocumentOutcome_DOCUMENT_OUTCOME_UPSERTED
	OutcomeUnchanged = pb.DocumentOutcome_DOCUMENT_OUTCOME_UNCHANGED
	OutcomeFailed    = pb.DocumentOutcome_DOCUMENT_OUTCOME_FAILED
)
