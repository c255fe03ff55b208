package dev.fencing.migrations.cli;

import dev.fencing.migrations.MigrateCommand;

/**
 * The entry point of {@code fencing-migrations.jar}: runs {@link MigrateCommand} with Flyway's
 * PostgreSQL and MariaDB support and both JDBC drivers on the class path.
 */
public final class Main {
  private Main() {}

  /**
   * Runs the tool and exits the JVM with its exit code (0 done, 1 failed, 2 bad arguments).
   *
   * @param args command-line arguments, as {@code --help} lists them
   */
  public static void main(String[] args) {
    MigrateCommand.main(args);
  }
}
