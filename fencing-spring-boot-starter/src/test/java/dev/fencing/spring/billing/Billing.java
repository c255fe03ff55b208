package dev.fencing.spring.billing;

import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Charges one customer in one transaction, as an ordinary JdbcTemplate DAO would. */
@Service
public class Billing {

  private final JdbcTemplate jdbc;
  private final ChargeHook hook;

  public Billing(JdbcTemplate jdbc, ChargeHook hook) {
    this.jdbc = jdbc;
    this.hook = hook;
  }

  @Transactional
  public void charge(long customerId) {
    hook.beforeCharge(customerId);
    jdbc.update("INSERT INTO charges (customer_id, amount_cents) VALUES (?, 1000)", customerId);
  }
}
