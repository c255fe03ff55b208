package dev.fencing.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.jdbc.internal.SqlLexer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Which plain SQL may end or rewind the transaction: the fenced connection then forgets its view.
 */
class SqlLexerTest {

  @ParameterizedTest
  @ValueSource(
      strings = {
        "COMMIT",
        "  commit work",
        "-- done\nCOMMIT",
        "/* a /* nested */ comment */ ROLLBACK TO SAVEPOINT s",
        "END",
        "abort",
        "BEGIN",
        "START TRANSACTION",
        "UPDATE t SET v = 1; COMMIT",
        "CALL proc()",
        "DO $$ BEGIN COMMIT; END $$",
        "PREPARE TRANSACTION 'x'",
        // MariaDB has no dollar quotes: there, "; ROLLBACK" may be a statement
        "SELECT $$; ROLLBACK$$",
        // with standard_conforming_strings off, or on MariaDB, the literal ends after \'
        "SELECT '\\'; COMMIT; '",
        // MariaDB reads # as a comment to the end of the line
        "SELECT 1 # '\n; COMMIT",
      })
  void transactionControlIsRecognised(String sql) {
    assertThat(SqlLexer.mayControlTransaction(sql)).isTrue();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "UPDATE t SET note = 'commit' WHERE id = 1",
        "SELECT 1 -- ROLLBACK",
        "INSERT INTO t VALUES ('a; COMMIT')",
        "SAVEPOINT s",
        "RELEASE SAVEPOINT s",
        "SELECT \"commit\" FROM t",
      })
  void otherStatementsAreNot(String sql) {
    assertThat(SqlLexer.mayControlTransaction(sql)).isFalse();
  }
}
