package dev.fencing.jdbc.internal;

import dev.fencing.schema.DatabaseProduct;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.Predicate;
import org.jooq.Condition;
import org.jooq.DSLContext;
import org.jooq.Field;
import org.jooq.FieldOrRow;
import org.jooq.FieldOrRowOrSelect;
import org.jooq.Name;
import org.jooq.Query;
import org.jooq.Row;
import org.jooq.SQLDialect;
import org.jooq.Select;
import org.jooq.SelectFieldOrAsterisk;
import org.jooq.Table;
import org.jooq.TableField;
import org.jooq.conf.ParseNameCase;
import org.jooq.conf.ParseUnknownFunctions;
import org.jooq.conf.RenderNameCase;
import org.jooq.conf.RenderQuotedNames;
import org.jooq.conf.Settings;
import org.jooq.impl.DSL;
import org.jooq.impl.DefaultConfiguration;
import org.jooq.impl.QOM;
import org.jooq.impl.TableImpl;

/**
 * Parses one SQL string with jOOQ and decides: pass through, a template of the guarded statement,
 * or a refusal. Works on jOOQ's query object model only; the guarded statement is rendered by jOOQ
 * from the model, so no fragment of the caller's text (comments included) is ever spliced next to a
 * guard.
 */
final class DmlRewriter implements PlainDmlGuard.Planner {

  private static final String TOKEN_COLUMN = "fence_token";
  private static final String RESOURCE_COLUMN = "fence_resource";

  private final DSLContext dsl;
  private final FaithfulRendering rendering;
  private final FencedTables tables;
  private final WriteScreen screen;
  private final GuardedSql guardedSql;
  private final String marker;
  private final Field<Object> tokenSlot;
  private final Field<Object> resourceSlot;
  private final Field<Object> leaseSlot;
  private final Field<Object> idleTimeoutSlot;

  private final boolean triggerMode;
  private final Predicate<FencedTables.Table> targets;
  private final Map<FencedTables.Write, Map<FencedTables.Relation, FencedTables.Table>> reaching;

  DmlRewriter(String fenceSchema, FencedTables tables, boolean triggerMode) {
    this.tables = tables;
    this.triggerMode = triggerMode;
    // In trigger mode the trigger checks every row of the tables that have it (and all their
    // inheritors): only the others need a guard.
    this.targets = triggerMode ? table -> !table.hasEnforcementTrigger() : table -> true;
    this.screen =
        new WriteScreen(tables, targets, WriteScreen.Folding.POSTGRES, "it cannot be guarded");
    this.reaching = new java.util.EnumMap<>(FencedTables.Write.class);
    for (FencedTables.Write write : FencedTables.Write.values()) {
      reaching.put(write, tables.reaching(write, targets));
    }
    this.guardedSql = GuardedSql.of(DatabaseProduct.POSTGRESQL, fenceSchema);
    Settings settings =
        new Settings()
            .withParseDialect(SQLDialect.POSTGRES)
            .withParseNameCase(ParseNameCase.AS_IS)
            .withParseUnknownFunctions(ParseUnknownFunctions.IGNORE)
            .withRenderNameCase(RenderNameCase.AS_IS)
            .withRenderQuotedNames(RenderQuotedNames.EXPLICIT_DEFAULT_UNQUOTED)
            .withRenderFormatted(false);
    this.rendering = new FaithfulRendering();
    this.dsl =
        DSL.using(new DefaultConfiguration().set(SQLDialect.POSTGRES).set(settings).set(rendering));
    rendering.renderWith(dsl);
    byte[] random = new byte[8];
    new SecureRandom().nextBytes(random);
    this.marker = "fencingslot" + HexFormat.of().formatHex(random);
    this.tokenSlot = DSL.field(DSL.unquotedName(marker + SqlTemplate.TOKEN));
    this.resourceSlot = DSL.field(DSL.unquotedName(marker + SqlTemplate.RESOURCE));
    this.leaseSlot = DSL.field(DSL.unquotedName(marker + SqlTemplate.LEASE));
    this.idleTimeoutSlot = DSL.field(DSL.unquotedName(marker + SqlTemplate.IDLE_TIMEOUT));
  }

  /** Why a statement cannot be guarded. */
  private static final class Refusal extends Exception {
    private static final long serialVersionUID = 1L;

    Refusal(String reason) {
      super(reason, null, false, false);
    }
  }

