package dev.groundwire.client;

import groundwire.v1.RetrievalServiceOuterClass.AnswerResponse;
import io.grpc.Context;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * A blocking Answer stream: iterate its events ({@code for (AnswerEvent e : stream)}) or take a
 * {@link #stream()}; {@link #cancel()} (or {@link #close()}) stops the call at any point, after
 * which iteration simply ends. Failures surface as {@link GroundwireException} from
 * {@code hasNext}/{@code next}.
 */
public final class AnswerStream implements Iterable<AnswerEvent>, Iterator<AnswerEvent>, Cancellable, AutoCloseable {
  private final Iterator<AnswerResponse> responses;
  private final Context.CancellableContext context;
  private volatile boolean cancelled;

  AnswerStream(Iterator<AnswerResponse> responses, Context.CancellableContext context) {
    this.responses = responses;
    this.context = context;
  }

  @Override
  public boolean hasNext() {
    if (cancelled) {
      return false;
    }
    try {
      boolean more = responses.hasNext();
      if (!more) {
        context.close();
      }
      return more;
    } catch (RuntimeException error) {
      if (cancelled) {
        return false;
      }
      context.close();
      throw GroundwireException.from(error);
    }
  }

  @Override
  public AnswerEvent next() {
    if (!hasNext()) {
      throw new NoSuchElementException("the Answer stream has ended");
    }
    try {
      return AnswerEvent.of(responses.next());
    } catch (RuntimeException error) {
      throw GroundwireException.from(error);
    }
  }

  @Override
  public Iterator<AnswerEvent> iterator() {
    return this;
  }

  /** The remaining events as a sequential Stream; closing it cancels the call. */
  public Stream<AnswerEvent> stream() {
    return StreamSupport.stream(Spliterators.spliteratorUnknownSize(this, Spliterator.ORDERED), false)
        .onClose(this::cancel);
  }

  /** Whether {@link #cancel()} was called. */
  public boolean isCancelled() {
    return cancelled;
  }

  @Override
  public void cancel() {
    cancelled = true;
    context.cancel(null);
  }

  /** Cancels the call if it is still running. */
  @Override
  public void close() {
    cancel();
  }
}
