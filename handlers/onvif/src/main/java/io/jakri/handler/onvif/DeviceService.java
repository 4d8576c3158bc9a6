package io.jakri.handler.onvif;

import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/** The two calls of the ONVIF device service the handler makes: the HTTP seam of the handler. */
interface DeviceService {

  /**
   * Akri's responsiveness check: an unauthenticated {@code GetSystemDateAndTime} (ONVIF lets anyone
   * call it, so clients can sync clocks before authenticating). Completes normally when the camera
   * answered HTTP 200 with a SOAP envelope, exceptionally otherwise.
   */
  CompletableFuture<Void> systemDateAndTime(String url);

  /**
   * {@code GetNetworkInterfaces}, with a UsernameToken digest when a credential is given: the first
   * IPv4 address ({@code IPv4/Config/*}/Address, Manual, LinkLocal or FromDHCP, in document order)
   * and the first {@code Info/HwAddress}, each over all interfaces, as Akri reads them.
   */
  CompletableFuture<IpAndMac> networkInterfaces(
      String url, Optional<Credentials.Credential> credential);

  /** A camera's address and hardware address, both checked. */
  record IpAndMac(String ip, String mac) {}
}
