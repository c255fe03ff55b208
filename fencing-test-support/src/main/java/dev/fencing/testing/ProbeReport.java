package dev.fencing.testing;

import dev.fencing.testing.internal.TableSnapshots.Table;
import dev.fencing.testing.internal.TableSnapshots.TableChange;
import java.util.List;
import java.util.Optional;

/**
 * What a {@link StaleWriterProbe} found: nothing when the code is fenced, otherwise one finding per
 * problem (a run that failed or was not refused, each table the stale run changed, a lease left
 * believed held).
 */
public final class ProbeReport {

  private final String resource;
  private final List<Table> tables;
  private final List<String> findings;
  private final List<TableChange> changes;
  private final List<String> sql;
  private final Optional<Throwable> staleRunThrew;

  ProbeReport(
      String resource,
      List<Table> tables,
      List<String> findings,
      List<TableChange> changes,
      List<String> sql,
      Optional<Throwable> staleRunThrew) {
    this.resource = resource;
    this.tables = List.copyOf(tables);
    this.findings = List.copyOf(findings);
    this.changes = List.copyOf(changes);
    this.sql = List.copyOf(sql);
    this.staleRunThrew = staleRunThrew;
  }

  /** {@return whether the code is fenced: no finding} */
  public boolean fenced() {
    return findings.isEmpty();
  }

  /** {@return the findings, each a paragraph saying what is wrong and what to do} */
  public List<String> findings() {
    return findings;
  }

  /** {@return the names ({@code schema.table}) of the tables the stale run changed} */
  public List<String> changedTables() {
    return changes.stream().map(c -> c.table().qualified()).toList();
  }

  /** {@return the names of the tables the probe compared, fenced or not} */
  public List<String> probedTables() {
    return tables.stream().map(Table::qualified).toList();
  }

  /**
   * {@return the SQL the {@link dev.fencing.jdbc.FencedDataSource} sent during the stale run, if
   * its pool is a {@link RecordingDataSource}; otherwise empty}
   */
  public List<String> staleRunSql() {
    return sql;
  }

  /** {@return what the stale run threw, if anything} */
  public Optional<Throwable> staleRunThrew() {
    return staleRunThrew;
  }

  /** {@return the report as text, as the probe's assertion message} */
  public String describe() {
    if (fenced()) {
      return "fenced: the stale holder's run on \""
          + resource
          + "\" was refused, changed none of "
          + tables.size()
          + " tables, and the successor's run worked";
    }
    StringBuilder out =
        new StringBuilder("not fenced: the stale-writer probe (resource \"")
            .append(resource)
            .append("\", tables ")
            .append(probedTables())
            .append(") found ")
            .append(findings.size())
            .append(findings.size() == 1 ? " problem:" : " problems:");
    int n = 1;
    for (String finding : findings) {
      out.append("\n  ").append(n++).append(". ").append(finding);
    }
    return out.toString();
  }

  @Override
  public String toString() {
    return describe();
  }
}
