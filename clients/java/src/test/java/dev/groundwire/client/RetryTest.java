package dev.groundwire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Any;
import com.google.rpc.RetryInfo;
import groundwire.v1.RetrievalServiceGrpc;
import groundwire.v1.RetrievalServiceOuterClass.AnswerDelta;
import groundwire.v1.RetrievalServiceOuterClass.AnswerRequest;
import groundwire.v1.RetrievalServiceOuterClass.AnswerResponse;
import groundwire.v1.RetrievalServiceOuterClass.AnswerStarted;
import groundwire.v1.RetrievalServiceOuterClass.AnswerSummary;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveRequest;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveResponse;
import io.grpc.Grpc;
import io.grpc.InsecureServerCredentials;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.protobuf.StatusProto;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retries against a grpc-java server in the test whose Retrieve replies are scripted: it can fail
 * with UNAVAILABLE or RESOURCE_EXHAUSTED carrying a RetryInfo delay, and it counts the attempts.
 * (The real server only sends RetryInfo when overloaded or still loading, which a test cannot
 * bring about on demand.) It can also hang, for deadlines and for cancelling a blocked reader.
 */
class RetryTest {
  /** One scripted reply: a failure status with an optional RetryInfo delay, success, or silence. */
  private record Reply(Status.Code code, Duration retryDelay) {
    static final Reply OK = new Reply(Status.Code.OK, null);
    static final Reply HANG = new Reply(null, null);
  }

  private final Deque<Reply> script = new ArrayDeque<>();
  private final List<Long> attempts = new CopyOnWriteArrayList<>();
  private final CountDownLatch serverSawCancel = new CountDownLatch(1);
  private Server server;

  @BeforeEach
  void startServer() throws Exception {
    server =
        Grpc.newServerBuilderForPort(0, InsecureServerCredentials.create())
            .addService(
                new RetrievalServiceGrpc.RetrievalServiceImplBase() {
                  @Override
                  public void retrieve(RetrieveRequest request, StreamObserver<RetrieveResponse> response) {
                    attempts.add(System.nanoTime());
                    Reply reply;
                    synchronized (script) {
                      reply = script.isEmpty() ? Reply.OK : script.poll();
                    }
                    if (reply == Reply.HANG) {
                      return;
                    }
                    if (reply.code() == Status.Code.OK) {
                      response.onNext(RetrieveResponse.newBuilder().setCollection("scripted").build());
                      response.onCompleted();
                      return;
                    }
                    response.onError(failure(reply));
                  }

                  @Override
                  public void answer(AnswerRequest request, StreamObserver<AnswerResponse> response) {
                    attempts.add(System.nanoTime());
                    Reply reply;
                    synchronized (script) {
                      reply = script.isEmpty() ? Reply.OK : script.poll();
                    }
                    if (reply == Reply.HANG) {
                      ((ServerCallStreamObserver<AnswerResponse>) response)
                          .setOnCancelHandler(serverSawCancel::countDown);
                      response.onNext(
                          AnswerResponse.newBuilder().setStarted(AnswerStarted.getDefaultInstance()).build());
                      return;
                    }
                    if (reply.code() != Status.Code.OK) {
                      response.onError(failure(reply));
                      return;
                    }
                    response.onNext(
                        AnswerResponse.newBuilder()
                            .setStarted(AnswerStarted.newBuilder().setTemplate("qa"))
                            .build());
                    response.onNext(
                        AnswerResponse.newBuilder().setDelta(AnswerDelta.newBuilder().setText("ok")).build());
                    response.onNext(
                        AnswerResponse.newBuilder()
                            .setSummary(AnswerSummary.newBuilder().setText("ok").setFinishReason("stop"))
                            .build());
                    response.onCompleted();
                  }
                })
            .build()
            .start();
  }

  /** The scripted failure as a status with google.rpc details, as the real server sends it. */
  private static io.grpc.StatusRuntimeException failure(Reply reply) {
    com.google.rpc.Status.Builder status =
        com.google.rpc.Status.newBuilder().setCode(reply.code().value()).setMessage("try later");
    if (reply.retryDelay() != null) {
      Duration d = reply.retryDelay();
      status.addDetails(
          Any.pack(
              RetryInfo.newBuilder()
                  .setRetryDelay(
                      com.google.protobuf.Duration.newBuilder().setSeconds(d.getSeconds()).setNanos(d.getNano()))
                  .build()));
    }
    return StatusProto.toStatusRuntimeException(status.build());
  }

  @AfterEach
  void stopServer() throws Exception {
    server.shutdownNow().awaitTermination(10, TimeUnit.SECONDS);
  }

  private GroundwireClient client(RetryPolicy policy, Duration deadline) {
    return GroundwireClient.builder("127.0.0.1:" + server.getPort()).retryPolicy(policy).deadline(deadline).build();
  }

  private static final RetryPolicy FAST = new RetryPolicy(4, Duration.ofMillis(1), Duration.ofMillis(2), 2.0);
  private static final RetrieveRequest REQUEST = RetrieveRequest.newBuilder().setQuery("q").build();

  private void script(Reply... replies) {
    synchronized (script) {
      script.addAll(List.of(replies));
    }
  }

  private long gapMillis(int i) {
    return TimeUnit.NANOSECONDS.toMillis(attempts.get(i) - attempts.get(i - 1));
  }

