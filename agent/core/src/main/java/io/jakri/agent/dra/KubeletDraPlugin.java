package io.jakri.agent.dra;

import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import java.util.function.Function;
import k8s.io.kubelet.pkg.apis.dra.v1.Api;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import pluginregistration.Api.InfoRequest;
import pluginregistration.Api.PluginInfo;
import pluginregistration.Api.RegistrationStatus;
import pluginregistration.Api.RegistrationStatusResponse;
import pluginregistration.RegistrationGrpc;

/**
 * The kubelet plugin of driver {@code akri.sh}: the DRAPlugin services ({@code v1} and {@code
 * v1beta1}, same semantics, see {@link ClaimPreparer}) on {@code <plugins>/akri.sh/dra.sock}, and
 * the plugin watcher's {@code pluginregistration.Registration} on {@code
 * <plugins_registry>/akri.sh-reg.sock} (type {@code DRAPlugin}, versions {@code v1.DRAPlugin} and
 * {@code v1beta1.DRAPlugin}). The DRA socket is served before the registration socket appears, so
 * the kubelet never finds an endpoint that does not answer. Both sockets are removed on close (and
 * leftovers of a killed predecessor on start). Uses the agent's Netty event loop group and gRPC
 * executor: no thread of its own.
 */
public final class KubeletDraPlugin implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(KubeletDraPlugin.class);

  public static final String PLUGIN_TYPE = "DRAPlugin";
  public static final List<String> SUPPORTED_VERSIONS =
      List.of("v1.DRAPlugin", "v1beta1.DRAPlugin");

  private final DraOptions options;
  private final ClaimPreparer preparer;
  private final EventLoopGroup group;
  private final Executor executor;
  private Server dra;
  private Server registration;
  private volatile boolean registered;

  public KubeletDraPlugin(
      DraOptions options, ClaimPreparer preparer, EventLoopGroup group, Executor executor) {
    this.options = options;
    this.preparer = preparer;
    this.group = group;
    this.executor = executor;
  }

  /** Serves the DRA socket, then the registration socket. */
  public synchronized void start() throws IOException {
    Files.createDirectories(options.draSocket().getParent());
    Files.createDirectories(options.registryDir());
    Files.deleteIfExists(options.draSocket());
    Files.deleteIfExists(options.registrationSocket());
    dra =
        server(options.draSocket()).addService(new V1()).addService(new V1beta1()).build().start();
    registration = server(options.registrationSocket()).addService(new Registration()).build();
    registration.start();
    LOG.info(
        "DRA kubelet plugin {} serving {} (registration {})",
        DraNames.DRIVER,
        options.draSocket(),
        options.registrationSocket());
  }

  /** Whether the kubelet said it registered the plugin. */
  public boolean registered() {
    return registered;
  }

  private NettyServerBuilder server(Path socket) {
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .executor(executor);
    InternalNettyServerBuilder.setStatsEnabled(builder, false);
    InternalNettyServerBuilder.setTracingEnabled(builder, false);
    return builder;
  }

  /** Removes the registration socket first (the kubelet deregisters), then the DRA socket. */
  @Override
  public synchronized void close() {
    for (Server s : new Server[] {registration, dra}) {
      if (s == null) {
        continue;
      }
      s.shutdown();
      try {
        if (!s.awaitTermination(2, TimeUnit.SECONDS)) {
          s.shutdownNow();
        }
      } catch (InterruptedException e) {
        s.shutdownNow();
        Thread.currentThread().interrupt();
      }
    }
    try {
      Files.deleteIfExists(options.registrationSocket());
      Files.deleteIfExists(options.draSocket());
    } catch (IOException e) {
      LOG.warn("DRA plugin sockets not removed: {}", e.toString());
    }
  }

  private final class Registration extends RegistrationGrpc.RegistrationImplBase {
    @Override
    public void getInfo(InfoRequest request, StreamObserver<PluginInfo> response) {
      response.onNext(
          PluginInfo.newBuilder()
              .setType(PLUGIN_TYPE)
              .setName(DraNames.DRIVER)
              .setEndpoint(options.draSocket().toString())
              .addAllSupportedVersions(SUPPORTED_VERSIONS)
              .build());
      response.onCompleted();
    }

    @Override
    public void notifyRegistrationStatus(
        RegistrationStatus status, StreamObserver<RegistrationStatusResponse> response) {
      registered = status.getPluginRegistered();
      if (status.getPluginRegistered()) {
        LOG.info("kubelet registered DRA plugin {}", DraNames.DRIVER);
      } else {
        LOG.error("kubelet refused DRA plugin {}: {}", DraNames.DRIVER, status.getError());
      }
      response.onNext(RegistrationStatusResponse.getDefaultInstance());
      response.onCompleted();
    }
  }

  /** Runs {@code op} for each claim, keyed by uid (every claim gets an entry). */
  private static <C, R> java.util.Map<String, R> each(
      List<C> claims,
      Function<C, ClaimPreparer.ClaimRef> ref,
      Function<ClaimPreparer.ClaimRef, ClaimPreparer.Result> op,
      BiFunction<ClaimPreparer.ClaimRef, ClaimPreparer.Result, R> answer) {
    java.util.Map<String, R> out = new java.util.LinkedHashMap<>();
    for (C c : claims) {
      ClaimPreparer.ClaimRef r = ref.apply(c);
      out.put(r.uid(), answer.apply(r, op.apply(r)));
    }
    return out;
  }

  private final class V1 extends k8s.io.kubelet.pkg.apis.dra.v1.DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(
        Api.NodePrepareResourcesRequest request,
        StreamObserver<Api.NodePrepareResourcesResponse> response) {
      response.onNext(
          Api.NodePrepareResourcesResponse.newBuilder()
              .putAllClaims(
                  each(
                      request.getClaimsList(),
                      c -> new ClaimPreparer.ClaimRef(c.getNamespace(), c.getUid(), c.getName()),
                      preparer::prepare,
                      (r, result) -> {
                        Api.NodePrepareResourceResponse.Builder b =
                            Api.NodePrepareResourceResponse.newBuilder().setError(result.error());
                        for (ClaimPreparer.PreparedDevice d : result.devices()) {
                          b.addDevices(
                              Api.Device.newBuilder()
                                  .addAllRequestNames(d.requestNames())
                                  .setPoolName(d.pool())
                                  .setDeviceName(d.device())
                                  .addAllCdiDeviceIds(d.cdiDeviceIds()));
                        }
                        return b.build();
                      }))
              .build());
      response.onCompleted();
    }

    @Override
    public void nodeUnprepareResources(
        Api.NodeUnprepareResourcesRequest request,
        StreamObserver<Api.NodeUnprepareResourcesResponse> response) {
      response.onNext(
          Api.NodeUnprepareResourcesResponse.newBuilder()
              .putAllClaims(
                  each(
                      request.getClaimsList(),
                      c -> new ClaimPreparer.ClaimRef(c.getNamespace(), c.getUid(), c.getName()),
                      preparer::unprepare,
                      (r, result) ->
                          Api.NodeUnprepareResourceResponse.newBuilder()
                              .setError(result.error())
                              .build()))
              .build());
      response.onCompleted();
    }
  }

  private final class V1beta1
      extends k8s.io.kubelet.pkg.apis.dra.v1beta1.DRAPluginGrpc.DRAPluginImplBase {
    @Override
    public void nodePrepareResources(
        k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodePrepareResourcesRequest request,
        StreamObserver<k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodePrepareResourcesResponse>
            response) {
      response.onNext(
          k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodePrepareResourcesResponse.newBuilder()
              .putAllClaims(
                  each(
                      request.getClaimsList(),
                      c -> new ClaimPreparer.ClaimRef(c.getNamespace(), c.getUid(), c.getName()),
                      preparer::prepare,
                      (r, result) -> {
                        var b =
                            k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodePrepareResourceResponse
                                .newBuilder()
                                .setError(result.error());
                        for (ClaimPreparer.PreparedDevice d : result.devices()) {
                          b.addDevices(
                              k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.Device.newBuilder()
                                  .addAllRequestNames(d.requestNames())
                                  .setPoolName(d.pool())
                                  .setDeviceName(d.device())
                                  .addAllCdiDeviceIds(d.cdiDeviceIds()));
                        }
                        return b.build();
                      }))
              .build());
      response.onCompleted();
    }

    @Override
    public void nodeUnprepareResources(
        k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodeUnprepareResourcesRequest request,
        StreamObserver<k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodeUnprepareResourcesResponse>
            response) {
      response.onNext(
          k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodeUnprepareResourcesResponse.newBuilder()
              .putAllClaims(
                  each(
                      request.getClaimsList(),
                      c -> new ClaimPreparer.ClaimRef(c.getNamespace(), c.getUid(), c.getName()),
                      preparer::unprepare,
                      (r, result) ->
                          k8s.io.kubelet.pkg.apis.dra.v1beta1.Api.NodeUnprepareResourceResponse
                              .newBuilder()
                              .setError(result.error())
                              .build()))
              .build());
      response.onCompleted();
    }
  }
}
