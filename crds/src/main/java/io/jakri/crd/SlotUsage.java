package io.jakri.crd;

import java.util.Objects;

/**
 * Who holds one slot of an Instance, in Akri's {@code deviceUsage} wire format: {@code ""} free,
 * {@code "<node>"} taken on that node through the Instance resource, {@code "C:<vdev>:<node>"}
 * taken on that node through a class resource, {@code vdev} being the class device id, {@code
 * "D:<claim uid>:<node>"} taken on that node through a Dynamic Resource Allocation ResourceClaim.
 */
public sealed interface SlotUsage {

  /** The wire form, such that {@code parse(print()) equals this}. */
  String print();

  /** Whether the slot is held for {@code node} (through either resource kind). */
  boolean heldBy(String node);

  /** Parses the wire form; blank means free. */
  static SlotUsage parse(String text) {
    if (text == null || text.isEmpty()) {
      return Free.INSTANCE;
    }
    if (text.startsWith("D:")) {
      int last = text.lastIndexOf(':');
      if (last <= 2) {
        throw new IllegalArgumentException("malformed claim slot usage: " + text);
      }
      return new ClaimUse(text.substring(2, last), text.substring(last + 1));
    }
    if (text.startsWith("C:")) {
      int last = text.lastIndexOf(':');
      if (last <= 2) {
        throw new IllegalArgumentException("malformed class slot usage: " + text);
      }
      return new ClassUse(text.substring(2, last), text.substring(last + 1));
    }
    return new NodeUse(text);
  }

  /** Not held by anyone. */
  enum Free implements SlotUsage {
    INSTANCE;

    @Override
    public String print() {
      return "";
    }

    @Override
    public boolean heldBy(String node) {
      return false;
    }
  }

  /** Held on {@code node} through the Instance's own resource. */
  record NodeUse(String node) implements SlotUsage {
    public NodeUse {
      Objects.requireNonNull(node, "node");
      if (node.isEmpty() || node.startsWith("C:") || node.startsWith("D:")) {
        throw new IllegalArgumentException("invalid node name for slot usage: " + node);
      }
    }

    @Override
    public String print() {
      return node;
    }

    @Override
    public boolean heldBy(String n) {
      return node.equals(n);
    }
  }

  /** Held on {@code node} through a class resource, as class device {@code vdev}. */
  record ClassUse(String vdev, String node) implements SlotUsage {
    public ClassUse {
      Objects.requireNonNull(vdev, "vdev");
      Objects.requireNonNull(node, "node");
      if (vdev.isEmpty() || node.isEmpty() || node.contains(":")) {
        throw new IllegalArgumentException("invalid class slot usage: " + vdev + "/" + node);
      }
    }

    @Override
    public String print() {
      return "C:" + vdev + ":" + node;
    }

    @Override
    public boolean heldBy(String n) {
      return node.equals(n);
    }
  }

  /**
   * Held on {@code node} for the ResourceClaim with uid {@code claimUid}, prepared there through
   * the kubelet's DRA plugin API. Freed when the kubelet unprepares the claim, never by the slot
   * reclaimer (the PodResources API does not list it among device-plugin devices).
   */
  record ClaimUse(String claimUid, String node) implements SlotUsage {
    public ClaimUse {
      Objects.requireNonNull(claimUid, "claimUid");
      Objects.requireNonNull(node, "node");
      if (claimUid.isEmpty() || node.isEmpty() || node.contains(":")) {
        throw new IllegalArgumentException("invalid claim slot usage: " + claimUid + "/" + node);
      }
    }

    @Override
    public String print() {
      return "D:" + claimUid + ":" + node;
    }

    @Override
    public boolean heldBy(String n) {
      return node.equals(n);
    }
  }
}
