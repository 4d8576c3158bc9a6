/**
 * The agent's one report stream ({@link io.jakri.agent.events.AgentReport}), and the Kubernetes
 * Events an operator should see about this agent's node: Register with the kubelet failing for a
 * resource, storms of slot conflicts on an Instance, plugin jars that fail to load. The decisions
 * (thresholds, windows, budgets) are plain classes with an injected clock; {@link
 * io.jakri.agent.events.AgentEvents} turns them into {@link io.jakri.agent.cluster.Events}.
 */
package io.jakri.agent.events;
