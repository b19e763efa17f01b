package dev.groundwire.client;

import groundwire.v1.Common.Document;
import groundwire.v1.IndexServiceGrpc;
import groundwire.v1.IndexServiceOuterClass.CollectionInfo;
import groundwire.v1.IndexServiceOuterClass.CreateCollectionRequest;
import groundwire.v1.IndexServiceOuterClass.DeleteDocumentsRequest;
import groundwire.v1.IndexServiceOuterClass.DeleteDocumentsResponse;
import groundwire.v1.IndexServiceOuterClass.DropCollectionRequest;
import groundwire.v1.IndexServiceOuterClass.DropCollectionResponse;
import groundwire.v1.IndexServiceOuterClass.GetDocumentRequest;
import groundwire.v1.IndexServiceOuterClass.GetDocumentResponse;
import groundwire.v1.IndexServiceOuterClass.ListCollectionsRequest;
import groundwire.v1.IndexServiceOuterClass.StatsRequest;
import groundwire.v1.IndexServiceOuterClass.StatsResponse;
import groundwire.v1.IndexServiceOuterClass.UpsertDocumentsRequest;
import groundwire.v1.IndexServiceOuterClass.UpsertDocumentsResponse;
import groundwire.v1.RetrievalServiceGrpc;
import groundwire.v1.RetrievalServiceOuterClass.AnswerRequest;
import groundwire.v1.RetrievalServiceOuterClass.AnswerResponse;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveRequest;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveResponse;
import io.grpc.CallCredentials;
import io.grpc.ChannelCredentials;
import io.grpc.Context;
import io.grpc.Deadline;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.TlsChannelCredentials;
import io.grpc.health.v1.HealthCheckRequest;
import io.grpc.health.v1.HealthCheckResponse;
import io.grpc.health.v1.HealthGrpc;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * A groundwire client: one gRPC channel with the RetrievalService, IndexService and health stubs.
 *
 * <pre>{@code
 * try (GroundwireClient client = GroundwireClient.builder("127.0.0.1:50051").apiKey(key).build()) {
 *   RetrieveResponse hits = client.retrieve("how do I rotate keys?", RetrieveOptions.defaults().topK(3));
 * }
 * }</pre>
 *
 * <p>Every call has a deadline (the builder's, or {@link #withDeadline}'s); unary calls are retried
 * on UNAVAILABLE and RESOURCE_EXHAUSTED per the {@link RetryPolicy}, honouring the server's
 * RetryInfo delay. Failures are thrown as {@link GroundwireException}. Thread-safe.
 */
public final class GroundwireClient implements AutoCloseable {
  /** Documents sent per UpsertDocuments message. */
  static final int UPSERT_BATCH = 32;

  private final ManagedChannel channel;
  private final boolean ownsChannel;
  private final CallCredentials credentials;
  private final Duration deadline;
  private final RetryPolicy retryPolicy;
  private final ScheduledExecutorService scheduler;

  private GroundwireClient(
      ManagedChannel channel,
      boolean ownsChannel,
      CallCredentials credentials,
      Duration deadline,
      RetryPolicy retryPolicy,
      ScheduledExecutorService scheduler) {
    this.channel = channel;
    this.ownsChannel = ownsChannel;
    this.credentials = credentials;
    this.deadline = deadline;
    this.retryPolicy = retryPolicy;
    this.scheduler = scheduler;
  }

  /** A builder for a client of the server at {@code address} ("host:port" or a gRPC target). */
  public static Builder builder(String address) {
    return new Builder(address);
  }

  /** How a client connects. Without {@link #caFile} the connection is plaintext. */
  public static final class Builder {
    private final String address;
    private Path caFile;
    private Path certFile;
    private Path keyFile;
    private String apiKey;
    private Duration deadline = Duration.ofSeconds(30);
    private RetryPolicy retryPolicy = RetryPolicy.DEFAULT;

    private Builder(String address) {
      this.address = Objects.requireNonNull(address, "address");
    }