  /** Decides for one SQL string; never throws for bad SQL (the database reports that). */
  @Override
  public PlainDmlGuard.Plan plan(String sql) {
    if (tables.isEmpty()) {
      return PlainDmlGuard.PassThrough.INSTANCE;
    }
    if (sql.toLowerCase(Locale.ROOT).contains(marker)) {
      return refused(sql, "it contains the rewriter's internal marker");
    }
    if (SqlLexer.readingDependsOnStringSetting(sql)) {
      return screened(
          sql,
          "it has a backslash in a '...' literal (or does not lex), which PostgreSQL reads"
              + " differently when standard_conforming_strings is off (bind the value as a"
              + " parameter, or write E'...')");
    }
    String parsed = FaithfulRendering.respell(sql);
    Query[] queries;
    try {
      queries = dsl.parser().parse(parsed).queries();
    } catch (RuntimeException | StackOverflowError e) {
      return screened(
          sql,
          e instanceof org.jooq.impl.ParserException parser
              ? "jOOQ's parser cannot read it (" + parserProblem(parser, parsed.equals(sql)) + ")"
              : "jOOQ's parser fails on it");
    }
    if (queries.length == 0) {
      return PlainDmlGuard.PassThrough.INSTANCE;
    }
    try {
      if (queries.length > 1) {
        for (Query query : queries) {
          if (rewrite(sql, query, new SafeExpressions(rendering)) != null) {
            throw new Refusal("it is " + queries.length + " statements in one string");
          }
        }
        return PlainDmlGuard.PassThrough.INSTANCE;
      }
      SafeExpressions check = new SafeExpressions(rendering);
      Query rewritten = rewrite(sql, queries[0], check);
      if (rewritten == null) {
        return PlainDmlGuard.PassThrough.INSTANCE;
      }
      String rendered = dsl.render(rewritten);
      refuseIf(
          SqlLexer.readingDependsOnStringSetting(rendered),
          "jOOQ would render it with a backslash in a '...' literal, which PostgreSQL reads"
              + " differently when standard_conforming_strings is off");
      refuseIf(
          rendered.indexOf(FaithfulRendering.NO_ESCAPE) >= 0,
          "jOOQ read ESCAPE '' somewhere else than after LIKE");
      refuseIf(
          occurrences(rendered.toLowerCase(Locale.ROOT), "cast(") != check.casts(),
          "jOOQ would render it with a cast it does not have, which may change its meaning");
      checkParameterOrder(parsed, rendered, dsl.extractBindValues(queries[0]).size());
      return SqlTemplate.split(rendered, marker);
    } catch (Refusal refusal) {
      return refused(sql, refusal.getMessage());
    } catch (RuntimeException | StackOverflowError e) {
      return refused(sql, "the rewriter failed on it (" + e + ")");
    }
  }

  /**
   * Returns the guarded form of {@code query}, or null if it writes no fenced table.
   *
   * @throws Refusal if it writes, or may write, a fenced table in a shape that cannot be guarded
   */
  private Query rewrite(String sql, Query query, SafeExpressions check) throws Refusal {
    if (query instanceof QOM.UpdateReturning<?> returning) {
      QOM.Update<?> update = rewriteUpdate(sql, returning.$update(), check);
      if (update == null) {
        return null;
      }
      requireSafe(check, "RETURNING", returning.$returning());
      return returning.$update(update);
    }
    if (query instanceof QOM.DeleteReturning<?> returning) {
      QOM.Delete<?> delete = rewriteDelete(sql, returning.$delete(), check);
      if (delete == null) {
        return null;
      }
      requireSafe(check, "RETURNING", returning.$returning());
      return returning.$delete(delete);
    }
    if (query instanceof QOM.InsertReturning<?> returning) {
      QOM.Insert<?> insert = rewriteInsert(sql, returning.$insert(), check);
      if (insert == null) {
        return null;
      }
      requireSafe(check, "RETURNING", returning.$returning());
      return returning.$insert(insert);
    }
    if (query instanceof QOM.Update<?> update) {
      return rewriteUpdate(sql, update, check);
    }
    if (query instanceof QOM.Delete<?> delete) {
      return rewriteDelete(sql, delete, check);
    }
    if (query instanceof QOM.Insert<?> insert) {
      return rewriteInsert(sql, insert, check);
    }
    if (query instanceof Select<?> select) {
      if (select.$with() != null) {
        screen(sql, "it is a SELECT with a WITH clause (a CTE may write)");
      }
      return null;
    }
    screen(sql, "it is a " + kind(query) + " statement the rewriter does not guard");
    return null;
  }

