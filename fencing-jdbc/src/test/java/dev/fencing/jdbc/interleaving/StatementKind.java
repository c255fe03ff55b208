package dev.fencing.jdbc.interleaving;

import dev.fencing.jdbc.GuardedStatements;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;
import java.util.Map;
import org.jooq.Field;
import org.jooq.Table;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConnectionProvider;
import org.jooq.impl.SQLDataType;

/**
 * How a session writes one logical item. Each kind has its fenced form (through the library) and
 * its fencing-off form (the same write as plain SQL, for the control run). Adding a kind is one
 * constant.
 */
enum StatementKind {
  GUARDED_UPDATE("guarded update", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement update = GuardedStatements.update(c, s.table(), "v = ?", "id = ?")) {
        update.setString(1, s.marker(step));
        update.setLong(2, id);
        return new int[] {update.executeUpdate()};
      }
    }
  },
  GUARDED_DELETE("guarded delete", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement delete = GuardedStatements.delete(c, s.table(), "id = ?")) {
        delete.setLong(1, id);
        return new int[] {delete.executeUpdate()};
      }
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement delete =
          c.prepareStatement("DELETE FROM " + s.table() + " WHERE id = ?")) {
        delete.setLong(1, id);
        return new int[] {delete.executeUpdate()};
      }
    }
  },
  GUARDED_INSERT("guarded insert", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement insert = GuardedStatements.insert(c, s.table(), "id", "v")) {
        insert.setLong(1, id);
        insert.setString(2, s.marker(step));
        return new int[] {insert.executeUpdate()};
      }
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement insert =
          c.prepareStatement("INSERT INTO " + s.table() + " (id, v) VALUES (?, ?)")) {
        insert.setLong(1, id);
        insert.setString(2, s.marker(step));
        return new int[] {insert.executeUpdate()};
      }
    }
  },
  GUARDED_UPSERT("guarded upsert", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement upsert =
          GuardedStatements.upsert(c, s.table(), List.of("id", "v"), List.of("id"))) {
        upsert.setLong(1, id);
        upsert.setString(2, s.marker(step));
        return new int[] {upsert.executeUpdate()};
      }
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement upsert = c.prepareStatement(s.backend().plainUpsert(s.table()))) {
        upsert.setLong(1, id);
        upsert.setString(2, s.marker(step));
        return new int[] {upsert.executeUpdate()};
      }
    }
  },
  /** {@code addBatch} twice and {@code executeBatch} on one guarded update. */
  JDBC_BATCH("JDBC batch", "items", true) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement update = GuardedStatements.update(c, s.table(), "v = ?", "id = ?")) {
        return batch(update, s.marker(step), id);
      }
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
      try (PreparedStatement update =
          c.prepareStatement("UPDATE " + s.table() + " SET v = ? WHERE id = ?")) {
        return batch(update, s.marker(step), id);
      }
    }
  },
  /**
   * A DAO that writes its first items as a JDBC batch and its last one alone, in the same
   * transaction: the batch's verification state reaches the single statement.
   */
  BATCH_THEN_SINGLE("JDBC batch, then a single guarded update", "items", true) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      return step == Step.SECOND
          ? GUARDED_UPDATE.fenced(s, c, step, id)
          : JDBC_BATCH.fenced(s, c, step, id);
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
      return step == Step.SECOND
          ? GUARDED_UPDATE.plain(s, c, step, id)
          : JDBC_BATCH.plain(s, c, step, id);
    }

    @Override
    long[] targets(Step step, long id) {
      return step == Step.SECOND ? new long[] {id} : new long[] {id, id + Rows.TWIN};
    }
  },
  FENCED_DSL("FencedDsl (jOOQ) update", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) {
      return new int[] {
        s.dsl()
            .update(
                DSL.using(new DefaultConnectionProvider(c), s.backend().jooqDialect()),
                jooqTable(s),
                Map.of(V, s.marker(step)),
                ID.eq(id))
      };
    }

    @Override
    int[] plain(Session s, Connection c, Step step, long id) {
      return new int[] {
        DSL.using(new DefaultConnectionProvider(c), s.backend().jooqDialect())
            .update(jooqTable(s))
            .set(V, s.marker(step))
            .where(ID.eq(id))
            .execute()
      };
    }
  },
  /**
   * A DAO's plain UPDATE, unchanged, through a fenced connection in default mode (no trigger): the
   * connection rewrites it into the guarded form.
   */
  PLAIN_SQL_REWRITTEN("plain UPDATE rewritten by the fenced connection", "items", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      return GUARDED_UPDATE.plain(s, c, step, id);
    }
  },
  /**
   * A DAO that knows nothing of fencing, on a table with the strict enforcement trigger, through a
   * data source in trigger mode.
   */
  TRIGGER_MODE_SQL("trigger-mode plain SQL (strict table)", "audited", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      return GUARDED_UPDATE.plain(s, c, step, id);
    }
  },
  /**
   * The same DAO on a table whose trigger is lenient: a write that carries no token passes
   * unchecked, so a write that lost its settings is not fenced at all.
   */
  TRIGGER_MODE_SQL_LENIENT("trigger-mode plain SQL (lenient table)", "lenient", false) {
    @Override
    int[] fenced(Session s, Connection c, Step step, long id) throws SQLException {
      return GUARDED_UPDATE.plain(s, c, step, id);
    }
  };

  static final Field<Long> ID = DSL.field(DSL.name("id"), SQLDataType.BIGINT);
  static final Field<String> V = DSL.field(DSL.name("v"), SQLDataType.VARCHAR);

  final String label;

  /** Whether the kind writes plain SQL through a trigger-mode data source to a trigger table. */
  final boolean triggerMode;

  /** Whether one logical write touches the row and its twin. */
  final boolean batched;

  /** The table written with fencing on: {@code items}, or one with the enforcement trigger. */
  final String fencedTable;

  StatementKind(String label, String fencedTable, boolean batched) {
    this.label = label;
    this.fencedTable = fencedTable;
    this.triggerMode = !fencedTable.equals("items");
    this.batched = batched;
  }

  /** The write through the library, on a connection of a fenced data source inside a scope. */
  abstract int[] fenced(Session s, Connection c, Step step, long id) throws SQLException;

  /** The same write with fencing switched off: plain SQL. Defaults to a plain update. */
  int[] plain(Session s, Connection c, Step step, long id) throws SQLException {
    try (PreparedStatement update =
        c.prepareStatement("UPDATE " + s.table() + " SET v = ? WHERE id = ?")) {
      update.setString(1, s.marker(step));
      update.setLong(2, id);
      return new int[] {update.executeUpdate()};
    }
  }

  /** The rows one write of this kind touches. */
  long[] targets(Step step, long id) {
    return batched ? new long[] {id, id + Rows.TWIN} : new long[] {id};
  }

  /** Whether the rows must exist before the write (all but inserts). */
  boolean needsExistingRows() {
    return this != GUARDED_INSERT;
  }

  /** Whether a row written by the current holder is still there afterwards (all but deletes). */
  boolean leavesRow() {
    return this != GUARDED_DELETE;
  }

  private static int[] batch(PreparedStatement update, String marker, long id) throws SQLException {
    for (long row : new long[] {id, id + Rows.TWIN}) {
      update.setString(1, marker);
      update.setLong(2, row);
      update.addBatch();
    }
    return update.executeBatch();
  }

  private static Table<?> jooqTable(Session s) {
    String[] parts = s.table().split("\\.");
    return DSL.table(DSL.name(parts[0], parts[1]));
  }

  @Override
  public String toString() {
    return label;
  }

  /** Where in a session's script a write happens. */
  enum Step {
    /** A write made while the writer is still the registered holder, before the boundary. */
    PRIME,
    /** The first write after the boundary: the one the registration races. */
    FIRST,
    /** The next write in the same session: the DAO goes on. */
    SECOND
  }

  /** Row ids of one run: {@code base} is unique per run, twins are the batch's second rows. */
  record Rows(long base) {
    static final long TWIN = 10;
    static final long SPAN = 20;

    /** The stale holder's prime writes (k = 0, 1): rows only the resource X ever wrote. */
    long stalePrime(int k) {
      return base + k;
    }

    /** The rows the stale holder writes after the boundary, and the successor writes later. */
    long contested(Step step) {
      return base + (step == Step.FIRST ? 2 : 3);
    }

    /** The successor's prime writes (k = 0, 1). */
    long currentPrime(int k) {
      return base + 4 + k;
    }

    long last() {
      return base + SPAN - 1;
    }
  }
}
