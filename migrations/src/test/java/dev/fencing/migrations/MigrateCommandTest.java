package dev.fencing.migrations;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class MigrateCommandTest {
  private static final TestDb db = new TestDb();
  private static String app;
  private static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  static void setUp() {
    TestDb.dataSource();
    app = db.createSchema("cli_app");
    TestDb.exec(
        "CREATE TABLE " + app + ".invoices (id int PRIMARY KEY)",
        "CREATE TABLE " + app + ".charges (id int PRIMARY KEY)");
  }

  @AfterAll
  static void tearDown() {
    db.close();
  }

  private int run(String... args) {
    return MigrateCommand.run(
        args,
        new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String out() {
    return out.toString(StandardCharsets.UTF_8);
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void shouldPrintUsageForHelp() {
    assertThat(run("--help")).isEqualTo(0);
    assertThat(out()).contains("usage:").contains("--tables").contains("--enforce");
  }

  @Test
  void shouldExitTwoWithUsageWhenArgumentsAreMissing() {
    assertThat(run()).isEqualTo(2);
    assertThat(err()).contains("--url is required").contains("usage:");
  }

  @Test
  void shouldExitTwoOnAnUnknownOption() {
    assertThat(run("--url", URL, "--frobnicate")).isEqualTo(2);
    assertThat(err()).contains("unknown option --frobnicate").contains("usage:");
  }

  @Test
  void shouldExitTwoWhenAnOptionLacksItsValue() {
    assertThat(run("--url", URL, "--tables")).isEqualTo(2);
    assertThat(err()).contains("missing value for --tables");
  }

  @Test
  void shouldExitTwoOnAnInjectionAttemptWithoutConnecting() {
    // Port 1: connecting would fail with exit 1; exit 2 proves nothing was tried.
    assertThat(run("--url", "jdbc:postgresql://127.0.0.1:1/test", "--tables", "a;DROP TABLE b"))
        .isEqualTo(2);
    assertThat(err()).contains("'a;DROP TABLE b'").contains("usage:");
    assertThat(run("--url", URL, "--schema", "x y", "--tables", "a")).isEqualTo(2);
    assertThat(run("--url", URL, "--tables", "a,,b")).isEqualTo(2);
    assertThat(run("--url", URL, "--lock-timeout-ms", "soon")).isEqualTo(2);
  }

  @Test
  void shouldExitOneWithAOneLineErrorNamingTheUrlWhenTheDatabaseIsUnreachable() {
    String unreachable = "jdbc:postgresql://127.0.0.1:1/test?password=secret";
    assertThat(run("--url", unreachable, "--user", "postgres", "--tables", "a")).isEqualTo(1);
    assertThat(err().strip().lines()).hasSize(1);
    assertThat(err())
        .contains("jdbc:postgresql://127.0.0.1:1/test")
        .doesNotContain("secret")
        .doesNotContain("Exception")
        .doesNotContain("\tat ");
  }

  @Test
  void shouldMigrateTheLocalDatabaseAndThenReportNothingToDo() {
    String fencing = db.newSchema("cli_fz");
    String[] args = {
      "--url",
      URL,
      "--user",
      "postgres",
      "--schema",
      fencing,
      "--tables",
      app + ".invoices," + app + ".charges",
      "--enforce",
      app + ".charges",
      "--strict"
    };
    assertThat(run(args)).as(err()).isEqualTo(0);
    assertThat(out())
        .contains("4 migration(s) applied")
        .contains("fence_token column added: " + app + ".invoices, " + app + ".charges")
        .contains("fencing_enforce trigger installed: " + app + ".charges (strict)");

    out.reset();
    assertThat(run(args)).isEqualTo(0);
    assertThat(out())
        .contains("0 migration(s) applied")
        .contains("fence_token column already present: " + app + ".invoices, " + app + ".charges")
        .contains("fencing_enforce trigger already present: " + app + ".charges (strict)");
  }

  @Test
  void shouldExitOneNamingAMissingTable() {
    String fencing = db.newSchema("cli_fz");
    assertThat(
            run("--url", URL, "--user", "postgres", "--schema", fencing, "--tables", app + ".nope"))
        .isEqualTo(1);
    assertThat(err()).contains(app + ".nope").contains("does not exist");
    assertThat(err().strip().lines()).hasSize(1);
  }

  @Test
  void shouldExitTwoWhenStrictIsGivenWithoutEnforce() {
    // Port 1: connecting would fail with exit 1; exit 2 proves the arguments were refused first.
    assertThat(run("--url", "jdbc:postgresql://127.0.0.1:1/test", "--tables", "a", "--strict"))
        .isEqualTo(2);
    assertThat(err()).contains("--strict").contains("--enforce").contains("usage:");
  }

  @Test
  void shouldExplainThatASchemaHoldingOtherTablesIsNotAFencingSchema() {
    assertThat(
            run("--url", URL, "--user", "postgres", "--schema", app, "--tables", app + ".invoices"))
        .isEqualTo(1);
    assertThat(err().strip().lines()).hasSize(1);
    assertThat(err())
        .contains("\"" + app + "\"")
        .contains("not a fencing schema")
        .contains("--schema")
        .doesNotContain("baseline");
    assertThat(
            TestDb.queryString(
                "SELECT to_regclass(?)::text", app + "." + FencingMigrations.HISTORY_TABLE))
        .isNull();
  }

  @Test
  void shouldTellTheJavaSideWhichFenceSchemaToUse() {
    String fencing = db.newSchema("cli_fz");
    assertThat(run("--url", URL, "--user", "postgres", "--schema", fencing)).as(err()).isEqualTo(0);
    assertThat(out()).contains("FenceOptions.defaults().withSchema(\"" + fencing + "\")");
  }
}