  private QOM.Update<?> rewriteUpdate(String sql, QOM.Update<?> update, SafeExpressions check)
      throws Refusal {
    Target target = target(update.$table(), FencedTables.Write.UPDATE_OR_DELETE);
    if (target == null) {
      if (update.$with() != null) {
        screen(sql, "it has a WITH clause");
      }
      return null;
    }
    refuseIf(update.$with() != null, "it has a WITH clause (a CTE may write elsewhere)");
    refuseIf(!update.$from().isEmpty(), "it is an UPDATE ... FROM (a join)");
    refuseIf(!update.$orderBy().isEmpty() || update.$limit() != null, "it has ORDER BY or LIMIT");
    Map<FieldOrRow, FieldOrRowOrSelect> set = new LinkedHashMap<>();
    for (Map.Entry<? extends FieldOrRow, ? extends FieldOrRowOrSelect> assignment :
        update.$set().entrySet()) {
      requireNotFenceColumns(assignment.getKey());
      if (!(assignment.getValue() instanceof QOM.Default<?>)) {
        requireSafe(check, "SET", assignment.getValue());
      }
      set.put(assignment.getKey(), assignment.getValue());
    }
    requireSafe(check, "WHERE", update.$where());
    set.put(DSL.field(DSL.unquotedName(TOKEN_COLUMN)), tokenSlot);
    if (target.table().hasResourceColumn()) {
      set.put(DSL.field(DSL.unquotedName(RESOURCE_COLUMN)), resourceSlot);
    }
    return update.$set(set).$where(guarded(update.$where(), target, false));
  }

  private QOM.Delete<?> rewriteDelete(String sql, QOM.Delete<?> delete, SafeExpressions check)
      throws Refusal {
    Target target = target(delete.$from(), FencedTables.Write.UPDATE_OR_DELETE);
    if (target == null) {
      if (delete.$with() != null) {
        screen(sql, "it has a WITH clause");
      }
      return null;
    }
    refuseIf(delete.$with() != null, "it has a WITH clause (a CTE may write elsewhere)");
    refuseIf(!delete.$using().isEmpty(), "it is a DELETE ... USING (a join)");
    refuseIf(!delete.$orderBy().isEmpty() || delete.$limit() != null, "it has ORDER BY or LIMIT");
    requireSafe(check, "WHERE", delete.$where());
    return delete.$where(guarded(delete.$where(), target, false));
  }

