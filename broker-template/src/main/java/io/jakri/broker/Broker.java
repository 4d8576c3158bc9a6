package io.jakri.broker;

/** Placeholder until the broker template lands. */
public final class Broker {
  private Broker() {}

  public static void main(String[] args) {
    System.err.println("jakri broker template: not implemented yet");
    System.exit(2);
  }
}
