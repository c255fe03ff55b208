package dev.fencing.spring.internal;

import dev.fencing.migrations.FencingMigrations;
import dev.fencing.migrations.MigrationOptions;
import dev.fencing.migrations.MigrationReport;
import javax.sql.DataSource;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.beans.factory.ObjectProvider;

/**
 * Applies the fence migrations at startup, after the application's own Flyway migrations (so the
 * tables they fence exist), with their own history table in the fence schema: nothing is added to
 * the application's Flyway history, and no {@code Flyway} bean is declared.
 */
public final class FenceMigrationsInitializer implements InitializingBean {

  private static final Logger log = LoggerFactory.getLogger(FenceMigrationsInitializer.class);

  private final DataSource dataSource;
  private final MigrationOptions options;
  private final ObjectProvider<?> applicationMigrations;

  /**
   * Creates the initializer.
   *
   * @param dataSource the application's data source
   * @param options what to migrate
   * @param applicationMigrations the beans that run the application's own migrations, created
   *     before the fence migrations run
   */
  public FenceMigrationsInitializer(
      DataSource dataSource, MigrationOptions options, ObjectProvider<?> applicationMigrations) {
    this.dataSource = dataSource;
    this.options = options;
    this.applicationMigrations = applicationMigrations;
  }

  @Override
  public void afterPropertiesSet() {
    applicationMigrations.orderedStream().forEach(initializer -> {});
    MigrationReport report = FencingMigrations.migrate(dataSource, options);
    log.info("Fence migrations in schema \"{}\": {}", options.schema(), report);
  }
}
