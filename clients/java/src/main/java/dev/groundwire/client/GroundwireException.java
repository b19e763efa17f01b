package dev.groundwire.client;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.rpc.BadRequest;
import com.google.rpc.RetryInfo;
import io.grpc.Status;
import io.grpc.StatusException;
import io.grpc.StatusRuntimeException;
import io.grpc.protobuf.StatusProto;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A failed groundwire call: the gRPC status code, the server's message, and the google.rpc details
 * it sent (the {@code BadRequest} field violations, the {@code RetryInfo} delay).
 */
public final class GroundwireException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /** One invalid request field and what to do about it (from google.rpc.BadRequest). */
  public record FieldViolation(String field, String description) {
    @Override
    public String toString() {
      return field + ": " + description;
    }
  }

  private final Status.Code code;
  private final String description;
  private final transient List<FieldViolation> fieldViolations;
  private final transient Duration retryDelay;

  GroundwireException(
      Status.Code code,
      String description,
      List<FieldViolation> fieldViolations,
      Duration retryDelay,
      Throwable cause) {
    super(format(code, description, fieldViolations), cause);
    this.code = code;
    this.description = description;
    this.fieldViolations = List.copyOf(fieldViolations);
    this.retryDelay = retryDelay;
  }

  /** The gRPC status code, for example {@code INVALID_ARGUMENT}. */
  public Status.Code code() {
    return code;
  }

  /** The server's message (the status description); empty when it sent none. */
  public String description() {
    return description;
  }

  /** The field violations of a {@code BadRequest} detail; empty when there were none. */
  public List<FieldViolation> fieldViolations() {
    return fieldViolations;
  }

  /** The delay the server asked for in a {@code RetryInfo} detail, when it sent one. */
  public Optional<Duration> retryDelay() {
    return Optional.ofNullable(retryDelay);
  }

  /** Converts any failure of a gRPC call into a GroundwireException (itself unchanged). */
  public static GroundwireException from(Throwable error) {
    if (error instanceof GroundwireException already) {
      return already;
    }
    Status status = Status.fromThrowable(error);
    List<FieldViolation> violations = new ArrayList<>();
    Duration retryDelay = null;
    if (error instanceof StatusRuntimeException || error instanceof StatusException) {
      com.google.rpc.Status rich = StatusProto.fromThrowable(error);
      if (rich != null) {
        for (com.google.protobuf.Any detail : rich.getDetailsList()) {
          try {
            if (detail.is(BadRequest.class)) {
              for (BadRequest.FieldViolation v : detail.unpack(BadRequest.class).getFieldViolationsList()) {
                violations.add(new FieldViolation(v.getField(), v.getDescription()));
              }
            } else if (detail.is(RetryInfo.class)) {
              com.google.protobuf.Duration d = detail.unpack(RetryInfo.class).getRetryDelay();
              retryDelay = Duration.ofSeconds(d.getSeconds(), d.getNanos());
            }
          } catch (InvalidProtocolBufferException malformed) {
            // A detail that does not parse is left out; the code and message still stand.
          }
        }
      }
    }
    String description = status.getDescription() == null ? "" : status.getDescription();
    return new GroundwireException(status.getCode(), description, violations, retryDelay, error);
  }

  private static String format(Status.Code code, String description, List<FieldViolation> violations) {
    StringBuilder text = new StringBuilder(code.name());
    if (!description.isEmpty()) {
      text.append(": ").append(description);
    }
    if (!violations.isEmpty()) {
      text.append(' ').append(violations);
    }
    return text.toString();
  }
}
