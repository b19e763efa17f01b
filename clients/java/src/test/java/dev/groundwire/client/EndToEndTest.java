package dev.groundwire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.groundwire.client.examples.QuickStart;
import groundwire.v1.Common.Document;
import groundwire.v1.Common.Filters;
import groundwire.v1.IndexServiceOuterClass.CollectionInfo;
import groundwire.v1.IndexServiceOuterClass.DeleteDocumentsResponse;
import groundwire.v1.IndexServiceOuterClass.DocumentOutcome;
import groundwire.v1.IndexServiceOuterClass.DocumentResult;
import groundwire.v1.IndexServiceOuterClass.GetDocumentResponse;
import groundwire.v1.IndexServiceOuterClass.StatsResponse;
import groundwire.v1.IndexServiceOuterClass.UpsertDocumentsResponse;
import groundwire.v1.RetrievalServiceOuterClass.AnswerRequest;
import groundwire.v1.RetrievalServiceOuterClass.Citation;
import groundwire.v1.RetrievalServiceOuterClass.Hit;
import groundwire.v1.RetrievalServiceOuterClass.RetrievalMode;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveResponse;
import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;

/** The client against one real groundwire server (plaintext, no keys), started for this class. */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EndToEndTest {
  private static final String COLLECTION = "java_e2e";

  @TempDir static Path tmp;
  private static LiveServer server;
  private static GroundwireClient client;

  @BeforeAll
  static void startServer() throws Exception {
    server = LiveServer.start(tmp.resolve("data"));
    client = GroundwireClient.builder(server.address()).build();
    client.createCollection(COLLECTION);
    UpsertDocumentsResponse indexed =
        client.upsertDocuments(
            COLLECTION,
            List.of(
                doc("tea", "# Green tea\n\nGreen tea is steeped at 80 degrees Celsius for two minutes.", "drink"),
                doc("coffee", "# Espresso\n\nEspresso is brewed by forcing water at 9 bar through ground coffee.", "drink"),
                doc("bread", "# Sourdough\n\nSourdough bread rises with a starter of wild yeast.", "food")));
    assertEquals(3, indexed.getUpserted(), indexed.toString());
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (client != null) {
      client.close();
    }
    if (server != null) {
      server.close();
    }
  }

  private static Document doc(String id, String text, String kind) {
    return Document.newBuilder().setDocumentId(id).setText(text).putMetadata("kind", kind).build();
  }

  @Test
  @Order(1)
  void healthListAndStats() {
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, client.health());
    List<String> names = client.listCollections().stream().map(CollectionInfo::getName).toList();
    assertTrue(names.contains(COLLECTION), names.toString());
    StatsResponse stats = client.stats(COLLECTION);
    assertEquals(3, stats.getCollection().getDocumentCount());
    assertTrue(stats.getCollection().getChunkCount() >= 3);
  }

  @Test
  @Order(2)
  void retrieveHonoursModeTopKFiltersAndBudget() {
    RetrieveOptions options =
        RetrieveOptions.defaults()
            .collection(COLLECTION)
            .mode(RetrievalMode.RETRIEVAL_MODE_DENSE)
            .topK(2)
            .filters(Filters.newBuilder().putMetadataEquals("kind", "drink").build())
            .maxTokens(300);
    RetrieveResponse response = client.retrieve("At what temperature is green tea steeped?", options);
    assertEquals(RetrievalMode.RETRIEVAL_MODE_DENSE, response.getMode());
    assertEquals(COLLECTION, response.getCollection());
    assertEquals(2, response.getHitsCount(), response.toString());
    assertEquals("tea", response.getHits(0).getChunk().getDocumentId());
    for (Hit hit : response.getHitsList()) {
      assertEquals("drink", hit.getChunk().getMetadataOrThrow("kind"));
    }
    assertEquals(300, response.getContext().getBudgetTokens());
    assertTrue(response.getContext().getText().contains("80 degrees"));
  }

  @Test
  @Order(3)
  void answerStreamsStartedDeltasAndSummaryWithCitations() {
    List<AnswerEvent> events = new ArrayList<>();
    try (AnswerStream stream = client.answer("How is espresso brewed?", RetrieveOptions.defaults().collection(COLLECTION).topK(2))) {
      stream.forEach(events::add);
    }
    assertInstanceOf(AnswerEvent.Started.class, events.get(0));
    AnswerEvent.Summary summary = assertInstanceOf(AnswerEvent.Summary.class, events.get(events.size() - 1));
    List<AnswerEvent> middle = events.subList(1, events.size() - 1);
    assertFalse(middle.isEmpty(), "no token deltas");
    String streamed =
        middle.stream().map(e -> assertInstanceOf(AnswerEvent.Delta.class, e).text()).collect(Collectors.joining());
    assertEquals(summary.text(), streamed);
    assertFalse(summary.citations().isEmpty(), summary.summary().toString());
    Set<String> inContext =
        ((AnswerEvent.Started) events.get(0)).retrieval().getContext().getCitationsList().stream()
            .map(Citation::getChunkId)
            .collect(Collectors.toSet());
    for (Citation citation : summary.citations()) {
      assertTrue(inContext.contains(citation.getChunkId()), citation.toString());
    }
    assertEquals("coffee", summary.citations().get(0).getDocumentId());
  }

  @Test
  @Order(4)
  void answerAsyncDeliversEventsInOrder() throws Exception {
    List<AnswerEvent> events = new CopyOnWriteArrayList<>();
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<GroundwireException> failure = new AtomicReference<>();
    AnswerRequest request =
        AnswerRequest.newBuilder()
            .setRetrieve(RetrieveOptions.defaults().collection(COLLECTION).toRequest("What makes sourdough rise?"))
            .build();
    client.answerAsync(
        request,
        new AnswerObserver() {
          @Override
          public void onEvent(AnswerEvent event) {
            events.add(event);
          }

          @Override
          public void onError(GroundwireException error) {
            failure.set(error);
            done.countDown();
          }

          @Override
          public void onCompleted() {
            done.countDown();
          }
        });
    assertTrue(done.await(60, TimeUnit.SECONDS));
    assertEquals(null, failure.get());
    assertInstanceOf(AnswerEvent.Started.class, events.get(0));
    AnswerEvent.Summary summary = assertInstanceOf(AnswerEvent.Summary.class, events.get(events.size() - 1));
    assertEquals("bread", summary.citations().get(0).getDocumentId());
  }

  @Test
  @Order(5)
  void cancellingAnAnswerStreamEndsItWithoutTheSummary() {
    AnswerStream stream = client.answer("How is espresso brewed?", RetrieveOptions.defaults().collection(COLLECTION));
    assertInstanceOf(AnswerEvent.Started.class, stream.next());
    stream.cancel();
    assertTrue(stream.isCancelled());
    assertFalse(stream.hasNext());
    // The channel is unharmed: the next call works.
    assertEquals(HealthCheckResponse.ServingStatus.SERVING, client.health());
  }

  @Test
  @Order(6)
  void cancellingAnAsyncAnswerReportsCancelled() throws Exception {
    CountDownLatch done = new CountDownLatch(1);
    AtomicReference<GroundwireException> failure = new AtomicReference<>();
    AtomicBoolean sawSummary = new AtomicBoolean();
    AtomicReference<Cancellable> handle = new AtomicReference<>();
    CountDownLatch started = new CountDownLatch(1);
    AnswerRequest request =
        AnswerRequest.newBuilder()
            .setRetrieve(RetrieveOptions.defaults().collection(COLLECTION).toRequest("How is espresso brewed?"))
            .build();
    handle.set(
        client.answerAsync(
            request,
            new AnswerObserver() {
              @Override
              public void onEvent(AnswerEvent event) {
                if (event instanceof AnswerEvent.Started) {
                  try {
                    started.await(10, TimeUnit.SECONDS);
                  } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                  }
                  handle.get().cancel();
                }
                if (event instanceof AnswerEvent.Summary) {
                  sawSummary.set(true);
                }
              }

              @Override
              public void onError(GroundwireException error) {
                failure.set(error);
                done.countDown();
              }

              @Override
              public void onCompleted() {
                done.countDown();
              }
            }));
    started.countDown();
    assertTrue(done.await(60, TimeUnit.SECONDS));
    assertEquals(Status.Code.CANCELLED, failure.get().code());
    assertFalse(sawSummary.get());
  }

  @Test
  @Order(7)
  void aBadRequestSurfacesTheFieldViolation() {
    GroundwireException error =
        assertThrows(
            GroundwireException.class,
            () -> client.retrieve("green tea", RetrieveOptions.defaults().collection(COLLECTION).topK(0)));
    assertEquals(Status.Code.INVALID_ARGUMENT, error.code());
    assertTrue(
        error.fieldViolations().stream().anyMatch(v -> v.field().equals("top_k") && !v.description().isEmpty()),
        error.fieldViolations().toString());
    assertTrue(error.getMessage().contains("top_k"), error.getMessage());
  }

  @Test
  @Order(8)
  void anExpiredDeadlineFailsWithDeadlineExceeded() {
    GroundwireClient hurried = client.withDeadline(Duration.ofNanos(1));
    GroundwireException error =
        assertThrows(
            GroundwireException.class,
            () -> hurried.retrieve("green tea", RetrieveOptions.defaults().collection(COLLECTION)));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, error.code());
    GroundwireException streamed =
        assertThrows(
            GroundwireException.class,
            () -> hurried.answer("green tea", RetrieveOptions.defaults().collection(COLLECTION)).forEachRemaining(e -> {}));
    assertEquals(Status.Code.DEADLINE_EXCEEDED, streamed.code());
  }

  @Test
  @Order(9)
  void upsertStreamsManyDocumentsInBatchesWithPerDocumentResults() {
    List<Document> many =
        IntStream.range(0, GroundwireClient.UPSERT_BATCH * 2 + 5)
            .mapToObj(i -> doc("bulk-" + i, "# Note " + i + "\n\nBulk note number " + i + " about tea.", "bulk"))
            .toList();
    String bulk = "java_bulk";
    client.createCollection(bulk);
    UpsertDocumentsResponse first = client.upsertDocuments(bulk, many);
    assertEquals(many.size(), first.getResultsCount());
    assertEquals(many.size(), first.getUpserted());
    UpsertDocumentsResponse again = client.upsertDocuments(bulk, many.subList(0, 3));
    for (DocumentResult result : again.getResultsList()) {
      assertEquals(DocumentOutcome.DOCUMENT_OUTCOME_UNCHANGED, result.getOutcome(), result.toString());
    }
    Document broken = Document.newBuilder().setDocumentId("").setText("no id").build();
    UpsertDocumentsResponse mixed = client.upsertDocuments(bulk, List.of(broken, doc("ok", "fine text", "bulk")));
    assertEquals(1, mixed.getUpserted(), mixed.toString());
    assertEquals(many.size() + 1, client.dropCollection(bulk).getDroppedDocuments());
  }

  @Test
  @Order(10)
  void getAndDeleteDocuments() {
    GetDocumentResponse bread = client.getDocument(COLLECTION, "bread");
    assertEquals("bread", bread.getDocument().getDocumentId());
    assertFalse(bread.getChunksList().isEmpty());
    DeleteDocumentsResponse deleted = client.deleteDocuments(COLLECTION, List.of("bread", "never-there"));
    assertEquals(1, deleted.getDeleted());
    assertEquals(List.of("never-there"), deleted.getNotFoundList());
    GroundwireException gone = assertThrows(GroundwireException.class, () -> client.getDocument(COLLECTION, "bread"));
    assertEquals(Status.Code.NOT_FOUND, gone.code());
  }

  @Test
  @Order(11)
  void theReadmeExampleRunsAgainstTheServer() {
    PrintStream original = System.out;
    ByteArrayOutputStream captured = new ByteArrayOutputStream();
    System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
    try {
      QuickStart.main(new String[] {server.address()});
    } finally {
      System.setOut(original);
    }
    String output = captured.toString(StandardCharsets.UTF_8);
    original.print(output);
    assertTrue(output.contains("indexed tea: DOCUMENT_OUTCOME_UPSERTED"), output);
    assertTrue(output.contains("hit 1 tea#"), output);
    assertTrue(output.contains("cited coffee coffee#"), output);
    assertTrue(output.contains("finish: stop"), output);
  }
}