  private QOM.Insert<?> rewriteInsert(String sql, QOM.Insert<?> insert, SafeExpressions check)
      throws Refusal {
    String parsedText = FaithfulRendering.respell(sql);
    Target target =
        target(
            insert.$into(),
            insert.$onDuplicateKeyUpdate() || !insert.$updateSet().isEmpty()
                ? FencedTables.Write.UPDATE_OR_DELETE
                : FencedTables.Write.INSERT);
    if (target == null) {
      if (insert.$with() != null) {
        screen(sql, "it has a WITH clause");
      }
      return null;
    }
    refuseIf(insert.$with() != null, "it has a WITH clause (a CTE may write elsewhere)");
    refuseIf(
        !insert.$defaultValues()
            && (insert.$columns().isEmpty()
                || !insert.$columns().stream()
                    .allMatch(column -> column instanceof TableField<?, ?>)),
        "it does not name its columns");
    refuseIf(
        insert.$select() == null && !insert.$defaultValues() && insert.$values().size() != 1,
        "it inserts "
            + insert.$values().size()
            + " rows in one VALUES list, and PostgreSQL types the values of a guarded form"
            + " (INSERT ... SELECT) differently from a VALUES list (insert one row per statement"
            + " in a JDBC batch, which is sent in one round trip)");
    java.util.Set<String> named = new java.util.HashSet<>();
    for (Field<?> column : insert.$columns()) {
      requireNotFenceColumns(column);
      refuseIf(!named.add(fold(column.getUnqualifiedName())), "it names a column twice");
    }
    // jOOQ keeps one of two same-named columns (and its value): PostgreSQL rejects the statement
    refuseIf(
        !insert.$columns().isEmpty() && columnsAsWritten(parsedText) != insert.$columns().size(),
        "it names a column twice");
    requireSafe(check, "ON CONFLICT", insert.$onConflict());
    requireSafe(check, "ON CONFLICT ... WHERE", insert.$onConflictWhere());
    requireSafe(check, "DO UPDATE SET", insert.$updateSet());
    requireSafe(check, "DO UPDATE ... WHERE", insert.$updateWhere());
    for (FieldOrRow column : insert.$updateSet().keySet()) {
      requireNotFenceColumns(column);
    }

    List<Field<?>> columns = new ArrayList<>();
    List<SelectFieldOrAsterisk> values = new ArrayList<>();
    Select<?> source = insert.$select();
    if (source != null) {
      // INSERT ... SELECT: the guard joins the select's own WHERE, so that its select list
      // stays where PostgreSQL types it by the target columns
      String reason = check.unsafe(source);
      refuseIf(reason != null, "its SELECT has " + reason);
      refuseIf(
          source.$distinct() || !source.$groupBy().isEmpty() || source.$having() != null,
          "it is an INSERT ... SELECT with DISTINCT, GROUP BY or HAVING, which a condition in"
              + " its WHERE does not stop from producing rows");
      columns.addAll(insert.$columns());
      values.addAll(source.$select());
    } else if (!insert.$defaultValues()) {
      Row row = insert.$values().get(0);
      requireSafe(check, "VALUES", withoutDefaults(row.$fields()));
      refuseIf(
          row.size() != insert.$columns().size(), "its VALUES and column list differ in length");
      // DEFAULT in VALUES: leaving the column out gives it the same default
      for (int i = 0; i < row.size(); i++) {
        if (!(row.field(i) instanceof QOM.Default<?>)) {
          columns.add(insert.$columns().get(i));
          values.add(row.field(i));
        }
      }
    }
    Field<Object> tokenColumn = DSL.field(DSL.unquotedName(TOKEN_COLUMN));
    Field<Object> resourceColumn = DSL.field(DSL.unquotedName(RESOURCE_COLUMN));
    columns.add(tokenColumn);
    values.add(tokenSlot);
    if (target.table().hasResourceColumn()) {
      columns.add(resourceColumn);
      values.add(resourceSlot);
    }
    Select<?> guardedSource =
        source == null
            ? DSL.select(values).where(fenceHeld())
            : DSL.select(values)
                .from(source.$from())
                .where(
                    source.$where() == null ? fenceHeld() : DSL.and(source.$where(), fenceHeld()));
    QOM.Insert<?> guarded =
        insert.$defaultValues(false).$values(List.of()).$columns(columns).$select(guardedSource);
    if (insert.$onDuplicateKeyUpdate()) {
      Map<FieldOrRow, FieldOrRowOrSelect> set = new LinkedHashMap<>(insert.$updateSet());
      set.put(tokenColumn, DSL.excluded(tokenColumn));
      if (target.table().hasResourceColumn()) {
        set.put(resourceColumn, DSL.excluded(resourceColumn));
      }
      guarded =
          guarded.$updateSet(set).$updateWhere(rowGuarded(insert.$updateWhere(), target, true));
    }
    return guarded;
  }

  /** A fenced table named as a statement's target, and the name that qualifies its columns. */
  private record Target(FencedTables.Table table, Name qualifier) {}

  /**
   * Returns the fenced table {@code table} names, or null if it is not fenced or, in trigger mode,
   * has the enforcement trigger (which then checks every row the plain statement writes).
   *
   * @throws Refusal if it is not a plain table, or jOOQ may have read the target differently from
   *     PostgreSQL: an unfenced target whose alias is the name of a fenced table (jOOQ reads {@code
   *     UPDATE ONLY items} as the table {@code ONLY} aliased {@code items})
   */
  private Target target(Table<?> table, FencedTables.Write write) throws Refusal {
    Name qualifier = null;
    Table<?> named = table;
    if (table instanceof QOM.TableAlias<?> alias) {
      qualifier = alias.$alias();
      named = alias.$table();
    }
    Name name = named.getQualifiedName();
    if (!(named instanceof TableImpl<?>)) {
      throw new Refusal("its target " + named + " is not a plain table");
    }
    Name[] parts = name.parts();
    String relation = fold(parts[parts.length - 1]);
    String schema = parts.length >= 2 ? fold(parts[parts.length - 2]) : null;
    if (parts.length > 3) {
      throw new Refusal("its target " + named + " has more than three name parts");
    }
    FencedTables.Table fenced = tables.resolve(schema, relation).orElse(null);
    if (fenced == null || !targets.test(fenced)) {
      FencedTables.Table reached = writesInto(schema, relation, write);
      if (reached != null) {
        throw new Refusal(
            "writing "
                + named
                + " may also write rows of the fenced table "
                + reached
                + " (through a cascading foreign key, a rule or view, or a table that inherits from"
                + " it), which a guard on "
                + named
                + " does not cover");
      }
    }
    if (fenced == null) {
      if (qualifier != null && tables.resolve(null, fold(qualifier)).isPresent()) {
        throw new Refusal(
            "its target "
                + named
                + " has the alias "
                + qualifier
                + ", the name of a fenced table, which PostgreSQL may read as the target");
      }
      return null;
    }
    if (triggerMode && fenced.hasEnforcementTrigger()) {
      return null;
    }
    return new Target(fenced, qualifier == null ? parts[parts.length - 1] : qualifier);
  }

