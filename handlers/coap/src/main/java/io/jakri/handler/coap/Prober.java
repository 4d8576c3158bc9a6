package io.jakri.handler.coap;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

/**
 * Asks CoAP endpoints for {@code /.well-known/core}: the network boundary of the handler (tests
 * substitute it).
 */
interface Prober {

  /**
   * One round: the GET multicast and sent to {@code hosts}, answers collected for {@code timeout}.
   * Completes exceptionally only when nothing at all could be sent.
   */
  CompletableFuture<Answers> ask(List<Endpoint> hosts, Duration timeout);

  /**
   * Ends a round still collecting (its sockets closed, its future completed with what it has) and
   * refuses later ones. Idempotent; the discovery calls it from its own close.
   */
  default void close() {}

  /** What one endpoint answered. */
  sealed interface Answer permits Answer.Links, Answer.Refused {
    /** A link-format document, parsed. */
    record Links(LinkFormat.Result result) implements Answer {}

    /** An answer that is no usable link format, and why. */
    record Refused(String reason) implements Answer {}
  }

  /**
   * The answers of a round.
   *
   * @param answers endpoint → its answer, at most {@link UdpProber#MAX_ENDPOINTS}
   * @param problems reasons datagrams were ignored (not CoAP, over the limits), each with a count
   * @param sendErrors reasons a GET could not be sent on some interface or to some host
   */
  record Answers(
      Map<Endpoint, Answer> answers, Map<String, Integer> problems, List<String> sendErrors) {
    public Answers {
      answers = Map.copyOf(answers);
      problems = Map.copyOf(problems);
      sendErrors = List.copyOf(sendErrors);
    }
  }
}
