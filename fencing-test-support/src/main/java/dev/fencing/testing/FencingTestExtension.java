package dev.fencing.testing;

import dev.fencing.jdbc.FencedDataSource;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * The JUnit 5 extension behind {@link FencingTest}: resolves {@link InMemoryLeaseManager}, {@link
 * SettableClock} and {@link StaleWriterProbe} parameters, one manager per test, closed after it.
 */
public final class FencingTestExtension implements ParameterResolver, AfterEachCallback {

  private static final ExtensionContext.Namespace NAMESPACE =
      ExtensionContext.Namespace.create(FencingTestExtension.class);
  private static final String LEASES = "leases";

  /** Creates the extension; JUnit does. */
  public FencingTestExtension() {}

  @Override
  public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    return type == InMemoryLeaseManager.class
        || type == SettableClock.class
        || type == StaleWriterProbe.class;
  }

  @Override
  public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
    Class<?> type = parameter.getParameter().getType();
    InMemoryLeaseManager leases = leases(context);
    if (type == InMemoryLeaseManager.class) {
      return leases;
    }
    if (type == SettableClock.class) {
      return leases.clock();
    }
    StaleWriterProbe probe = StaleWriterProbe.on(dataSource(context)).withLeases(leases);
    Optional<FencingTest> settings =
        AnnotationSupport.findAnnotation(context.getRequiredTestClass(), FencingTest.class);
    if (settings.isPresent() && settings.get().schemas().length > 0) {
      probe = probe.withSchemas(settings.get().schemas());
    }
    if (settings.isPresent() && !settings.get().resource().isEmpty()) {
      probe = probe.withResource(settings.get().resource());
    }
    return probe;
  }

  @Override
  public void afterEach(ExtensionContext context) {
    InMemoryLeaseManager leases =
        context.getStore(NAMESPACE).remove(LEASES, InMemoryLeaseManager.class);
    if (leases != null) {
      leases.close();
    }
  }

  private static InMemoryLeaseManager leases(ExtensionContext context) {
    ExtensionContext.Store store = context.getStore(NAMESPACE);
    InMemoryLeaseManager leases = store.get(LEASES, InMemoryLeaseManager.class);
    if (leases == null) {
      leases = InMemoryLeaseManager.create();
      store.put(LEASES, leases);
    }
    return leases;
  }

  /** The one non-null FencedDataSource field of the test instance (or its superclasses). */
  private static FencedDataSource dataSource(ExtensionContext context) {
    Object instance = context.getTestInstance().orElse(null);
    List<String> names = new ArrayList<>();
    FencedDataSource found = null;
    for (Class<?> c = context.getRequiredTestClass(); c != null; c = c.getSuperclass()) {
      for (Field field : c.getDeclaredFields()) {
        if (!FencedDataSource.class.isAssignableFrom(field.getType())) {
          continue;
        }
        boolean isStatic = Modifier.isStatic(field.getModifiers());
        if (!isStatic && instance == null) {
          continue;
        }
        Object value;
        try {
          field.setAccessible(true);
          value = field.get(isStatic ? null : instance);
        } catch (ReflectiveOperationException | RuntimeException e) {
          throw new ParameterResolutionException("cannot read field " + field, e);
        }
        if (value != null) {
          names.add(c.getSimpleName() + "." + field.getName());
          found = (FencedDataSource) value;
        }
      }
    }
    if (names.size() != 1) {
      throw new ParameterResolutionException(
          (names.isEmpty()
                  ? "a StaleWriterProbe parameter needs a non-null FencedDataSource field in the"
                      + " test class (set by the time the test runs)"
                  : "a StaleWriterProbe parameter needs exactly one FencedDataSource field, found "
                      + names)
              + "; or build the probe yourself: StaleWriterProbe.on(db).withLeases(leases)");
    }
    return found;
  }
}