    /** Use TLS, verifying the server against this PEM CA bundle. */
    public Builder caFile(Path caFile) {
      this.caFile = caFile;
      return this;
    }

    /** Mutual TLS: present this PEM certificate chain and its PEM (PKCS#8) key. Needs {@link #caFile}. */
    public Builder clientCertificate(Path certFile, Path keyFile) {
      this.certFile = certFile;
      this.keyFile = keyFile;
      return this;
    }

    /** Send this API key as {@code authorization: Bearer <key>} on every call. */
    public Builder apiKey(String apiKey) {
      this.apiKey = apiKey;
      return this;
    }

    /** The deadline of each call (default 30 s); retries share it. */
    public Builder deadline(Duration deadline) {
      if (deadline.isNegative() || deadline.isZero()) {
        throw new IllegalArgumentException("the deadline must be positive; got " + deadline);
      }
      this.deadline = deadline;
      return this;
    }

    /** How unary calls are retried (default {@link RetryPolicy#DEFAULT}). */
    public Builder retryPolicy(RetryPolicy retryPolicy) {
      this.retryPolicy = Objects.requireNonNull(retryPolicy, "retryPolicy");
      return this;
    }

    /** Opens the channel (lazily: the first call connects). */
    public GroundwireClient build() {
      ChannelCredentials channelCredentials;
      if (caFile != null) {
        try {
          TlsChannelCredentials.Builder tls = TlsChannelCredentials.newBuilder().trustManager(caFile.toFile());
          if (certFile != null) {
            tls.keyManager(certFile.toFile(), keyFile.toFile());
          }
          channelCredentials = tls.build();
        } catch (IOException error) {
          throw new IllegalArgumentException("cannot read the TLS files: " + error.getMessage(), error);
        }
      } else if (certFile != null) {
        throw new IllegalArgumentException("a client certificate needs TLS: set caFile too");
      } else {
        channelCredentials = InsecureChannelCredentials.create();
      }
      ManagedChannel channel = Grpc.newChannelBuilder(address, channelCredentials).build();
      CallCredentials callCredentials = apiKey == null ? null : new BearerToken(apiKey);
      ScheduledExecutorService scheduler =
          Executors.newSingleThreadScheduledExecutor(
              task -> {
                Thread thread = new Thread(task, "groundwire-retry");
                thread.setDaemon(true);
                return thread;
              });
      return new GroundwireClient(channel, true, callCredentials, deadline, retryPolicy, scheduler);
    }
  }

  /** A view of this client whose calls have {@code deadline}; it shares the channel (closing it does nothing). */
  public GroundwireClient withDeadline(Duration deadline) {
    if (deadline.isNegative() || deadline.isZero()) {
      throw new IllegalArgumentException("the deadline must be positive; got " + deadline);
    }
    return new GroundwireClient(channel, false, credentials, deadline, retryPolicy, scheduler);
  }

  /** A view of this client with another retry policy; it shares the channel. */
  public GroundwireClient withRetryPolicy(RetryPolicy retryPolicy) {
    return new GroundwireClient(channel, false, credentials, deadline, retryPolicy, scheduler);
  }

  // ---- RetrievalService

  /** Retrieve: ranked hits and an assembled, citation-tagged context. */
  public RetrieveResponse retrieve(RetrieveRequest request) {
    return unary(d -> retrievalBlocking(d).retrieve(request));
  }

  /** Retrieve {@code query} with the common options. */
  public RetrieveResponse retrieve(String query, RetrieveOptions options) {
    return retrieve(options.toRequest(query));
  }

  /** Retrieve without blocking; the future fails with a {@link GroundwireException}. */
  public CompletableFuture<RetrieveResponse> retrieveAsync(RetrieveRequest request) {
    return unaryAsync((d, observer) -> retrievalAsync(d).retrieve(request, observer));
  }

