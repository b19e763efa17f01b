/** GroundwireClient: the Promise API over the generated grpc-js clients, on one channel. */
import {
  Channel,
  type CallOptions as GrpcCallOptions,
  type ClientUnaryCall,
  type Metadata,
  type ServiceError,
} from "@grpc/grpc-js";
import { answerEvents, type AnswerEvent } from "./answer_stream";
import { callDeadline, cancelledError, onAbort, type CallOptions } from "./call_options";
import {
  callMetadata,
  channelCredentials,
  channelOptions,
  type ClientOptions,
} from "./connection";
import { toGroundwireError } from "./errors";
import { Document } from "./generated/groundwire/v1/common";
import {
  HealthCheckResponse_ServingStatus as ServingStatus,
  HealthClient,
  healthCheckResponse_ServingStatusToJSON as servingStatusName,
} from "./generated/grpc/health/v1/health";
import {
  ChunkingOptions,
  CollectionInfo,
  CreateCollectionRequest,
  DeleteDocumentsResponse,
  GetDocumentResponse,
  IndexServiceClient,
  StatsResponse,
  UpsertDocumentsRequest,
  UpsertDocumentsResponse,
} from "./generated/groundwire/v1/index_service";
import {
  AnswerRequest,
  RetrievalServiceClient,
  RetrieveResponse,
} from "./generated/groundwire/v1/retrieval_service";
import { retrieveRequest, type RetrieveOptions } from "./requests";
import { DEFAULT_RETRY_POLICY, withRetries, type RetryPolicy } from "./retry";
import { requestBatches, UPSERT_BATCH_SIZE, writeBatches } from "./upsert_stream";

/** A document to upsert: `documentId` and `text` (or `content`), the other fields optional. */
export type DocumentInput = Parameters<typeof Document.fromPartial>[0];

/** Options of `answer`: retrieval options plus generation parameters. */
export interface AnswerOptions extends RetrieveOptions {
  /** Prompt template name ("qa", "code_qa", "summarize"); unset: chosen by the server. */
  template?: string;
  temperature?: number;
  maxTokens?: number;
  /** Let the generator rewrite the query before retrieval. */
  rewrite?: boolean;
}

/** Options of `upsertDocuments`. */
export interface UpsertOptions extends CallOptions {
  collection?: string;
  chunking?: Parameters<typeof ChunkingOptions.fromPartial>[0];
  /** Documents per stream message (1-256). Default 64. */
  batchSize?: number;
}

/** Options of `createCollection`. */
export type CreateCollectionOptions = Omit<Parameters<typeof CreateCollectionRequest.fromPartial>[0], "name"> &
  CallOptions;

type Callback<T> = (error: ServiceError | null, response?: T) => void;
type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: Metadata,
  options: Partial<GrpcCallOptions>,
  callback: Callback<Res>,
) => ClientUnaryCall;

/** A connection to one groundwire server. Close it with `close()`. */
export class GroundwireClient {
  private readonly channel: Channel;
  private readonly index: IndexServiceClient;
  private readonly retrieval: RetrievalServiceClient;
  private readonly healthClient: HealthClient;

  /** Connects lazily to `address` ("host:port"); the first call opens the connection. */
  constructor(
    readonly address: string,
    private readonly options: ClientOptions = {},
  ) {
    const credentials = channelCredentials(options.tls);
    const settings = channelOptions(options);
    this.channel = new Channel(address, credentials, settings);
    const shared = { ...settings, channelOverride: this.channel };
    this.index = new IndexServiceClient(address, credentials, shared);
    this.retrieval = new RetrievalServiceClient(address, credentials, shared);
    this.healthClient = new HealthClient(address, credentials, shared);
  }

  /** Runs the retrieval pipeline for `query`: ranked hits plus the assembled, cited context. */
  retrieve(query: string, options: RetrieveOptions & CallOptions = {}): Promise<RetrieveResponse> {
    return this.unary(this.retrieval.retrieve.bind(this.retrieval), retrieveRequest(query, options), options);
  }

  /**
   * Streams a grounded answer to `question` as events: `started` (the retrieval), `delta`s of
   * text, then `summary` (full text, citations). Iterate with `for await`; cancel with
   * `options.signal` or by leaving the loop.
   */
  answer(question: string, options: AnswerOptions & CallOptions = {}): AsyncGenerator<AnswerEvent, void, undefined> {
    const request = AnswerRequest.fromPartial({
      retrieve: retrieveRequest(question, options),
      template: options.template ?? "",
      temperature: options.temperature,
      maxTokens: options.maxTokens,
      rewrite: options.rewrite ?? false,
    });
    const deadline = callDeadline(options, this.options.timeoutMs);
    return answerEvents(
      (attemptDeadline) => this.retrieval.answer(request, this.metadata(), grpcOptions(attemptDeadline)),
      this.retryPolicy(options.retry),
      deadline,
      options.signal,
    );
  }

