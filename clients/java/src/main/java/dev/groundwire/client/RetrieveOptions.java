package dev.groundwire.client;

import groundwire.v1.Common.Filters;
import groundwire.v1.RetrievalServiceOuterClass.ContextBudget;
import groundwire.v1.RetrievalServiceOuterClass.HybridParams;
import groundwire.v1.RetrievalServiceOuterClass.RetrievalMode;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveRequest;

/**
 * The common Retrieve options (collection, mode, top_k, filters, context budget); anything else
 * goes through {@link #toRequest} and the generated builder. Immutable; each setter returns a copy.
 */
public final class RetrieveOptions {
  private final RetrieveRequest template;

  private RetrieveOptions(RetrieveRequest template) {
    this.template = template;
  }

  /** No options: the server's defaults (default collection, hybrid, top_k 10, 2000 tokens). */
  public static RetrieveOptions defaults() {
    return new RetrieveOptions(RetrieveRequest.getDefaultInstance());
  }

  /** The collection to search (empty: the server's default collection). */
  public RetrieveOptions collection(String collection) {
    return new RetrieveOptions(template.toBuilder().setCollection(collection).build());
  }

  /** Which retrievers run: dense, lexical or hybrid. */
  public RetrieveOptions mode(RetrievalMode mode) {
    HybridParams hybrid = template.getHybrid().toBuilder().setMode(mode).build();
    return new RetrieveOptions(template.toBuilder().setHybrid(hybrid).build());
  }

  /** Number of hits to return (1 to the server's max_top_k). */
  public RetrieveOptions topK(int topK) {
    return new RetrieveOptions(template.toBuilder().setTopK(topK).build());
  }

  /** Restrictions on which chunks may be returned. */
  public RetrieveOptions filters(Filters filters) {
    return new RetrieveOptions(template.toBuilder().setFilters(filters).build());
  }

  /** A context budget in tokens of the embedding model's tokenizer. */
  public RetrieveOptions maxTokens(int maxTokens) {
    ContextBudget budget = ContextBudget.newBuilder().setMaxTokens(maxTokens).build();
    return new RetrieveOptions(template.toBuilder().setBudget(budget).build());
  }

  /** A context budget in characters. */
  public RetrieveOptions maxChars(int maxChars) {
    ContextBudget budget = ContextBudget.newBuilder().setMaxChars(maxChars).build();
    return new RetrieveOptions(template.toBuilder().setBudget(budget).build());
  }

  /** The request for {@code query} with these options. */
  public RetrieveRequest toRequest(String query) {
    return template.toBuilder().setQuery(query).build();
  }
}
