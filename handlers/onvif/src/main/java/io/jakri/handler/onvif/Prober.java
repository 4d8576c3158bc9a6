package io.jakri.handler.onvif;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/** Sends one WS-Discovery probe and collects the answers: the network seam of the handler. */
interface Prober {

  /**
   * Probes for {@code type} and completes, after {@code timeout}, with every acceptable match
   * received meanwhile. Never completes exceptionally for bad answers (they are counted); completes
   * exceptionally when the probe could not be sent at all.
   */
  CompletableFuture<Answers> probe(ProbeType type, Duration timeout);

  /**
   * What one probe brought back.
   *
   * @param matches acceptable matches in arrival order
   * @param datagrams datagrams read
   * @param rejected datagrams that were not acceptable XML
   * @param dropped datagrams not read because the round's limit was reached
   */
  record Answers(List<ProbeMatch> matches, int datagrams, int rejected, int dropped) {
    public Answers {
      matches = List.copyOf(matches);
    }
  }
}
