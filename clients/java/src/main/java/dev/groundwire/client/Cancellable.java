package dev.groundwire.client;

/** A running call the caller may stop. */
@FunctionalInterface
public interface Cancellable {
  /** Cancels the call; the server sees CANCELLED. Calling it again, or after the end, does nothing. */
  void cancel();
}
