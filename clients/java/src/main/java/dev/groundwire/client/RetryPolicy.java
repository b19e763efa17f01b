package dev.groundwire.client;

import io.grpc.Status;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How unary calls are retried: up to {@code maxAttempts} attempts on UNAVAILABLE and
 * RESOURCE_EXHAUSTED, waiting an exponentially growing, jittered backoff between them, or the
 * server's {@code RetryInfo} delay when it sent one (whichever is longer). Retries never outlive
 * the call's deadline.
 */
public record RetryPolicy(int maxAttempts, Duration initialBackoff, Duration maxBackoff, double multiplier) {
  /** Codes that mean "try again later". */
  public static final Set<Status.Code> RETRYABLE =
      Set.of(Status.Code.UNAVAILABLE, Status.Code.RESOURCE_EXHAUSTED);

  /** 4 attempts, 100 ms doubling up to 5 s. */
  public static final RetryPolicy DEFAULT =
      new RetryPolicy(4, Duration.ofMillis(100), Duration.ofSeconds(5), 2.0);

  /** A single attempt. */
  public static final RetryPolicy NONE = new RetryPolicy(1, Duration.ZERO, Duration.ZERO, 1.0);

  public RetryPolicy {
    if (maxAttempts < 1) {
      throw new IllegalArgumentException("maxAttempts must be >= 1; got " + maxAttempts);
    }
    if (initialBackoff.isNegative() || maxBackoff.isNegative()) {
      throw new IllegalArgumentException("backoffs must not be negative");
    }
    if (multiplier < 1.0) {
      throw new IllegalArgumentException("multiplier must be >= 1; got " + multiplier);
    }
  }

  /** Whether a failure with this code may be retried. */
  public boolean retryable(Status.Code code) {
    return RETRYABLE.contains(code);
  }

  /**
   * The wait before attempt {@code attempt + 1} after {@code failure} ended attempt {@code attempt}
   * (1-based): the server's RetryInfo delay if longer than the backoff, else the backoff with
   * jitter in [50%, 100%].
   */
  public Duration delayAfter(int attempt, GroundwireException failure) {
    double base = initialBackoff.toNanos() * Math.pow(multiplier, attempt - 1);
    long capped = (long) Math.min(base, (double) maxBackoff.toNanos());
    long jittered = capped / 2 + (capped > 1 ? ThreadLocalRandom.current().nextLong(capped / 2 + 1) : 0);
    Duration backoff = Duration.ofNanos(jittered);
    Duration asked = failure.retryDelay().orElse(Duration.ZERO);
    return asked.compareTo(backoff) > 0 ? asked : backoff;
  }
}
