/** Retries with exponential backoff on UNAVAILABLE and RESOURCE_EXHAUSTED, honouring RetryInfo. */
import { status as Status } from "@grpc/grpc-js";
import { cancelledError } from "./call_options";
import { GroundwireError, toGroundwireError } from "./errors";

/** How failed attempts are retried. */
export interface RetryPolicy {
  /** Attempts in total, the first included (1 disables retries). Default 4. */
  maxAttempts: number;
  /** Wait before the first retry, in milliseconds. Default 100. */
  initialBackoffMs: number;
  /** Upper bound of a computed wait, in milliseconds. Default 5000. */
  maxBackoffMs: number;
  /** Growth factor of the wait per attempt. Default 2. */
  multiplier: number;
  /** Status codes that are retried. Default UNAVAILABLE and RESOURCE_EXHAUSTED. */
  retryableCodes: readonly Status[];
  /** Called before each wait, with the failed attempt's number (from 1), its error and the wait. */
  onRetry?: (attempt: number, error: GroundwireError, delayMs: number) => void;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: 4,
  initialBackoffMs: 100,
  maxBackoffMs: 5000,
  multiplier: 2,
  retryableCodes: [Status.UNAVAILABLE, Status.RESOURCE_EXHAUSTED],
};

/**
 * The wait before retry number `attempt` (from 1): the server's RetryInfo delay when it sent one,
 * else the exponential backoff with "full jitter" between half and all of it.
 */
export function backoffMs(policy: RetryPolicy, attempt: number, error: GroundwireError): number {
  if (error.retryDelayMs !== undefined) {
    return error.retryDelayMs;
  }
  const ceiling = Math.min(policy.maxBackoffMs, policy.initialBackoffMs * policy.multiplier ** (attempt - 1));
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

/**
 * Runs `attempt` until it succeeds, fails with a code the policy does not retry, runs out of
 * attempts, or the next wait would pass `deadline`; then throws the last GroundwireError.
 */
export async function withRetries<T>(
  policy: RetryPolicy,
  deadline: Date | undefined,
  signal: AbortSignal | undefined,
  attempt: (deadline: Date | undefined) => Promise<T>,
): Promise<T> {
  for (let number = 1; ; number++) {
    if (signal?.aborted) {
      throw cancelledError(signal);
    }
    let error: GroundwireError;
    try {
      return await attempt(deadline);
    } catch (caught) {
      error = toGroundwireError(caught);
    }
    if (number >= policy.maxAttempts || !policy.retryableCodes.includes(error.code)) {
      throw error;
    }
    const delayMs = backoffMs(policy, number, error);
    if (deadline !== undefined && Date.now() + delayMs >= deadline.getTime()) {
      throw error;
    }
    policy.onRetry?.(number, error, delayMs);
    await sleep(delayMs, signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", abort);
      resolve();
    }, ms);
    const abort = (): void => {
      clearTimeout(timer);
      reject(cancelledError(signal as AbortSignal));
    };
    signal?.addEventListener("abort", abort, { once: true });
  });
}
