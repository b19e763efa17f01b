package dev.groundwire.client.examples;

import dev.groundwire.client.AnswerEvent;
import dev.groundwire.client.AnswerStream;
import dev.groundwire.client.GroundwireClient;
import dev.groundwire.client.GroundwireException;
import dev.groundwire.client.RetrieveOptions;
import groundwire.v1.Common.Document;
import groundwire.v1.Common.SourceType;
import groundwire.v1.IndexServiceOuterClass.DocumentResult;
import groundwire.v1.IndexServiceOuterClass.UpsertDocumentsResponse;
import groundwire.v1.RetrievalServiceOuterClass.Citation;
import groundwire.v1.RetrievalServiceOuterClass.Hit;
import groundwire.v1.RetrievalServiceOuterClass.RetrievalMode;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveResponse;
import io.grpc.Status;
import java.util.List;

/**
 * Index three documents, retrieve, stream an answer.
 *
 * <p>Usage: {@code QuickStart [host:port]} (default 127.0.0.1:50051); an API key is read from the
 * environment variable GROUNDWIRE_API_KEY when set.
 */
public final class QuickStart {
  private QuickStart() {}

  public static void main(String[] args) {
    String address = args.length > 0 ? args[0] : "127.0.0.1:50051";
    GroundwireClient.Builder builder = GroundwireClient.builder(address);
    String apiKey = System.getenv("GROUNDWIRE_API_KEY");
    if (apiKey != null && !apiKey.isBlank()) {
      builder.apiKey(apiKey);
    }
    try (GroundwireClient client = builder.build()) {
      String collection = "quickstart";
      try {
        client.createCollection(collection);
      } catch (GroundwireException error) {
        if (error.code() != Status.Code.ALREADY_EXISTS) {
          throw error;
        }
      }

      List<Document> documents =
          List.of(
              markdown("tea", "# Green tea\n\nGreen tea is steeped at 80 degrees Celsius for two minutes."),
              markdown("coffee", "# Espresso\n\nEspresso is brewed by forcing water at 9 bar through fine coffee."),
              markdown("bread", "# Sourdough\n\nSourdough bread rises with a starter of wild yeast and bacteria."));
      UpsertDocumentsResponse indexed = client.upsertDocuments(collection, documents);
      for (DocumentResult result : indexed.getResultsList()) {
        System.out.printf("indexed %s: %s (%d chunks)%n",
            result.getDocumentId(), result.getOutcome(), result.getChunkCount());
      }

      RetrieveOptions options =
          RetrieveOptions.defaults().collection(collection).mode(RetrievalMode.RETRIEVAL_MODE_HYBRID).topK(2);
      RetrieveResponse retrieved = client.retrieve("At what temperature is green tea steeped?", options);
      for (Hit hit : retrieved.getHitsList()) {
        System.out.printf("hit %d %s score=%.3f%n", hit.getRank(), hit.getChunk().getChunkId(), hit.getScore());
      }

      try (AnswerStream answer = client.answer("How is espresso brewed?", options)) {
        for (AnswerEvent event : answer) {
          if (event instanceof AnswerEvent.Delta delta) {
            System.out.print(delta.text());
          } else if (event instanceof AnswerEvent.Summary summary) {
            System.out.println();
            for (Citation citation : summary.citations()) {
              System.out.println("cited " + citation.getDocumentId() + " " + citation.getChunkId());
            }
            System.out.println("finish: " + summary.finishReason());
          }
        }
      }
    }
  }

  private static Document markdown(String id, String text) {
    return Document.newBuilder()
        .setDocumentId(id)
        .setText(text)
        .setSourceType(SourceType.SOURCE_TYPE_MARKDOWN)
        .putMetadata("topic", "drinks-and-bread")
        .build();
  }
}
