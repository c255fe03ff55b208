package dev.fencing.spring.internal;

import dev.fencing.spring.StaleLeaseWriteException;
import java.util.Collections;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.function.Consumer;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Reports each refusal the JVM made to the {@link RefusalObserver} beans, once: a refusal wrapped
 * and translated at two boundaries is still one refusal.
 */
public final class RefusalCounting implements Consumer<StaleLeaseWriteException> {

  private final ObjectProvider<RefusalObserver> observers;
  private final Set<Throwable> seen = Collections.newSetFromMap(new WeakHashMap<>());

  /**
   * Creates the counting.
   *
   * @param observers the observers, resolved at each refusal
   */
  public RefusalCounting(ObjectProvider<RefusalObserver> observers) {
    this.observers = observers;
  }

  @Override
  public void accept(StaleLeaseWriteException translated) {
    if (translated.refusedBy() != StaleLeaseWriteException.RefusedBy.JVM) {
      return;
    }
    Throwable refusal = refusal(translated);
    synchronized (seen) {
      if (!seen.add(refusal)) {
        return;
      }
    }
    observers.orderedStream().forEach(o -> o.onRefusedInJvm(refusal));
  }

  private static Throwable refusal(StaleLeaseWriteException translated) {
    Map<Throwable, Boolean> visited = new java.util.IdentityHashMap<>();
    for (Throwable t = translated.getCause();
        t != null && visited.put(t, Boolean.TRUE) == null;
        t = t.getCause()) {
      if (t instanceof dev.fencing.jdbc.LeaseLostSQLException
          || t instanceof dev.fencing.core.LeaseLostException) {
        return t;
      }
    }
    return translated.getCause() == null ? translated : translated.getCause();
  }
}
