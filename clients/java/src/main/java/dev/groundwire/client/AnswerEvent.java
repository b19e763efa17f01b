package dev.groundwire.client;

import groundwire.v1.RetrievalServiceOuterClass.AnswerResponse;
import groundwire.v1.RetrievalServiceOuterClass.AnswerSummary;
import groundwire.v1.RetrievalServiceOuterClass.Citation;
import groundwire.v1.RetrievalServiceOuterClass.RetrieveResponse;
import java.util.List;

/** One event of an Answer stream: {@link Started}, then {@link Delta}s, then a {@link Summary}. */
public sealed interface AnswerEvent {
  /** First event: the retrieval the answer is grounded in and the prompt template used. */
  record Started(RetrieveResponse retrieval, String template) implements AnswerEvent {}

  /** Text generated since the previous delta. */
  record Delta(String text) implements AnswerEvent {}

  /** Last event: finish reason, usage, the complete text and the validated citations. */
  record Summary(AnswerSummary summary) implements AnswerEvent {
    /** The complete answer text. */
    public String text() {
      return summary.getText();
    }

    /** Citations in the answer that refer to chunks of the context, in order of first use. */
    public List<Citation> citations() {
      return summary.getCitationsList();
    }

    /** Why generation stopped: "stop", "length" or "cancelled". */
    public String finishReason() {
      return summary.getFinishReason();
    }
  }

  /** The typed event for one wire message. */
  static AnswerEvent of(AnswerResponse response) {
    return switch (response.getEventCase()) {
      case STARTED -> new Started(response.getStarted().getRetrieval(), response.getStarted().getTemplate());
      case DELTA -> new Delta(response.getDelta().getText());
      case SUMMARY -> new Summary(response.getSummary());
      case EVENT_NOT_SET -> throw new GroundwireException(
          io.grpc.Status.Code.INTERNAL,
          "the server sent an Answer event with no event set",
          List.of(),
          null,
          null);
    };
  }
}