  /**
   * Answer as a blocking stream of events (Started, Deltas, Summary). Returns once the stream has
   * started (its first event arrived): opening it is retried like a unary call; a failure after
   * that surfaces from the iteration. Close it (try-with-resources) or cancel it to stop early.
   */
  public AnswerStream answer(AnswerRequest request) {
    Deadline callDeadline = newDeadline();
    for (int attempt = 1; ; attempt++) {
      Context.CancellableContext context = Context.current().withCancellation();
      GroundwireException failure;
      try {
        Iterator<AnswerResponse> responses =
            context.call(() -> retrievalBlocking(callDeadline).answer(request));
        responses.hasNext(); // blocks for the first event, or throws the call's failure
        return new AnswerStream(responses, context);
      } catch (StatusRuntimeException error) {
        context.cancel(null);
        failure = GroundwireException.from(error);
      } catch (Exception error) {
        context.cancel(error);
        throw GroundwireException.from(error);
      }
      Duration wait = nextWait(attempt, failure, callDeadline);
      if (wait == null) {
        throw failure;
      }
      sleep(wait, failure);
    }
  }

  /** Answer {@code question} retrieved with the common options. */
  public AnswerStream answer(String question, RetrieveOptions options) {
    return answer(AnswerRequest.newBuilder().setRetrieve(options.toRequest(question)).build());
  }

