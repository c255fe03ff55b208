package dev.fencing.schema;

import java.util.regex.Pattern;

/**
 * The fence's SQL contract in one place: the names the migrations create, the settings the
 * enforcement trigger reads, the SQLSTATEs it raises, and the rule every identifier that ends up in
 * generated SQL must follow. {@code fencing-migrations} creates what is named here and {@code
 * fencing-jdbc} writes through it; neither spells these names itself.
 */
public final class FenceSchema {

  /** The schema that holds the fence table unless the user chooses another. */
  public static final String DEFAULT_SCHEMA = "fencing";

  /** The fence table, inside the fence schema: one row per resource. */
  public static final String FENCE_TABLE = "fence";

  /** The column of a fenced table that holds the token of the write that produced the row. */
  public static final String TOKEN_COLUMN = "fence_token";

  /**
   * The column of a fenced table that holds the resource whose holder wrote the row ({@code NULL}
   * for rows written before the column existed or without a lease). Tokens are only ever compared
   * within one resource.
   */
  public static final String RESOURCE_COLUMN = "fence_resource";

  /** Trigger mode: the setting that names the writer's resource. */
  public static final String SETTING_RESOURCE = "fencing.resource";

  /** Trigger mode: the setting that holds the writer's token. */
  public static final String SETTING_TOKEN = "fencing.token";

  /** Trigger mode: the setting that holds the writer's lease id. */
  public static final String SETTING_LEASE_ID = "fencing.lease_id";

  /**
   * SQLSTATE of a write rejected because a newer holder registered (or the fence names another).
   */
  public static final String SQLSTATE_STALE_TOKEN = "ZF001";

  /** SQLSTATE of an attempt to move the fence backwards, re-point it, delete or truncate it. */
  public static final String SQLSTATE_FENCE_BACKWARDS = "ZF002";

  /**
   * SQLSTATE of a write the enforcement trigger cannot check: a write to a strictly enforced table
   * that carries no fencing token, or a {@code TRUNCATE} of an enforced table (refused always on
   * strict tables, and on lenient ones when it carries a token).
   */
  public static final String SQLSTATE_NO_TOKEN = "ZF003";

  /**
   * SQLSTATE of a JDBC call refused inside the JVM because the scope's lease is already known to be
   * lost (expired, taken over, superseded or released): nothing was sent to the database. Raised by
   * fencing-jdbc only, never by the database; like {@link #SQLSTATE_STALE_TOKEN} it means "you are
   * no longer the holder" and is not transient.
   */
  public static final String SQLSTATE_LEASE_LOST = "ZF004";

  /**
   * A function in the fence schema that returns the {@link #CONTRACT_VERSION} the migrations
   * installed there. Calling it through {@link #contractQuery} tells a client whether the schema it
   * was configured with is a migrated fence schema (SQLSTATE {@code 3F000} or {@code 42883} when it
   * is not) and whether the migrations are recent enough.
   */
  public static final String CONTRACT_FUNCTION = "fence_contract";

  /**
   * The version of this contract: raised whenever the SQL the migrations install changes in a way
   * that {@code fencing-jdbc} relies on. Version 3: tokens compared per resource ({@value
   * #RESOURCE_COLUMN}), {@code TRUNCATE} refused, no per-transaction marker. Version 4: every
   * PostgreSQL registration carries the fence epoch (the server's WAL timeline, {@code
   * fence_epoch()}), and a registration of an older epoch is refused.
   */
  public static final int CONTRACT_VERSION = 4;

  /** The longest identifier PostgreSQL keeps without truncating it. */
  public static final int MAX_IDENTIFIER_LENGTH = 63;

