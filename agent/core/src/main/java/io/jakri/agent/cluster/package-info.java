/**
 * The agent's cluster mode: everything that talks to the Kubernetes API server, each part behind a
 * small seam so the rest of the agent runs unchanged in standalone mode.
 *
 * <ul>
 *   <li>{@link io.jakri.agent.cluster.KubernetesPropertyResolver}: {@code discoveryProperties} read
 *       from Secrets and ConfigMaps (standalone mode uses {@code PropertyResolver.literalOnly()}).
 *   <li>{@link io.jakri.agent.cluster.NodeTidier}: removes retired {@code akri.sh/} resources from
 *       the Node's status, which the kubelet never does itself.
 *   <li>{@link io.jakri.agent.cluster.Events} / {@link io.jakri.agent.cluster.EventRecorder}:
 *       Kubernetes Events about Configurations and Instances, correlated like the kubelet's ({@code
 *       Events.discard()} in standalone mode).
 * </ul>
 *
 * <p>Tests run against fabric8's mock API server ({@code *IT}, CRUD mode, or scripted answers for
 * what a real server does and the mock does not, such as 422 on a JSON-patch remove of a missing
 * key).
 */
package io.jakri.agent.cluster;
