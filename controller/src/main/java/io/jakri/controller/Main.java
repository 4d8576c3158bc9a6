package io.jakri.controller;

/** Placeholder until the controller lands. */
public final class Main {
  private Main() {}

  public static void main(String[] args) {
    System.err.println("jakri-controller: not implemented yet");
    System.exit(2);
  }
}
