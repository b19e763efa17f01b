/** RetrieveOptions, the idiomatic retrieval options, and their conversion to a RetrieveRequest. */
import { Filters, RiskLevel } from "./generated/groundwire/v1/common";
import {
  ContextBudget,
  ExpansionPolicy,
  HybridParams,
  RerankParams,
  RetrievalMode,
  RetrieveRequest,
} from "./generated/groundwire/v1/retrieval_service";

type PartialOf<T extends { fromPartial: (object: never) => unknown }> = Parameters<T["fromPartial"]>[0];

/** Which retrievers run: embeddings, BM25, or both fused (the server default). */
export type Mode = "dense" | "lexical" | "hybrid";

const MODES: Record<Mode, RetrievalMode> = {
  dense: RetrievalMode.RETRIEVAL_MODE_DENSE,
  lexical: RetrievalMode.RETRIEVAL_MODE_LEXICAL,
  hybrid: RetrievalMode.RETRIEVAL_MODE_HYBRID,
};

/** Options of `retrieve` (and the retrieval part of `answer`). Unset options take server defaults. */
export interface RetrieveOptions {
  /** Collection to search; unset: the server's default collection. */
  collection?: string;
  /** Retrievers to run; overrides `hybrid.mode`. */
  mode?: Mode;
  /** Hits to return (1 to the server's max_top_k); unset: 10. */
  topK?: number;
  /** Restrictions on which chunks may be returned (all must hold). */
  filters?: PartialOf<typeof Filters>;
  /** Context budget: `{ maxTokens }` or `{ maxChars }`; unset: 2000 tokens. */
  budget?: PartialOf<typeof ContextBudget>;
  /** Highest risk level admitted; unset: MEDIUM. */
  maxRiskLevel?: RiskLevel;
  /** Fusion parameters (weights, RRF k, candidate depth). */
  hybrid?: PartialOf<typeof HybridParams>;
  /** Link-graph expansion policy. */
  expansion?: PartialOf<typeof ExpansionPolicy>;
  /** Rerank parameters. */
  rerank?: PartialOf<typeof RerankParams>;
  /** Hits scoring below this are dropped. */
  scoreThreshold?: number;
  /** Also search the collection's long-term memories. */
  useMemory?: boolean;
}

/** The RetrieveRequest for `query` and `options`. */
export function retrieveRequest(query: string, options: RetrieveOptions): RetrieveRequest {
  const hybrid =
    options.mode === undefined ? options.hybrid : { ...options.hybrid, mode: MODES[options.mode] };
  return RetrieveRequest.fromPartial({
    query,
    collection: options.collection ?? "",
    topK: options.topK,
    filters: options.filters,
    budget: options.budget,
    maxRiskLevel: options.maxRiskLevel,
    hybrid,
    expansion: options.expansion,
    rerank: options.rerank,
    scoreThreshold: options.scoreThreshold,
    useMemory: options.useMemory ?? false,
  });
}
