package io.jakri.agent.testplugins;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.net.URLClassLoader;
import java.util.List;
import java.util.Map;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.TimeUnit;

/**
 * A handler whose library keeps threads of its own running after its discovery was closed, as JmDNS
 * does: a {@link Timer} ticking every 5 ms and a worker thread. {@code close()} returns at once;
 * the worker then lingers for {@code lingerMs} (the details, default 300), ignoring interrupts, and
 * on its way out loads classes of the plugin never loaded before (JmDNS's timer loading {@code
 * Renewer}). Every tick reads a class file from the plugin's own jar and throws when it cannot (its
 * class loader was closed under it). A class loader closed too early thus shows as an uncaught
 * {@code NoClassDefFoundError} or {@code IllegalStateException} in a thread named {@code
 * lingering-…@<identity hash of the plugin's class loader>}.
 */
public final class LingeringThreads {

  private LingeringThreads() {}

  /** The suffix of the names of the threads the handler's library starts. */
  public static String threadSuffix(ClassLoader pluginLoader) {
    return "@" + Integer.toHexString(System.identityHashCode(pluginLoader));
  }

  /** Handler {@code lingering}: one device, reported once; the library's threads outlive it. */
  @org.pf4j.Extension
  public static final class Lingering implements DiscoveryHandler {
    @Override
    public String name() {
      return "lingering";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      String details = context.discoveryDetails().replaceAll("[^0-9]", "");
      long lingerMs = details.isEmpty() ? 300 : Long.parseLong(details);
      Library library = new Library(lingerMs);
      library.start();
      context
          .scheduler()
          .execute(
              () -> listener.devices(List.of(DiscoveredDevice.of("lingering-0", Map.of(), true))));
      return library::close;
    }
  }

  /** The library: a timer and a worker, both ending some time after {@link #close}. */
  static final class Library {
    private final long lingerNanos;
    private final String suffix = threadSuffix(Library.class.getClassLoader());
    private final Timer timer = new Timer("lingering-timer" + suffix, true);
    private final Thread worker = new Thread(this::work, "lingering-worker" + suffix);
    private volatile boolean closing;

    Library(long lingerMs) {
      this.lingerNanos = TimeUnit.MILLISECONDS.toNanos(lingerMs);
    }

    void start() {
      timer.schedule(new Tick(), 0, 5);
      worker.setDaemon(true);
      worker.start();
    }

    /** Returns at once; the threads end later. */
    void close() {
      closing = true;
      worker.interrupt();
    }

    private void work() {
      while (!closing) {
        pause();
      }
      long end = System.nanoTime() + lingerNanos;
      while (System.nanoTime() - end < 0) {
        pause(); // ignores interrupts, as a library busy with its own clean-up
      }
      timer.schedule(new Farewell(timer), 0);
      new WorkerFarewell().run();
    }

    private static void pause() {
      try {
        Thread.sleep(5);
      } catch (InterruptedException e) {
        // ignored on purpose
      }
    }
  }

  /** Reads a class file from the plugin's jar, as loading a new class of the plugin does. */
  static void readOwnJar() {
    ClassLoader loader = LingeringThreads.class.getClassLoader();
    if (loader instanceof URLClassLoader jar
        && jar.findResource(LingeringThreads.class.getName().replace('.', '/') + ".class")
            == null) {
      throw new IllegalStateException(
          "the plugin's class loader was closed while its thread "
              + Thread.currentThread().getName()
              + " still ran");
    }
  }

  private static final class Tick extends TimerTask {
    @Override
    public void run() {
      readOwnJar();
    }
  }

  /** The timer's last task: a class loaded only now, then the timer ends. */
  private static final class Farewell extends TimerTask {
    private final Timer timer;

    Farewell(Timer timer) {
      this.timer = timer;
    }

    @Override
    public void run() {
      readOwnJar();
      timer.cancel();
    }
  }

  /** Loaded by the worker only as it ends. */
  private static final class WorkerFarewell implements Runnable {
    @Override
    public void run() {
      readOwnJar();
    }
  }
}
