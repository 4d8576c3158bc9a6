package io.jakri.handler.onvif;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * The type a WS-Discovery Probe asks for ({@code d:Types}), a qualified name.
 *
 * <p>The default is Akri's: {@code netwsdl:NetworkVideoTransmitter} in the ONVIF network namespace.
 * The prefix is part of the contract because some responders compare the text of {@code d:Types}
 * literally (Debian's {@code wsdd} only answers {@code wsdp:Device}).
 *
 * @param prefix the namespace prefix written in the probe
 * @param namespace the namespace URI the prefix is bound to
 * @param name the local name
 */
public record ProbeType(String prefix, String namespace, String name) {

  /** ONVIF's network namespace (the WSDL of NetworkVideoTransmitter). */
  public static final String ONVIF_NETWORK_NS = "http://www.onvif.org/ver10/network/wsdl";

  /** Akri's probe type. */
  public static final ProbeType NETWORK_VIDEO_TRANSMITTER =
      new ProbeType("netwsdl", ONVIF_NETWORK_NS, "NetworkVideoTransmitter");

  static final Pattern NCNAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_.-]{0,63}");

  public ProbeType {
    Objects.requireNonNull(prefix, "prefix");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
  }

  /** {@code prefix:name}, the text of {@code d:Types}. */
  public String qualified() {
    return prefix + ":" + name;
  }
}
