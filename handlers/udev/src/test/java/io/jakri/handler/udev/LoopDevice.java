package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

/** A loop device this test attached with {@code losetup} to a backing file; detached on close. */
public final class LoopDevice implements AutoCloseable {

  public final String devnode;

  private LoopDevice(String devnode) {
    this.devnode = devnode;
  }

  public static boolean available() {
    return KernelFacility.root() && KernelFacility.installed("losetup");
  }

  public static LoopDevice attach(Path backing) throws IOException {
    String node = KernelFacility.run(List.of("losetup", "--find", "--show", backing.toString()));
    return new LoopDevice(node.strip());
  }

  public String name() {
    return devnode.substring(devnode.lastIndexOf('/') + 1);
  }

  @Override
  public void close() throws IOException {
    KernelFacility.run(List.of("losetup", "--detach", devnode));
  }
}
