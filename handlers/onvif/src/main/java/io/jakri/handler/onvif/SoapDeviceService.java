package io.jakri.handler.onvif;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.w3c.dom.Document;
import org.w3c.dom.Element;

/**
 * The ONVIF device service over SOAP 1.2 with the JDK's {@link HttpClient}: no SOAP framework, the
 * two requests are fixed text, the answers are read with {@link Xml}.
 *
 * <p>Bounds, because a camera (or anyone answering a probe) is untrusted: each request gets {@value
 * #TIMEOUT_MILLIS} ms in all (Akri's one second), headers and body included; a body over {@value
 * #MAX_BODY} bytes is cut off and refused; a non-200 status fails the call. The client runs its
 * callbacks on the agent's scheduler; the JDK client adds its one selector thread.
 */
final class SoapDeviceService implements DeviceService {

  static final long TIMEOUT_MILLIS = 1000;
  static final int MAX_BODY = 1 << 20;
  static final String DEVICE_WSDL = "http://www.onvif.org/ver10/device/wsdl";
  private static final Pattern MAC =
      Pattern.compile("[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}|[0-9A-Fa-f]{12}");
  private static final int MAX_VALUE = 64;

  private final HttpClient http;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final SecureRandom random = new SecureRandom();

  SoapDeviceService(ScheduledExecutorService scheduler, Clock clock) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.http =
        unpinned(
            HttpClient.newBuilder()
                .executor(scheduler)
                .connectTimeout(Duration.ofMillis(TIMEOUT_MILLIS))
                .followRedirects(HttpClient.Redirect.NEVER)
                .version(HttpClient.Version.HTTP_1_1));
  }

  /**
   * Builds the client with the platform class loader as this thread's context class loader. The
   * client's selector thread (JDK code) starts in {@code build()} and takes its creator's context
   * class loader: with the plugin's, the agent counted it as a thread of this plugin, and since JDK
   * 17's client cannot be closed (that thread ends once the client is garbage-collected), every
   * agent stop or plugin unload after an ONVIF discovery waited out its 10 s stop timeout and kept
   * the plugin's class loader open. Dependent actions still run on {@code scheduler}.
   */
  static HttpClient unpinned(HttpClient.Builder builder) {
    Thread current = Thread.currentThread();
    ClassLoader was = current.getContextClassLoader();
    current.setContextClassLoader(ClassLoader.getPlatformClassLoader());
    try {
      return builder.build();
    } finally {
      current.setContextClassLoader(was);
    }
  }

  @Override
  public CompletableFuture<Void> systemDateAndTime(String url) {
    return post(url, "GetSystemDateAndTime", envelope("", "<tds:GetSystemDateAndTime/>"))
        .thenApply(doc -> null);
  }

  @Override
  public CompletableFuture<IpAndMac> networkInterfaces(
      String url, Optional<Credentials.Credential> credential) {
    String header =
        credential
            .map(
                c ->
                    UsernameToken.create(c.username(), c.password().orElse(""), clock, random)
                        .securityHeader())
            .orElse("");
    return post(url, "GetNetworkInterfaces", envelope(header, "<tds:GetNetworkInterfaces/>"))
        .thenApply(SoapDeviceService::ipAndMac);
  }

  static String envelope(String header, String body) {
    return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>"
        + "<s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\""
        + " xmlns:tds=\""
        + DEVICE_WSDL
        + "\">"
        + "<s:Header>"
        + header
        + "</s:Header>"
        + "<s:Body>"
        + body
        + "</s:Body></s:Envelope>";
  }

  /** Reads Akri's two values from a GetNetworkInterfacesResponse; both must be present and sane. */
  static IpAndMac ipAndMac(Document doc) {
    Element response =
        Xml.path(doc.getDocumentElement(), "Body", "GetNetworkInterfacesResponse")
            .orElseThrow(() -> new SoapException("no GetNetworkInterfacesResponse in the answer"));
    List<String> ips = new ArrayList<>();
    List<String> macs = new ArrayList<>();
    for (Element nif : Xml.children(response, "NetworkInterfaces")) {
      for (Element ipv4 : Xml.children(nif, "IPv4")) {
        for (Element config : Xml.children(ipv4, "Config")) {
          for (Element kind : Xml.children(config)) {
            Xml.children(kind, "Address").forEach(a -> ips.add(Xml.text(a)));
          }
        }
      }
      for (Element info : Xml.children(nif, "Info")) {
        Xml.children(info, "HwAddress").forEach(h -> macs.add(Xml.text(h)));
      }
    }
    if (ips.isEmpty()) {
      throw new SoapException("no IPv4 address in the network interfaces");
    }
    if (macs.isEmpty()) {
      throw new SoapException("no hardware address in the network interfaces");
    }
    String ip = ips.get(0);
    String mac = macs.get(0);
    if (ip.length() > MAX_VALUE || !OnvifDetails.isIpLiteral(ip)) {
      throw new SoapException("the IPv4 address is not an IP address: " + printable(ip));
    }
    if (mac.length() > MAX_VALUE || !MAC.matcher(mac).matches()) {
      throw new SoapException("the hardware address is not a MAC address: " + printable(mac));
    }
    return new IpAndMac(ip, mac);
  }

  private CompletableFuture<Document> post(String url, String action, String body) {
    HttpRequest request;
    try {
      request =
          HttpRequest.newBuilder(new URI(url))
              .timeout(Duration.ofMillis(TIMEOUT_MILLIS))
              .header(
                  "Content-Type",
                  "application/soap+xml; charset=utf-8; action=\""
                      + DEVICE_WSDL
                      + "/"
                      + action
                      + "\"")
              .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8))
              .build();
    } catch (Exception e) {
      return CompletableFuture.failedFuture(new SoapException("bad URL " + printable(url)));
    }
    BoundedBody bodyHandler = new BoundedBody();
    CompletableFuture<HttpResponse<byte[]>> sent = http.sendAsync(request, bodyHandler);
    CompletableFuture<Document> result =
        sent.thenApply(
            response -> {
              if (response.statusCode() != 200) {
                throw new SoapException(
                    action + " answered HTTP " + response.statusCode() + ", expected 200");
              }
              byte[] bytes = response.body();
              try {
                Document doc = Xml.parse(bytes, bytes.length, MAX_BODY);
                if (!"Envelope".equals(doc.getDocumentElement().getLocalName())) {
                  throw new SoapException(action + " answer is not a SOAP envelope");
                }
                return doc;
              } catch (Xml.Rejected e) {
                throw new SoapException(action + " answer refused: " + e.getMessage());
              }
            });
    // One deadline for the whole exchange (the client's own timeout covers only the headers): on
    // expiry the body subscription is cancelled, which closes the connection.
    var timer =
        scheduler.schedule(
            () -> {
              if (result.completeExceptionally(
                  new SoapException(action + " took longer than " + TIMEOUT_MILLIS + " ms"))) {
                bodyHandler.cancel();
                sent.cancel(true);
              }
            },
            TIMEOUT_MILLIS,
            TimeUnit.MILLISECONDS);
    result.whenComplete((d, e) -> timer.cancel(false));
    return result;
  }

  private static String printable(String s) {
    String cut = s.length() > 80 ? s.substring(0, 80) + "..." : s;
    return cut.replaceAll("[^\\x20-\\x7e]", "?");
  }

  /** A failed SOAP call; the message is one short line for the log. */
  static final class SoapException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    SoapException(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * Collects a body of at most {@link #MAX_BODY} bytes; more (by Content-Length or as it arrives)
   * cancels the subscription and fails the call.
   */
  private static final class BoundedBody implements HttpResponse.BodyHandler<byte[]> {
    private volatile Flow.Subscription subscription;

    void cancel() {
      Flow.Subscription s = subscription;
      if (s != null) {
        s.cancel();
      }
    }

    @Override
    public HttpResponse.BodySubscriber<byte[]> apply(HttpResponse.ResponseInfo info) {
      long declared = info.headers().firstValueAsLong("Content-Length").orElse(-1);
      return new HttpResponse.BodySubscriber<>() {
        private final CompletableFuture<byte[]> body = new CompletableFuture<>();
        private byte[] buffer = new byte[8192];
        private int size;

        @Override
        public CompletionStage<byte[]> getBody() {
          return body;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
          subscription = s;
          if (declared > MAX_BODY) {
            s.cancel();
            body.completeExceptionally(
                new SoapException("answer of " + declared + " bytes is larger than " + MAX_BODY));
            return;
          }
          s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
          if (body.isDone()) {
            return;
          }
          for (ByteBuffer b : items) {
            int n = b.remaining();
            if ((long) size + n > MAX_BODY) {
              subscription.cancel();
              body.completeExceptionally(
                  new SoapException("answer is larger than " + MAX_BODY + " bytes"));
              return;
            }
            if (size + n > buffer.length) {
              buffer =
                  java.util.Arrays.copyOf(
                      buffer, Math.min(MAX_BODY, Math.max(size + n, buffer.length * 2)));
            }
            b.get(buffer, size, n);
            size += n;
          }
        }

        @Override
        public void onError(Throwable t) {
          body.completeExceptionally(t instanceof IOException ? t : new IOException(t));
        }

        @Override
        public void onComplete() {
          body.complete(java.util.Arrays.copyOf(buffer, size));
        }
      };
    }
  }
}
