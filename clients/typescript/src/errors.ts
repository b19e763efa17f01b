/** GroundwireError: a failed call with its gRPC status code, message and google.rpc details. */
import { Metadata, status as Status, type ServiceError } from "@grpc/grpc-js";
import { BadRequest, RetryInfo } from "./generated/google/rpc/error_details";
import { Status as RpcStatus } from "./generated/google/rpc/status";

/** One invalid request field, as the server names it (for example `top_k`). */
export interface FieldViolation {
  field: string;
  description: string;
}

const STATUS_DETAILS_KEY = "grpc-status-details-bin";
const BAD_REQUEST_TYPE = "type.googleapis.com/google.rpc.BadRequest";
const RETRY_INFO_TYPE = "type.googleapis.com/google.rpc.RetryInfo";

/** The name of a numeric gRPC status code, for example `"INVALID_ARGUMENT"`. */
export function statusName(code: number): string {
  return Status[code] ?? `UNKNOWN_CODE_${code}`;
}

/** A call that ended with a non-OK gRPC status. */
export class GroundwireError extends Error {
  /** The gRPC status code (compare with `status.INVALID_ARGUMENT` from `@grpc/grpc-js`). */
  readonly code: Status;
  /** The status message the server sent (names the fix for bad input). */
  readonly details: string;
  /** BadRequest field violations, empty when the server sent none. */
  readonly fieldViolations: readonly FieldViolation[];
  /** The server's RetryInfo delay in milliseconds, when it sent one. */
  readonly retryDelayMs: number | undefined;
  /** Trailing metadata of the failed call. */
  readonly metadata: Metadata;

  constructor(
    code: Status,
    details: string,
    options: {
      fieldViolations?: readonly FieldViolation[];
      retryDelayMs?: number;
      metadata?: Metadata;
      cause?: unknown;
    } = {},
  ) {
    super(`${statusName(code)}: ${details}`, { cause: options.cause });
    this.name = "GroundwireError";
    this.code = code;
    this.details = details;
    this.fieldViolations = options.fieldViolations ?? [];
    this.retryDelayMs = options.retryDelayMs;
    this.metadata = options.metadata ?? new Metadata();
  }

  /** The status code's name, for example `"INVALID_ARGUMENT"`. */
  get codeName(): string {
    return statusName(this.code);
  }
}

/** Converts what a grpc-js call failed with into a GroundwireError (decoding status details). */
export function toGroundwireError(error: unknown): GroundwireError {
  if (error instanceof GroundwireError) {
    return error;
  }
  if (!isServiceError(error)) {
    const message = error instanceof Error ? error.message : String(error);
    return new GroundwireError(Status.UNKNOWN, message, { cause: error });
  }
  const metadata = error.metadata ?? new Metadata();
  const decoded = decodeStatusDetails(metadata);
  return new GroundwireError(error.code, error.details, { ...decoded, metadata, cause: error });
}

/** The BadRequest violations and RetryInfo delay in a `grpc-status-details-bin` trailer. */
export function decodeStatusDetails(metadata: Metadata): {
  fieldViolations: FieldViolation[];
  retryDelayMs?: number;
} {
  const fieldViolations: FieldViolation[] = [];
  let retryDelayMs: number | undefined;
  for (const value of metadata.get(STATUS_DETAILS_KEY)) {
    const bytes = typeof value === "string" ? Buffer.from(value, "base64") : value;
    for (const detail of RpcStatus.decode(bytes).details) {
      if (detail.typeUrl === BAD_REQUEST_TYPE) {
        for (const violation of BadRequest.decode(detail.value).fieldViolations) {
          fieldViolations.push({ field: violation.field, description: violation.description });
        }
      } else if (detail.typeUrl === RETRY_INFO_TYPE) {
        const delay = RetryInfo.decode(detail.value).retryDelay;
        if (delay !== undefined) {
          retryDelayMs = delay.seconds * 1000 + delay.nanos / 1e6;
        }
      }
    }
  }
  return retryDelayMs === undefined ? { fieldViolations } : { fieldViolations, retryDelayMs };
}

function isServiceError(error: unknown): error is ServiceError {
  return (
    error instanceof Error &&
    typeof (error as Partial<ServiceError>).code === "number" &&
    typeof (error as Partial<ServiceError>).details === "string"
  );
}
