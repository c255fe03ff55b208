package dev.fencing.testing;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Wires fencing's test kit into a JUnit 5 test class: test methods (and {@code @BeforeEach}
 * methods) may declare parameters of type {@link InMemoryLeaseManager} (a fresh one per test,
 * closed after it), {@link SettableClock} (that manager's clock) and {@link StaleWriterProbe} (on
 * the test instance's {@link dev.fencing.jdbc.FencedDataSource} field, with that manager's leases).
 *
 * <pre>{@code
 * @FencingTest(schemas = "billing")
 * class BillingDaoFencingTest {
 *   FencedDataSource db = FencedDataSource.wrap(testPool, FenceOptions.defaults());
 *   BillingDao billing = new BillingDao(db);
 *
 *   @Test
 *   void chargingIsFenced(StaleWriterProbe probe) {
 *     probe.check(as -> billing.charge(42, 500));
 *   }
 * }
 * }</pre>
 */
@Target({ElementType.TYPE, ElementType.ANNOTATION_TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
@ExtendWith(FencingTestExtension.class)
public @interface FencingTest {

  /**
   * The schemas (MariaDB: databases) the probe compares; empty for the connection's current one.
   *
   * @return the schemas
   */
  String[] schemas() default {};

  /**
   * The resource the probe's leases are on; empty for a random one. Name it when your tables are
   * bound to one resource.
   *
   * @return the resource
   */
  String resource() default "";
}