  /**
   * The fenced table a write of the relation may also write (cascade, rule, inheritance), if any;
   * an unqualified name counts in every schema.
   */
  private FencedTables.Table writesInto(String schema, String name, FencedTables.Write write) {
    for (Map.Entry<FencedTables.Relation, FencedTables.Table> entry :
        reaching.get(write).entrySet()) {
      FencedTables.Relation reacher = entry.getKey();
      if (reacher.name().equals(name) && (schema == null || reacher.schema().equals(schema))) {
        return entry.getValue();
      }
    }
    return null;
  }

  /**
   * The name as PostgreSQL stores it: quoted names exactly, unquoted ones in lower case (ASCII
   * only), both cut to 63 bytes.
   */
  private static String fold(Name part) {
    String text = part.last();
    if (text == null) {
      // no name the server could resolve: never treat it as some other (unfenced) table
      throw new IllegalArgumentException("a name without a last part: " + part);
    }
    if (part.quoted() == Name.Quoted.QUOTED) {
      return WriteScreen.truncateName(text);
    }
    StringBuilder folded = new StringBuilder(text.length());
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      folded.append(c >= 'A' && c <= 'Z' ? (char) (c + ('a' - 'A')) : c);
    }
    return WriteScreen.truncateName(folded.toString());
  }

  private Condition guarded(Condition where, Target target, boolean qualified) {
    return DSL.and(rowGuarded(where, target, qualified), fenceHeld());
  }

  private Condition rowGuarded(Condition where, Target target, boolean qualified) {
    Field<Object> token =
        DSL.field(
            qualified
                ? DSL.name(target.qualifier(), DSL.unquotedName(TOKEN_COLUMN))
                : DSL.unquotedName(TOKEN_COLUMN));
    Condition rowGuard;
    if (target.table().hasResourceColumn()) {
      Field<Object> resource =
          DSL.field(
              qualified
                  ? DSL.name(target.qualifier(), DSL.unquotedName(RESOURCE_COLUMN))
                  : DSL.unquotedName(RESOURCE_COLUMN));
      rowGuard =
          DSL.condition(
              GuardedSql.rowGuard("{0}", "{1}", "{2}", "{3}"),
              token,
              tokenSlot,
              resource,
              resourceSlot);
    } else {
      rowGuard = DSL.condition(GuardedSql.rowGuard("{0}", "{1}", null, null), token, tokenSlot);
    }
    return where == null ? rowGuard : DSL.and(where, rowGuard);
  }

  /** The fence check of {@link GuardedSql}, with the registration's slots for its literals. */
  private Condition fenceHeld() {
    return DSL.condition(
        guardedSql.fenceCheck("fencing_fence", "{0}", "{1}", "{2}", "{3}"),
        resourceSlot,
        tokenSlot,
        leaseSlot,
        idleTimeoutSlot);
  }

  /**
   * Checks that the rewrite kept the caller's parameters in their order: parses again with numbered
   * bind values and expects the same SQL with the numbers in sequence.
   */
  private void checkParameterOrder(String sql, String rendered, int parameters) throws Refusal {
    if (parameters == 0) {
      return;
    }
    Object[] numbers = new Object[parameters];
    for (int i = 0; i < parameters; i++) {
      numbers[i] = i;
    }
    Query numbered =
        rewrite(sql, dsl.parser().parseQuery(sql, numbers), new SafeExpressions(rendering));
    List<Object> order = dsl.extractBindValues(numbered);
    boolean inOrder = order.size() == parameters && dsl.render(numbered).equals(rendered);
    for (int i = 0; inOrder && i < parameters; i++) {
      inOrder = Integer.valueOf(i).equals(order.get(i));
    }
    refuseIf(!inOrder, "the rewriter cannot keep its ? parameters in their order");
  }

  private void requireNotFenceColumns(FieldOrRow target) throws Refusal {
    List<? extends Field<?>> fields =
        target instanceof Row row ? row.$fields() : List.of((Field<?>) target);
    for (Field<?> field : fields) {
      refuseIf(!(field instanceof TableField<?, ?>), "it assigns to " + field + ", not a column");
      String column = fold(field.getUnqualifiedName());
      refuseIf(
          column.equals(TOKEN_COLUMN) || column.equals(RESOURCE_COLUMN),
          "it sets " + column + " itself, which only the guard may set");
    }
  }

  /**
   * How many columns the column list of the INSERT in {@code sql} has as written: the top-level
   * commas of the first parenthesized list after {@code INTO name [AS alias]}, plus one; -1 if the
   * text cannot tell.
   */
  private static int columnsAsWritten(String sql) {
    List<int[]> tokens = SqlLexer.tokens(sql);
    if (tokens == null) {
      return -1;
    }
    int i = 0;
    while (i < tokens.size() && !token(sql, tokens.get(i)).equalsIgnoreCase("into")) {
      i++;
    }
    i++;
    while (i < tokens.size() && !token(sql, tokens.get(i)).equals("(")) {
      String name = token(sql, tokens.get(i));
      if (!name.equals(".")
          && !Character.isLetter(name.charAt(0))
          && name.charAt(0) != '"'
          && name.charAt(0) != '_') {
        return -1;
      }
      i++;
    }
    int depth = 0;
    int columns = 1;
    for (i++; i < tokens.size(); i++) {
      String text = token(sql, tokens.get(i));
      if (text.equals("(")) {
        depth++;
      } else if (text.equals(")")) {
        if (depth-- == 0) {
          return columns;
        }
      } else if (text.equals(",") && depth == 0) {
        columns++;
      }
    }
    return -1;
  }

  private static String token(String sql, int[] span) {
    return sql.substring(span[0], span[1]);
  }

  private static List<Field<?>> withoutDefaults(List<? extends Field<?>> fields) {
    List<Field<?>> values = new ArrayList<>();
    for (Field<?> field : fields) {
      if (!(field instanceof QOM.Default<?>)) {
        values.add(field);
      }
    }
    return values;
  }

  private static void requireSafe(SafeExpressions check, String clause, Object part)
      throws Refusal {
    String reason = check.unsafe(part);
    if (reason != null) {
      throw new Refusal("its " + clause + " clause has " + reason);
    }
  }

  private static void refuseIf(boolean condition, String reason) throws Refusal {
    if (condition) {
      throw new Refusal(reason);
    }
  }

  /**
   * For a statement the rewriter does not understand: refuses it if its text names a fenced table
   * and a writing keyword, else lets it through.
   */
  private void screen(String sql, String reason) throws Refusal {
    String what = screen.mayWrite(sql);
    if (what != null) {
      throw new Refusal(reason + ", and it may write " + what);
    }
  }

  private PlainDmlGuard.Plan screened(String sql, String reason) {
    String what = screen.mayWrite(sql);
    return what != null
        ? refused(sql, reason + ", and it may write " + what)
        : PlainDmlGuard.PassThrough.INSTANCE;
  }

  /** Loads jOOQ's classes: throws {@link NoClassDefFoundError} if jOOQ cannot be read. */
  static void probe() {
    DSL.using(SQLDialect.POSTGRES).parser();
  }

  private static PlainDmlGuard.Refused refused(String sql, String reason) {
    return PlainDmlGuard.refused(sql, reason);
  }

  private static int occurrences(String text, String part) {
    int count = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + part.length())) {
      count++;
    }
    return count;
  }

  private static String kind(Query query) {
    String name = query.getClass().getSimpleName();
    return name.endsWith("Impl") ? name.substring(0, name.length() - 4) : name;
  }

  /** What jOOQ's parser expected, without its quote of the (possibly respelled) text. */
  private static String parserProblem(org.jooq.impl.ParserException e, boolean asWritten) {
    String message = firstLine(e.getMessage());
    int quote = message.indexOf(": [");
    message = quote < 0 ? message : message.substring(0, quote);
    // positions are in the text as parsed, which differs after a respelling
    return asWritten ? message + " at line " + e.line() + ", column " + e.column() : message;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "no message";
    }
    int newline = message.indexOf('\n');
    return newline < 0 ? message : message.substring(0, newline);
  }
}
