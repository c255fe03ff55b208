package dev.fencing.spring.billing;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Component;
import org.springframework.transaction.annotation.Transactional;

/** The wrong order: a transaction (with its connection) opened around the fenced job. */
@Component
public class WrongOrderCaller {

  private final JdbcTemplate jdbc;
  private final BillingJob job;

  public WrongOrderCaller(JdbcTemplate jdbc, BillingJob job) {
    this.jdbc = jdbc;
    this.job = job;
  }

  @Transactional
  public void billInsideTransaction() {
    jdbc.queryForObject("SELECT 1", Integer.class);
    job.billNightly();
  }
}
