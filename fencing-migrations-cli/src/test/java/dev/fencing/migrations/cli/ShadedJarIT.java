package dev.fencing.migrations.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Runs target/fencing-migrations.jar (the shaded tool) with {@code java -jar}, as a user would. */
class ShadedJarIT {
  private static final CliTestDb db = new CliTestDb();
  private static Path jar;
  private static String app;

  record Result(int exit, String out, String err) {}

  @BeforeAll
  static void setUp() throws Exception {
    jar = Path.of(System.getProperty("fencing.migrations.jar", "target/fencing-migrations.jar"));
    assertThat(jar).as("shaded jar (built in the package phase)").exists();
    CliTestDb.connect().close();
    app = db.createSchema("jar_app");
    CliTestDb.exec(
        "CREATE TABLE " + app + ".invoices (id int PRIMARY KEY)",
        "CREATE TABLE " + app + ".charges (id int PRIMARY KEY)");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  private static Result java(String... args) throws IOException, InterruptedException {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.add("-jar");
    cmd.add(jar.toString());
    cmd.addAll(List.of(args));
    Path out = Files.createTempFile("fencing-jar", ".out");
    Path err = Files.createTempFile("fencing-jar", ".err");
    try {
      Process p =
          new ProcessBuilder(cmd).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
      if (!p.waitFor(60, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new AssertionError("java -jar did not finish within 60 s: " + cmd);
      }
      return new Result(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  @Test
  void shouldPrintUsageForHelp() throws Exception {
    Result r = java("--help");
    assertThat(r.exit()).isZero();
    assertThat(r.out()).contains("usage: java -jar fencing-migrations.jar");
  }

  @Test
  void shouldExitTwoOnBadArguments() throws Exception {
    Result r = java("--tables", "x");
    assertThat(r.exit()).isEqualTo(2);
    assertThat(r.err()).contains("--url is required").contains("usage:");
  }

  @Test
  void shouldExitOneWithOneLineWhenTheDatabaseIsUnreachable() throws Exception {
    Result r = java("--url", "jdbc:postgresql://127.0.0.1:1/test", "--tables", "x");
    assertThat(r.exit()).isEqualTo(1);
    assertThat(r.err().strip().lines()).hasSize(1);
    assertThat(r.err()).contains("jdbc:postgresql://127.0.0.1:1/test").doesNotContain("\tat ");
  }

  @Test
  void shouldMigrateTheLocalDatabaseWithFlywayLoadedFromTheShadedJar() throws Exception {
    String fencing = db.newSchema("jar_fz");
    Result r =
        java(
            "--url",
            CliTestDb.URL,
            "--schema",
            fencing,
            "--tables",
            app + ".invoices",
            "--enforce",
            app + ".charges",
            "--strict");
    assertThat(r.exit()).as(r.err()).isZero();
    System.out.println("[shaded jar output]\n" + r.out());
    assertThat(r.out())
        .contains("4 migration(s) applied, now at version 4")
        .contains("fence_token column added: " + app + ".invoices, " + app + ".charges")
        .contains("fencing_enforce trigger installed: " + app + ".charges (strict)");
    assertThat(
            CliTestDb.queryLong(
                "SELECT count(*) FROM pg_trigger WHERE tgrelid = ?::regclass"
                    + " AND tgname = 'fencing_enforce'",
                app + ".charges"))
        .isEqualTo(1);

    Result again = java("--url", CliTestDb.URL, "--schema", fencing, "--tables", app + ".invoices");
    assertThat(again.exit()).isZero();
    assertThat(again.out()).contains("fence_token column already present: " + app + ".invoices");
  }
}
