package dev.fencing.jdbc.internal;

import java.util.PriorityQueue;
import java.util.concurrent.TimeUnit;

/**
 * A timer for deadlines that are almost always disarmed before they come, such as the bound on a
 * registration's commit: arming and disarming one costs no thread wake-up.
 *
 * <p>The timer's thread sleeps until the deadline it planned for when it last went to sleep, and is
 * woken early only for a deadline earlier than that one. When it wakes and finds nothing due, it
 * plans for the earliest deadline still armed; with none armed, it sleeps for {@link #IDLE_NANOS}
 * if deadlines were armed during its last sleep (a stream of calls is going on), and otherwise
 * until the next one is armed. (A {@link java.util.concurrent.ScheduledThreadPoolExecutor} wakes
 * its thread for every task that becomes the head of its queue: with each call's task cancelled
 * before the next call, that is every call, a thread switch in the caller's path.)
 *
 * <p>The action of an expired deadline runs on a thread of its own, so a slow action never delays
 * another deadline.
 */
final class SparseTimer {

  /** How long the thread sleeps with no deadline armed while calls keep arming them. */
  static final long IDLE_NANOS = TimeUnit.SECONDS.toNanos(1);

  private final String name;
  private final PriorityQueue<Deadline> armed =
      new PriorityQueue<>((a, b) -> Long.signum(a.atNanos - b.atNanos));
  private Thread thread;
  private boolean sleepingUntilArmed;
  private long plannedWakeAt;
  private boolean armedDuringSleep;
  private long wakeUps;
  private boolean sleeping;

  /**
   * A timer whose threads are named after {@code name}; its thread starts with the first deadline.
   */
  SparseTimer(String name) {
    this.name = name;
  }

  /** One armed deadline. */
  final class Deadline {
    private final long atNanos;
    private final Runnable action;

    private Deadline(long atNanos, Runnable action) {
      this.atNanos = atNanos;
      this.action = action;
    }

    /** Makes sure the action does not run, unless it already started. */
    void disarm() {
      synchronized (SparseTimer.this) {
        armed.remove(this);
      }
    }
  }

  /**
   * Runs {@code action} on a thread of its own once {@link System#nanoTime()} reaches {@code
   * atNanos}, unless the returned deadline is disarmed first.
   */
  Deadline arm(long atNanos, Runnable action) {
    Deadline deadline = new Deadline(atNanos, action);
    synchronized (this) {
      armed.add(deadline);
      armedDuringSleep = true;
      if (thread == null) {
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
        thread.start();
      } else if (sleepingUntilArmed || atNanos - plannedWakeAt < 0) {
        notifyAll();
      }
    }
    return deadline;
  }

  /** How often the thread woke up (for tests). */
  synchronized long wakeUps() {
    return wakeUps;
  }

  /** Whether the thread is asleep (for tests). */
  synchronized boolean isSleeping() {
    return sleeping;
  }

  private void run() {
    while (true) {
      Deadline due = nextDue();
      Thread running = new Thread(due.action, name + "-expired");
      running.setDaemon(true);
      running.start();
    }
  }

  /** Sleeps until the first armed deadline is due, as the class comment says, and takes it off. */
  private synchronized Deadline nextDue() {
    while (true) {
      long now = System.nanoTime();
      Deadline first = armed.peek();
      if (first != null && first.atNanos - now <= 0) {
        return armed.poll();
      }
      boolean active = armedDuringSleep;
      armedDuringSleep = false;
      sleeping = true;
      try {
        if (first != null) {
          plannedWakeAt = first.atNanos;
          TimeUnit.NANOSECONDS.timedWait(this, first.atNanos - now);
        } else if (active) {
          plannedWakeAt = now + IDLE_NANOS;
          TimeUnit.NANOSECONDS.timedWait(this, IDLE_NANOS);
        } else {
          sleepingUntilArmed = true;
          wait();
        }
      } catch (InterruptedException e) {
        // a daemon thread nobody interrupts: sleep on as planned
      } finally {
        sleeping = false;
        sleepingUntilArmed = false;
        wakeUps++;
      }
    }
  }
}
