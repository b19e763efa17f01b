/** @groundwire/client: a Promise and async-iterator client for the groundwire gRPC server. */
export { status } from "@grpc/grpc-js";
export type { AnswerEvent } from "./answer_stream";
export type { CallOptions } from "./call_options";
export {
  GroundwireClient,
  type AnswerOptions,
  type CreateCollectionOptions,
  type DocumentInput,
  type UpsertOptions,
} from "./client";
export type { ClientOptions, TlsOptions } from "./connection";
export { GroundwireError, statusName, type FieldViolation } from "./errors";
export type { Mode, RetrieveOptions } from "./requests";
export { DEFAULT_RETRY_POLICY, type RetryPolicy } from "./retry";
export * as common from "./generated/groundwire/v1/common";
export * as indexService from "./generated/groundwire/v1/index_service";
export * as retrievalService from "./generated/groundwire/v1/retrieval_service";
export { RiskLevel, SourceType } from "./generated/groundwire/v1/common";
export { DocumentOutcome } from "./generated/groundwire/v1/index_service";