  /** Answer delivered to {@code observer} on gRPC threads; the handle cancels it. */
  public Cancellable answerAsync(AnswerRequest request, AnswerObserver observer) {
    AtomicReference<ClientCallStreamObserver<AnswerRequest>> call = new AtomicReference<>();
    retrievalAsync(newDeadline())
        .answer(
            request,
            new ClientResponseObserver<AnswerRequest, AnswerResponse>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<AnswerRequest> requestStream) {
                call.set(requestStream);
              }

              @Override
              public void onNext(AnswerResponse value) {
                AnswerEvent event;
                try {
                  event = AnswerEvent.of(value);
                } catch (GroundwireException malformed) {
                  call.get().cancel("malformed event", malformed);
                  return;
                }
                observer.onEvent(event);
              }

              @Override
              public void onError(Throwable error) {
                observer.onError(GroundwireException.from(error));
              }

              @Override
              public void onCompleted() {
                observer.onCompleted();
              }
            });
    return () -> call.get().cancel("cancelled by the caller", null);
  }

  // ---- IndexService

  /**
   * UpsertDocuments: streams {@code documents} (in batches, with flow control) into {@code
   * collection} and returns the per-document results. Not retried: the iterable may be one-shot.
   */
  public UpsertDocumentsResponse upsertDocuments(String collection, Iterable<Document> documents) {
    CompletableFuture<UpsertDocumentsResponse> result = new CompletableFuture<>();
    Object ready = new Object();
    AtomicReference<ClientCallStreamObserver<UpsertDocumentsRequest>> call = new AtomicReference<>();
    indexAsync(newDeadline())
        .upsertDocuments(
            new ClientResponseObserver<UpsertDocumentsRequest, UpsertDocumentsResponse>() {
              @Override
              public void beforeStart(ClientCallStreamObserver<UpsertDocumentsRequest> requestStream) {
                call.set(requestStream);
                requestStream.setOnReadyHandler(
                    () -> {
                      synchronized (ready) {
                        ready.notifyAll();
                      }
                    });
              }

              @Override
              public void onNext(UpsertDocumentsResponse value) {
                result.complete(value);
              }

              @Override
              public void onError(Throwable error) {
                result.completeExceptionally(GroundwireException.from(error));
                synchronized (ready) {
                  ready.notifyAll();
                }
              }

              @Override
              public void onCompleted() {
                result.completeExceptionally(
                    new GroundwireException(
                        Status.Code.INTERNAL, "UpsertDocuments ended without a response", List.of(), null, null));
              }
            });
    ClientCallStreamObserver<UpsertDocumentsRequest> requests = call.get();
    try {
      List<Document> batch = new ArrayList<>(UPSERT_BATCH);
      for (Document document : documents) {
        batch.add(document);
        if (batch.size() == UPSERT_BATCH) {
          if (!send(requests, collection, batch, ready, result)) {
            break;
          }
          batch.clear();
        }
      }
      if (!batch.isEmpty() && !result.isDone()) {
        send(requests, collection, batch, ready, result);
      }
      if (!result.isDone()) {
        requests.onCompleted();
      }
    } catch (RuntimeException | InterruptedException error) {
      requests.cancel("the document iterable failed", error);
      if (error instanceof InterruptedException) {
        Thread.currentThread().interrupt();
        throw new GroundwireException(Status.Code.CANCELLED, "interrupted", List.of(), null, error);
      }
      throw (RuntimeException) error;
    }
    return await(result);
  }

  private static boolean send(
      ClientCallStreamObserver<UpsertDocumentsRequest> requests,
      String collection,
      List<Document> batch,
      Object ready,
      CompletableFuture<?> result)
      throws InterruptedException {
    synchronized (ready) {
      while (!requests.isReady() && !result.isDone()) {
        ready.wait(100);
      }
    }
    if (result.isDone()) {
      return false;
    }
    requests.onNext(
        UpsertDocumentsRequest.newBuilder().setCollection(collection).addAllDocuments(batch).build());
    return true;
  }

  /** DeleteDocuments: removes the documents; unknown ids are reported in not_found. */
  public DeleteDocumentsResponse deleteDocuments(String collection, List<String> documentIds) {
    DeleteDocumentsRequest request =
        DeleteDocumentsRequest.newBuilder().setCollection(collection).addAllDocumentIds(documentIds).build();
    return unary(d -> indexBlocking(d).deleteDocuments(request));
  }

  /** GetDocument: the stored document, its content hash and its chunks. */
  public GetDocumentResponse getDocument(String collection, String documentId) {
    GetDocumentRequest request =
        GetDocumentRequest.newBuilder().setCollection(collection).setDocumentId(documentId).build();
    return unary(d -> indexBlocking(d).getDocument(request));
  }

  /** CreateCollection with the server's default index and chunking. */
  public CollectionInfo createCollection(String name) {
    return createCollection(CreateCollectionRequest.newBuilder().setName(name).build());
  }

  /** CreateCollection with explicit settings. */
  public CollectionInfo createCollection(CreateCollectionRequest request) {
    return unary(d -> indexBlocking(d).createCollection(request)).getCollection();
  }

  /** DropCollection: deletes the collection and all its documents. */
  public DropCollectionResponse dropCollection(String name) {
    DropCollectionRequest request = DropCollectionRequest.newBuilder().setName(name).build();
    return unary(d -> indexBlocking(d).dropCollection(request));
  }

  /** ListCollections: the caller's collections. */
  public List<CollectionInfo> listCollections() {
    return unary(d -> indexBlocking(d).listCollections(ListCollectionsRequest.getDefaultInstance()))
        .getCollectionsList();
  }

  /** Stats of one collection (empty name: the default collection). */
  public StatsResponse stats(String collection) {
    StatsRequest request = StatsRequest.newBuilder().setCollection(collection).build();
    return unary(d -> indexBlocking(d).stats(request));
  }

  // ---- health

  /** The server's overall health status (grpc.health.v1). */
  public HealthCheckResponse.ServingStatus health() {
    return health("");
  }

  /** The health status of one service, for example "groundwire.v1.RetrievalService". */
  public HealthCheckResponse.ServingStatus health(String service) {
    HealthCheckRequest request = HealthCheckRequest.newBuilder().setService(service).build();
    return unary(d -> HealthGrpc.newBlockingStub(channel).withDeadline(d).check(request)).getStatus();
  }

  /** Shuts the channel down (a view made by withDeadline/withRetryPolicy leaves it open). */
  @Override
  public void close() {
    if (!ownsChannel) {
      return;
    }
    channel.shutdownNow();
    scheduler.shutdownNow();
    try {
      channel.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  // ---- plumbing

  private Deadline newDeadline() {
    return Deadline.after(deadline.toNanos(), TimeUnit.NANOSECONDS);
  }

  private RetrievalServiceGrpc.RetrievalServiceBlockingStub retrievalBlocking(Deadline d) {
    return RetrievalServiceGrpc.newBlockingStub(channel).withDeadline(d).withCallCredentials(credentials);
  }

  private RetrievalServiceGrpc.RetrievalServiceStub retrievalAsync(Deadline d) {
    return RetrievalServiceGrpc.newStub(channel).withDeadline(d).withCallCredentials(credentials);
  }

  private IndexServiceGrpc.IndexServiceBlockingStub indexBlocking(Deadline d) {
    return IndexServiceGrpc.newBlockingStub(channel).withDeadline(d).withCallCredentials(credentials);
  }

  private IndexServiceGrpc.IndexServiceStub indexAsync(Deadline d) {
    return IndexServiceGrpc.newStub(channel).withDeadline(d).withCallCredentials(credentials);
  }

  /** Runs a blocking unary call under one deadline, retrying per the policy. */
  private <T> T unary(Function<Deadline, T> call) {
    Deadline callDeadline = newDeadline();
    for (int attempt = 1; ; attempt++) {
      GroundwireException failure;
      try {
        return call.apply(callDeadline);
      } catch (StatusRuntimeException error) {
        failure = GroundwireException.from(error);
      }
      Duration wait = nextWait(attempt, failure, callDeadline);
      if (wait == null) {
        throw failure;
      }
      sleep(wait, failure);
    }
  }

  private static void sleep(Duration wait, GroundwireException failure) {
    try {
      Thread.sleep(wait.toMillis(), (int) (wait.toNanos() % 1_000_000));
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      throw failure;
    }
  }

  /** The wait before the next attempt, or null when the failure is final. */
  private Duration nextWait(int attempt, GroundwireException failure, Deadline callDeadline) {
    if (attempt >= retryPolicy.maxAttempts() || !retryPolicy.retryable(failure.code())) {
      return null;
    }
    Duration wait = retryPolicy.delayAfter(attempt, failure);
    if (callDeadline.timeRemaining(TimeUnit.NANOSECONDS) <= wait.toNanos()) {
      return null;
    }
    return wait;
  }

  /** Runs an async unary call under one deadline, retrying per the policy on the scheduler. */
  private <T> CompletableFuture<T> unaryAsync(BiConsumer<Deadline, StreamObserver<T>> call) {
    CompletableFuture<T> result = new CompletableFuture<>();
    attemptAsync(call, newDeadline(), 1, result);
    return result;
  }

  private <T> void attemptAsync(
      BiConsumer<Deadline, StreamObserver<T>> call, Deadline callDeadline, int attempt, CompletableFuture<T> result) {
    call.accept(
        callDeadline,
        new StreamObserver<T>() {
          @Override
          public void onNext(T value) {
            result.complete(value);
          }

          @Override
          public void onError(Throwable error) {
            GroundwireException failure = GroundwireException.from(error);
            Duration wait = nextWait(attempt, failure, callDeadline);
            if (wait == null || result.isCancelled()) {
              result.completeExceptionally(failure);
              return;
            }
            scheduler.schedule(
                () -> attemptAsync(call, callDeadline, attempt + 1, result), wait.toNanos(), TimeUnit.NANOSECONDS);
          }

          @Override
          public void onCompleted() {}
        });
  }

  private static <T> T await(CompletableFuture<T> future) {
    try {
      return future.get();
    } catch (ExecutionException failed) {
      throw GroundwireException.from(failed.getCause());
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
      future.cancel(true);
      throw new GroundwireException(Status.Code.CANCELLED, "interrupted", List.of(), null, interrupted);
    }
  }
}
