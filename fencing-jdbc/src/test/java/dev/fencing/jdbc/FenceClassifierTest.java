package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.internal.FenceClassifier;
import java.sql.SQLException;
import org.junit.jupiter.api.Test;

/** How database errors are reported when the driver gives no server error fields. */
class FenceClassifierTest {

  @Test
  void aRefusalWithoutServerFieldsSaysItsFiguresAreUnknown() {
    SQLException plain = new SQLException("ERROR: stale fencing token", "ZF001");
    SQLException translated = FenceClassifier.translate(plain, null, false);
    assertThat((Throwable) translated)
        .isInstanceOfSatisfying(
            StaleTokenException.class,
            e -> {
              assertThat(e.getMessage()).contains("current token is unknown");
              assertThat(e.currentToken()).isZero();
              assertThat(e.getCause()).isSameAs(plain);
            });
  }

  @Test
  void otherErrorsPassUnchanged() {
    SQLException duplicate = new SQLException("duplicate key", "23505");
    assertThat((Throwable) FenceClassifier.translate(duplicate, null, false)).isSameAs(duplicate);
  }
}
