package dev.groundwire.client;

import io.grpc.CallCredentials;
import io.grpc.Metadata;
import java.util.concurrent.Executor;

/** Sends an API key as the metadata {@code authorization: Bearer <key>} on every call. */
final class BearerToken extends CallCredentials {
  static final Metadata.Key<String> AUTHORIZATION =
      Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER);

  private final String key;

  BearerToken(String key) {
    if (key == null || key.isBlank()) {
      throw new IllegalArgumentException("the API key is empty; pass the key `groundwire keygen` printed");
    }
    this.key = key.strip();
  }

  @Override
  public void applyRequestMetadata(RequestInfo info, Executor executor, MetadataApplier applier) {
    Metadata headers = new Metadata();
    headers.put(AUTHORIZATION, "Bearer " + key);
    applier.apply(headers);
  }
}
