package io.jakri.kubelet.emulator;

import io.grpc.ManagedChannel;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's client of one registered device plugin: the channel to its socket and the options
 * it reported. Identity matters: state changes from a stream are only applied while this object is
 * the current endpoint of its resource. Immutable apart from the channel's own state.
 */
final class PluginEndpoint {
  final String resource;
  final String endpoint;
  final long generation;
  final ManagedChannel channel;
  final DevicePluginGrpc.DevicePluginBlockingStub blocking;
  final DevicePluginGrpc.DevicePluginStub async;
  private volatile DevicePluginOptions options = DevicePluginOptions.getDefaultInstance();

  PluginEndpoint(String resource, String endpoint, long generation, ManagedChannel channel) {
    this.resource = resource;
    this.endpoint = endpoint;
    this.generation = generation;
    this.channel = channel;
    this.blocking = DevicePluginGrpc.newBlockingStub(channel);
    this.async = DevicePluginGrpc.newStub(channel);
  }

  DevicePluginOptions options() {
    return options;
  }

  void options(DevicePluginOptions options) {
    this.options = options;
  }

  /** Closes the connection; any open ListAndWatch stream ends with CANCELLED. Idempotent. */
  void close() {
    channel.shutdownNow();
  }

  void awaitClosed(long millis) throws InterruptedException {
    channel.awaitTermination(millis, TimeUnit.MILLISECONDS);
  }

  @Override
  public String toString() {
    return resource + "@" + endpoint;
  }
}