  private static final Pattern IDENTIFIER =
      Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0," + (MAX_IDENTIFIER_LENGTH - 1) + "}");

  private FenceSchema() {}

  /**
   * Checks that {@code value} is a plain identifier: a letter or underscore, then letters, digits
   * or underscores, at most {@value #MAX_IDENTIFIER_LENGTH} characters.
   *
   * @param what what the value is, for the message
   * @param value the value to check
   * @return {@code value}
   * @throws IllegalArgumentException naming {@code what} and the value if it is not a plain
   *     identifier (including {@code null})
   */
  public static String requireIdentifier(String what, String value) {
    if (!isIdentifier(value)) {
      throw new IllegalArgumentException(
          what
              + " must be a plain identifier [A-Za-z_][A-Za-z0-9_]* of at most "
              + MAX_IDENTIFIER_LENGTH
              + " characters, got "
              + describe(value));
    }
    return value;
  }

  /**
   * Checks a table name, {@code table} or {@code schema.table}, each part a plain identifier.
   *
   * @param value the table name
   * @return {@code value}
   * @throws IllegalArgumentException naming the value if it is not valid (including {@code null})
   */
  public static String requireTableName(String value) {
    if (value == null) {
      throw new IllegalArgumentException("table name must not be null");
    }
    int dot = value.indexOf('.');
    boolean ok =
        dot < 0
            ? isIdentifier(value)
            : isIdentifier(value.substring(0, dot)) && isIdentifier(value.substring(dot + 1));
    if (!ok) {
      throw new IllegalArgumentException(
          "table name must be table or schema.table, each part a plain identifier"
              + " [A-Za-z_][A-Za-z0-9_]* of at most "
              + MAX_IDENTIFIER_LENGTH
              + " characters, got "
              + describe(value));
    }
    return value;
  }

  /**
   * Quotes a validated name part by part: {@code a.b} becomes {@code "a"."b"}.
   *
   * @param validatedName a name accepted by {@link #requireTableName} or {@link #requireIdentifier}
   * @return the quoted name
   * @throws IllegalArgumentException if the name is not valid
   */
  public static String quote(String validatedName) {
    requireTableName(validatedName);
    StringBuilder sb = new StringBuilder();
    for (String part : validatedName.split("\\.", -1)) {
      if (sb.length() > 0) {
        sb.append('.');
      }
      sb.append('"').append(part).append('"');
    }
    return sb.toString();
  }

  /**
   * The quoted, schema-qualified fence table of a fence schema.
   *
   * @param schema the fence schema
   * @return {@code "schema".fence}
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   */
  public static String fenceTable(String schema) {
    return quote(requireIdentifier("fence schema", schema)) + "." + FENCE_TABLE;
  }

  /**
   * The read-only query that returns the contract version installed in a fence schema: {@code
   * SELECT "schema".fence_contract()}. It fails with SQLSTATE {@code 3F000} if the schema does not
   * exist and {@code 42883} if it exists but was not migrated (or by migrations older than version
   * 3).
   *
   * @param schema the fence schema
   * @return the query
   * @throws IllegalArgumentException if {@code schema} is not a plain identifier
   */
  public static String contractQuery(String schema) {
    return "SELECT "
        + quote(requireIdentifier("fence schema", schema))
        + "."
        + CONTRACT_FUNCTION
        + "()";
  }

  /**
   * The read-only query that lists every schema of the database holding a {@value
   * #CONTRACT_FUNCTION}{@code ()} function, i.e. every migrated fence schema, by name: what to name
   * in an error when the configured schema is not one of them.
   *
   * @return the query; one column, the schema name, sorted
   */
  public static String fenceSchemasQuery() {
    return "SELECT n.nspname FROM pg_catalog.pg_proc p"
        + " JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace"
        + " WHERE p.proname = '"
        + CONTRACT_FUNCTION
        + "' AND p.pronargs = 0 ORDER BY 1";
  }

  private static boolean isIdentifier(String value) {
    return value != null && IDENTIFIER.matcher(value).matches();
  }

  private static String describe(String value) {
    return value == null ? "null" : "'" + value + "'";
  }
}
