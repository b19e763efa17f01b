package dev.groundwire.client;

/**
 * Receives an Answer stream asynchronously (see {@link GroundwireClient#answerAsync}). Events
 * arrive in order on a gRPC thread; exactly one of {@link #onCompleted} and {@link #onError} ends
 * the stream (onError with code CANCELLED after {@link Cancellable#cancel}).
 */
public interface AnswerObserver {
  /** One event: Started, Delta or Summary. */
  void onEvent(AnswerEvent event);

  /** The stream failed or was cancelled. */
  void onError(GroundwireException error);

  /** The stream ended normally after its Summary. */
  default void onCompleted() {}
}
