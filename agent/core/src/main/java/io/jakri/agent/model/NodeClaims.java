package io.jakri.agent.model;

import io.jakri.crd.SlotUsage;
import java.util.Map;

/**
 * The slots this node holds, as discovery needs them when it writes an Instance: it puts this
 * node's claims into the slots it finds free (a node is never listed in an Instance it wrote
 * without the slots it holds), and gives them up when the device leaves this node. The record
 * itself belongs to the allocation side; discovery sees only this.
 */
public interface NodeClaims {

  /** Slot to usage of every slot of {@code instance} this node holds (empty if none). */
  Map<String, SlotUsage> held(String instance);

  /** Gives up every slot of {@code instance} this node holds. */
  void releaseAll(String instance);
}