  @Test
  void unavailableIsRetriedAfterTheServersRetryInfoDelay() {
    Duration asked = Duration.ofMillis(400);
    script(new Reply(Status.Code.UNAVAILABLE, asked), new Reply(Status.Code.RESOURCE_EXHAUSTED, asked));
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      assertEquals("scripted", client.retrieve(REQUEST).getCollection());
    }
    assertEquals(3, attempts.size());
    // The policy's own backoff is 1-2 ms: the waits follow the server's RetryInfo instead.
    assertTrue(gapMillis(1) >= asked.toMillis(), "waited only " + gapMillis(1) + " ms");
    assertTrue(gapMillis(2) >= asked.toMillis(), "waited only " + gapMillis(2) + " ms");
  }

  @Test
  void withoutRetryInfoTheBackoffAppliesAndAttemptsAreBounded() {
    for (int i = 0; i < 10; i++) {
      script(new Reply(Status.Code.UNAVAILABLE, null));
    }
    GroundwireException error;
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      error = assertThrows(GroundwireException.class, () -> client.retrieve(REQUEST));
    }
    assertEquals(Status.Code.UNAVAILABLE, error.code());
    assertEquals("try later", error.description());
    assertEquals(FAST.maxAttempts(), attempts.size());
  }

  @Test
  void theRetryInfoDelayIsExposedOnTheFinalError() {
    script(new Reply(Status.Code.RESOURCE_EXHAUSTED, Duration.ofMillis(1500)));
    GroundwireException error;
    try (GroundwireClient client = client(RetryPolicy.NONE, Duration.ofSeconds(20))) {
      error = assertThrows(GroundwireException.class, () -> client.retrieve(REQUEST));
    }
    assertEquals(Status.Code.RESOURCE_EXHAUSTED, error.code());
    assertEquals(Duration.ofMillis(1500), error.retryDelay().orElseThrow());
    assertEquals(1, attempts.size());
  }

  @Test
  void otherCodesAreNotRetried() {
    script(new Reply(Status.Code.INVALID_ARGUMENT, null));
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      GroundwireException error = assertThrows(GroundwireException.class, () -> client.retrieve(REQUEST));
      assertEquals(Status.Code.INVALID_ARGUMENT, error.code());
    }
    assertEquals(1, attempts.size());
  }

  @Test
  void aRetryDelayBeyondTheDeadlineEndsTheCallAtOnce() {
    script(new Reply(Status.Code.UNAVAILABLE, Duration.ofSeconds(30)));
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(5))) {
      GroundwireException error = assertThrows(GroundwireException.class, () -> client.retrieve(REQUEST));
      assertEquals(Status.Code.UNAVAILABLE, error.code());
      assertEquals(Duration.ofSeconds(30), error.retryDelay().orElseThrow());
    }
    assertEquals(1, attempts.size());
  }

  @Test
  void aServerThatNeverAnswersHitsTheDeadline() {
    script(Reply.HANG);
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      GroundwireException error =
          assertThrows(
              GroundwireException.class, () -> client.withDeadline(Duration.ofMillis(300)).retrieve(REQUEST));
      assertEquals(Status.Code.DEADLINE_EXCEEDED, error.code());
    }
    assertEquals(1, attempts.size());
  }

  @Test
  void openingAnAnswerStreamIsRetriedAfterTheRetryInfoDelay() {
    Duration asked = Duration.ofMillis(300);
    script(new Reply(Status.Code.UNAVAILABLE, asked));
    List<AnswerEvent> events = new java.util.ArrayList<>();
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20));
        AnswerStream stream = client.answer("q", RetrieveOptions.defaults())) {
      stream.forEach(events::add);
    }
    assertEquals(2, attempts.size());
    assertTrue(gapMillis(1) >= asked.toMillis(), "waited only " + gapMillis(1) + " ms");
    assertEquals(3, events.size());
    assertEquals("ok", ((AnswerEvent.Summary) events.get(2)).text());
  }

  @Test
  void cancellingAnAnswerStreamUnblocksTheReaderAndReachesTheServer() throws Exception {
    script(Reply.HANG);
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(60))) {
      AnswerStream stream = client.answer("q", RetrieveOptions.defaults());
      assertTrue(stream.next() instanceof AnswerEvent.Started);
      var reader = Executors.newSingleThreadExecutor();
      try {
        Future<Boolean> blocked = reader.submit(stream::hasNext); // the server sends nothing more
        stream.cancel();
        assertEquals(false, blocked.get(30, TimeUnit.SECONDS));
      } finally {
        reader.shutdownNow();
      }
      assertTrue(serverSawCancel.await(30, TimeUnit.SECONDS), "the server never saw the cancellation");
    }
  }

  @Test
  void asyncCallsRetryToo() throws Exception {
    Duration asked = Duration.ofMillis(300);
    script(new Reply(Status.Code.UNAVAILABLE, asked), new Reply(Status.Code.UNAVAILABLE, asked));
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      assertEquals("scripted", client.retrieveAsync(REQUEST).get(20, TimeUnit.SECONDS).getCollection());
    }
    assertEquals(3, attempts.size());
    assertTrue(gapMillis(1) >= asked.toMillis(), "waited only " + gapMillis(1) + " ms");

    script(new Reply(Status.Code.FAILED_PRECONDITION, null));
    try (GroundwireClient client = client(FAST, Duration.ofSeconds(20))) {
      ExecutionException failed =
          assertThrows(ExecutionException.class, () -> client.retrieveAsync(REQUEST).get(20, TimeUnit.SECONDS));
      assertEquals(Status.Code.FAILED_PRECONDITION, ((GroundwireException) failed.getCause()).code());
    }
  }
}
