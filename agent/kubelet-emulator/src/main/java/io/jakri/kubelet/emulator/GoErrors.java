package io.jakri.kubelet.emulator;

import io.grpc.Status;
import java.util.Locale;

/** Formats errors the way the kubelet (Go, grpc-go) prints them, for messages plugins see. */
final class GoErrors {
  private GoErrors() {}

  /** grpc-go's {@code rpc error: code = Unknown desc = boom}. */
  static String rpcError(Throwable t) {
    Status status = Status.fromThrowable(t);
    String desc = status.getDescription() == null ? "" : status.getDescription();
    return "rpc error: code = " + codeName(status.getCode()) + " desc = " + desc;
  }

  /** grpc-go's {@code codes.Code.String()}: CamelCase, and "Canceled" with one l. */
  static String codeName(Status.Code code) {
    if (code == Status.Code.CANCELLED) {
      return "Canceled";
    }
    if (code == Status.Code.OK) {
      return "OK";
    }
    StringBuilder b = new StringBuilder();
    for (String word : code.name().split("_")) {
      b.append(word.charAt(0)).append(word.substring(1).toLowerCase(Locale.ROOT));
    }
    return b.toString();
  }

  /** Go's {@code %q} for a plain string. */
  static String quote(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char c : s.toCharArray()) {
      switch (c) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\t' -> b.append("\\t");
        default -> b.append(c);
      }
    }
    return b.append('"').toString();
  }
}