  /**
   * Streams `documents` into a collection and resolves with one result per document once all are
   * committed. Not retried (the iterable may be consumed only once); upserts are idempotent, so
   * the caller may safely send the same documents again.
   */
  upsertDocuments(
    documents: Iterable<DocumentInput> | AsyncIterable<DocumentInput>,
    options: UpsertOptions = {},
  ): Promise<UpsertDocumentsResponse> {
    const deadline = callDeadline(options, this.options.timeoutMs);
    const { signal } = options;
    if (signal?.aborted === true) {
      return Promise.reject(cancelledError(signal));
    }
    const batches = requestBatches(documents, options.batchSize ?? UPSERT_BATCH_SIZE, (batch, first) =>
      UpsertDocumentsRequest.fromPartial({
        collection: options.collection ?? "",
        documents: batch,
        ...(first && options.chunking !== undefined ? { chunking: options.chunking } : {}),
      }),
    );
    let resolve = (_reply: UpsertDocumentsResponse): void => undefined;
    let reject = (_error: unknown): void => undefined;
    let stopListening = (): void => undefined;
    const response = new Promise<UpsertDocumentsResponse>((onReply, onError) => {
      resolve = onReply;
      reject = onError;
    });
    const call = this.index.upsertDocuments(this.metadata(), grpcOptions(deadline), (error, reply) => {
      stopListening();
      if (error !== null) {
        reject(signal?.aborted === true ? cancelledError(signal) : toGroundwireError(error));
      } else {
        resolve(reply as UpsertDocumentsResponse);
      }
    });
    stopListening = onAbort(signal, () => call.cancel());
    writeBatches(call, batches, response).catch((error: unknown) => {
      reject(error);
      call.cancel();
    });
    return response;
  }

  /** Deletes documents by id; unknown ids are reported in `notFound`. */
  deleteDocuments(
    documentIds: string[],
    options: { collection?: string } & CallOptions = {},
  ): Promise<DeleteDocumentsResponse> {
    const request = { collection: options.collection ?? "", documentIds };
    return this.unary(this.index.deleteDocuments.bind(this.index), request, options);
  }

  /** A stored document and its chunks (NOT_FOUND when there is none). */
  getDocument(documentId: string, options: { collection?: string } & CallOptions = {}): Promise<GetDocumentResponse> {
    const request = { collection: options.collection ?? "", documentId };
    return this.unary(this.index.getDocument.bind(this.index), request, options);
  }

  /** Creates an empty collection. */
  async createCollection(name: string, options: CreateCollectionOptions = {}): Promise<CollectionInfo> {
    const { timeoutMs, deadline, signal, retry, ...fields } = options;
    const request = CreateCollectionRequest.fromPartial({ ...fields, name });
    const reply = await this.unary(this.index.createCollection.bind(this.index), request, {
      timeoutMs,
      deadline,
      signal,
      retry,
    });
    return reply.collection ?? CollectionInfo.create();
  }

  /** Deletes a collection and all its data; resolves with the number of documents it held. */
  async dropCollection(name: string, options: CallOptions = {}): Promise<number> {
    const reply = await this.unary(this.index.dropCollection.bind(this.index), { name }, options);
    return reply.droppedDocuments;
  }

  /** The caller's collections, sorted by name. */
  async listCollections(options: CallOptions = {}): Promise<CollectionInfo[]> {
    const reply = await this.unary(this.index.listCollections.bind(this.index), {}, options);
    return reply.collections;
  }

  /** Sizes, index state and cache figures of a collection (default: the server's default). */
  stats(collection = "", options: CallOptions = {}): Promise<StatsResponse> {
    return this.unary(this.index.stats.bind(this.index), { collection }, options);
  }

  /**
   * The standard gRPC health status of `service` ("" for the whole server): "SERVING",
   * "NOT_SERVING" (still loading or shutting down), "UNKNOWN" or "SERVICE_UNKNOWN".
   */
  async health(service = "", options: CallOptions = {}): Promise<keyof typeof ServingStatus> {
    const reply = await this.unary(this.healthClient.check.bind(this.healthClient), { service }, options);
    return servingStatusName(reply.status) as keyof typeof ServingStatus;
  }

  /** Closes the channel; pending calls fail with CANCELLED or UNAVAILABLE. */
  close(): void {
    this.channel.close();
  }

  private unary<Req, Res>(method: UnaryMethod<Req, Res>, request: Req, options: CallOptions): Promise<Res> {
    const { signal } = options;
    const deadline = callDeadline(options, this.options.timeoutMs);
    return withRetries(this.retryPolicy(options.retry), deadline, signal, (attemptDeadline) =>
      new Promise<Res>((resolve, reject) => {
        let stopListening = (): void => undefined;
        const call = method(request, this.metadata(), grpcOptions(attemptDeadline), (error, reply) => {
          stopListening();
          if (error !== null) {
            reject(signal?.aborted === true ? cancelledError(signal) : toGroundwireError(error));
          } else {
            resolve(reply as Res);
          }
        });
        stopListening = onAbort(signal, () => call.cancel());
      }),
    );
  }

  private retryPolicy(perCall: Partial<RetryPolicy> | false | undefined): RetryPolicy {
    const client = this.options.retry;
    if (client === false || perCall === false) {
      return { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 };
    }
    return { ...DEFAULT_RETRY_POLICY, ...client, ...perCall };
  }

  private metadata(): Metadata {
    return callMetadata(this.options.apiKey);
  }
}

function grpcOptions(deadline: Date | undefined): Partial<GrpcCallOptions> {
  return deadline === undefined ? {} : { deadline };
}

