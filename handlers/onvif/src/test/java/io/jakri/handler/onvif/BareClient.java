package io.jakri.handler.onvif;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.MulticastSocket;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;

/**
 * The floor for the timing figures: the least a client must do, written with the bare JDK and none
 * of the handler's code. {@link #firstProbeMatch} multicasts a probe on one interface and returns
 * when the first datagram answers; {@link #soap} posts one SOAP request.
 */
final class BareClient {

  private BareClient() {}

  /** Nanoseconds from sending a probe for {@code types} to the first answer, or -1. */
  static long firstProbeMatch(String interfaceName, String typesXml, Duration timeout)
      throws IOException {
    String probe =
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?><s:Envelope"
            + " xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\""
            + " xmlns:a=\"http://schemas.xmlsoap.org/ws/2004/08/addressing\""
            + " xmlns:d=\"http://schemas.xmlsoap.org/ws/2005/04/discovery\""
            + " xmlns:wsdp=\"http://schemas.xmlsoap.org/ws/2006/02/devprof\""
            + " xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\"><s:Header>"
            + "<a:MessageID>uuid:"
            + UUID.randomUUID()
            + "</a:MessageID>"
            + "<a:To>urn:schemas-xmlsoap-org:ws:2005:04:discovery</a:To>"
            + "<a:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe</a:Action>"
            + "</s:Header><s:Body><d:Probe><d:Types>"
            + typesXml
            + "</d:Types></d:Probe></s:Body></s:Envelope>";
    try (MulticastSocket socket = new MulticastSocket(0)) {
      socket.setNetworkInterface(NetworkInterface.getByName(interfaceName));
      socket.setSoTimeout((int) timeout.toMillis());
      byte[] bytes = probe.getBytes(StandardCharsets.UTF_8);
      long start = System.nanoTime();
      socket.send(
          new DatagramPacket(
              bytes,
              bytes.length,
              new InetSocketAddress(InetAddress.getByName("239.255.255.250"), 3702)));
      DatagramPacket answer = new DatagramPacket(new byte[65535], 65535);
      try {
        socket.receive(answer);
      } catch (java.net.SocketTimeoutException e) {
        return -1;
      }
      return System.nanoTime() - start;
    }
  }

  /** Posts a SOAP body to {@code url}; the status code. */
  static int soap(HttpClient client, String url, String bodyElement)
      throws IOException, InterruptedException {
    String envelope =
        "<s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\""
            + " xmlns:tds=\"http://www.onvif.org/ver10/device/wsdl\"><s:Body>"
            + bodyElement
            + "</s:Body></s:Envelope>";
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(url))
            .header("Content-Type", "application/soap+xml; charset=utf-8")
            .POST(HttpRequest.BodyPublishers.ofString(envelope))
            .build();
    return client.send(request, HttpResponse.BodyHandlers.discarding()).statusCode();
  }
}
