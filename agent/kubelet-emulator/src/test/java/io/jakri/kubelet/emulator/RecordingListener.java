package io.jakri.kubelet.emulator;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records listener callbacks as short strings, e.g. {@code "streamEnded akri.sh/a"}. */
final class RecordingListener implements EmulatorListener {
  final List<String> events = new CopyOnWriteArrayList<>();

  @Override
  public void registered(String resource, String endpoint) {
    events.add("registered " + resource + " " + endpoint);
  }

  @Override
  public void snapshot(String resource, Map<String, String> devices) {
    events.add("snapshot " + resource + " " + devices);
  }

  @Override
  public void streamEnded(String resource) {
    events.add("streamEnded " + resource);
  }

  @Override
  public void resourceDropped(String resource) {
    events.add("resourceDropped " + resource);
  }

  @Override
  public void registrationRejected(String resource, String reason) {
    events.add("registrationRejected " + resource + " " + reason);
  }

  /** Events that start with {@code kind}, in order. */
  List<String> of(String kind) {
    return events.stream().filter(e -> e.startsWith(kind + " ")).toList();
  }
}
