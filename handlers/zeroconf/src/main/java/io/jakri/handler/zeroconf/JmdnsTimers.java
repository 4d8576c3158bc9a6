package io.jakri.handler.zeroconf;

import java.net.InetAddress;
import java.time.Duration;
import java.util.Date;
import java.util.Timer;
import java.util.TimerTask;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import javax.jmdns.impl.DNSIncoming;
import javax.jmdns.impl.DNSTaskStarter;
import javax.jmdns.impl.JmDNSImpl;
import javax.jmdns.impl.ServiceInfoImpl;
import javax.jmdns.impl.tasks.RecordReaper;
import javax.jmdns.impl.tasks.Responder;
import javax.jmdns.impl.tasks.resolver.ServiceInfoResolver;
import javax.jmdns.impl.tasks.resolver.ServiceResolver;
import javax.jmdns.impl.tasks.resolver.TypeResolver;
import javax.jmdns.impl.tasks.state.Announcer;
import javax.jmdns.impl.tasks.state.Canceler;
import javax.jmdns.impl.tasks.state.Prober;
import javax.jmdns.impl.tasks.state.Renewer;

/**
 * The two timers of one JmDNS instance (its task starter, installed through JmDNS's {@code
 * DNSTaskStarter.Factory}), made so that their end can be awaited. JmDNS's own timers end with
 * {@link Timer#cancel()}, which does not wait for the task running then: after {@code
 * JmDNS.close()} returned, its state timer could still be running a task that then loads a class
 * ({@code Renewer}) from a plugin the agent has unloaded meanwhile. Here, ending a timer queues one
 * last task that cancels it, and {@link #awaitEnded} waits until both timers ran theirs. As JmDNS's
 * own timers do, an ending timer ignores new tasks instead of throwing. Both threads are daemons.
 * The JmDNS tasks started are JmDNS's own, on the same timers it would use.
 */
final class JmdnsTimers implements DNSTaskStarter {

  private final JmDNSImpl jmdns;
  private final CountDownLatch ended = new CountDownLatch(2);
  private final EndingTimer timer;
  private final EndingTimer stateTimer;

  JmdnsTimers(JmDNSImpl jmdns) {
    this.jmdns = jmdns;
    this.timer = new EndingTimer("JmDNS(" + jmdns.getName() + ").Timer", ended);
    this.stateTimer = new EndingTimer("JmDNS(" + jmdns.getName() + ").State.Timer", ended);
  }

  /** Makes every JmDNS instance created from now on (in this plugin) use these timers. */
  static void install() {
    DNSTaskStarter.Factory.setClassDelegate(JmdnsTimers::new);
  }

  /** The timers of {@code jmdns}, if it uses these (looked up before it is closed). */
  static java.util.Optional<JmdnsTimers> of(JmDNSImpl jmdns) {
    return DNSTaskStarter.Factory.getInstance().getStarter(jmdns) instanceof JmdnsTimers t
        ? java.util.Optional.of(t)
        : java.util.Optional.empty();
  }

  /** Waits up to {@code timeout} until both timers ended (JmDNS's close ends them). */
  boolean awaitEnded(Duration timeout) throws InterruptedException {
    return ended.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Whether both timers have ended. */
  boolean ended() {
    return ended.getCount() == 0;
  }

  @Override
  public void purgeTimer() {
    timer.purge();
  }

  @Override
  public void purgeStateTimer() {
    stateTimer.purge();
  }

  @Override
  public void cancelTimer() {
    timer.end();
  }

  @Override
  public void cancelStateTimer() {
    stateTimer.end();
  }

  @Override
  public void startProber() {
    new Prober(jmdns).start(stateTimer);
  }

  @Override
  public void startAnnouncer() {
    new Announcer(jmdns).start(stateTimer);
  }

  @Override
  public void startRenewer() {
    new Renewer(jmdns).start(stateTimer);
  }

  @Override
  public void startCanceler() {
    new Canceler(jmdns).start(stateTimer);
  }

  /**
   * How often the record cache is cleaned: once a second, not JmDNS's ten. A service's goodbye (TTL
   * 0) only marks its records to expire one second later (RFC 6762, 10.1); the cleaning removes
   * them and reports the service gone. Every ten seconds, a device that said goodbye stayed up to
   * ten seconds longer (measured 9.1 and 9.5 s). The cleaning walks the cache in memory; it sends
   * nothing unless a record is due for its refresh query, which it then sends closer to its time.
   */
  static final Duration REAPER_INTERVAL = Duration.ofSeconds(1);

  @Override
  public void startReaper() {
    // JmDNS's own reaper task (it cleans unless JmDNS is closing), at this rate instead of its own.
    long every = REAPER_INTERVAL.toMillis();
    timer.schedule(new RecordReaper(jmdns), every, every);
  }

  @Override
  public void startServiceInfoResolver(ServiceInfoImpl info) {
    new ServiceInfoResolver(jmdns, info).start(timer);
  }

  @Override
  public void startTypeResolver() {
    new TypeResolver(jmdns).start(timer);
  }

  @Override
  public void startServiceResolver(String type) {
    new ServiceResolver(jmdns, type).start(timer);
  }

  @Override
  public void startResponder(DNSIncoming in, InetAddress address, int port) {
    new Responder(jmdns, in, address, port).start(timer);
  }

  /**
   * A daemon timer that, once {@link #end}ed, ignores new tasks, runs what is due and then stops,
   * counting {@code ended} down from its own thread as the last thing it does.
   */
  private static final class EndingTimer extends Timer {
    private final CountDownLatch ended;
    private boolean ending;

    EndingTimer(String name, CountDownLatch ended) {
      super(name, true);
      this.ended = ended;
    }

    synchronized void end() {
      if (ending) {
        return;
      }
      ending = true;
      try {
        super.schedule(
            new TimerTask() {
              @Override
              public void run() {
                EndingTimer.super.cancel();
                ended.countDown();
              }
            },
            0);
      } catch (IllegalStateException alreadyCancelled) {
        ended.countDown(); // its thread already ended
      }
    }

    @Override
    public void cancel() {
      end();
    }

    @Override
    public synchronized void schedule(TimerTask task, long delay) {
      if (!ending) {
        super.schedule(task, delay);
      }
    }

    @Override
    public synchronized void schedule(TimerTask task, Date time) {
      if (!ending) {
        super.schedule(task, time);
      }
    }

    @Override
    public synchronized void schedule(TimerTask task, long delay, long period) {
      if (!ending) {
        super.schedule(task, delay, period);
      }
    }

    @Override
    public synchronized void schedule(TimerTask task, Date first, long period) {
      if (!ending) {
        super.schedule(task, first, period);
      }
    }

    @Override
    public synchronized void scheduleAtFixedRate(TimerTask task, long delay, long period) {
      if (!ending) {
        super.scheduleAtFixedRate(task, delay, period);
      }
    }

    @Override
    public synchronized void scheduleAtFixedRate(TimerTask task, Date first, long period) {
      if (!ending) {
        super.scheduleAtFixedRate(task, first, period);
      }
    }
  }
}
