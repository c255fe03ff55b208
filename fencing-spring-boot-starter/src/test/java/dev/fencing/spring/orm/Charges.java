package dev.fencing.spring.orm;

import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** Charges one customer in one transaction, in the style the caller picks. */
@Service
public class Charges {

  /** How the charge is written. */
  public enum Style {
    /** {@code JdbcTemplate.update}. */
    JDBC_TEMPLATE,
    /** A Spring Data JPA repository's {@code save} (IDENTITY id: inserted at once). */
    JPA_REPOSITORY,
    /** {@code EntityManager.persist} of a SEQUENCE-id entity, inserted at the commit's flush. */
    JPA_FLUSH_AT_COMMIT,
    /** {@code EntityManager.persist} and {@code flush} in the service. */
    ENTITY_MANAGER_FLUSH,
    /** A Spring Data JDBC repository's {@code save}. */
    SPRING_DATA_JDBC
  }

  private final JdbcTemplate jdbc;
  private final JpaChargeRepository jpaCharges;
  private final JdbcChargeRepository jdbcCharges;
  private final LossHook hook;

  @PersistenceContext private EntityManager entityManager;

  public Charges(
      JdbcTemplate jdbc,
      JpaChargeRepository jpaCharges,
      JdbcChargeRepository jdbcCharges,
      LossHook hook) {
    this.jdbc = jdbc;
    this.jpaCharges = jpaCharges;
    this.jdbcCharges = jdbcCharges;
    this.hook = hook;
  }

  @Transactional
  public void charge(Style style, long customer) {
    hook.at(LossHook.Point.IN_TRANSACTION);
    write(style, customer);
    hook.at(LossHook.Point.AFTER_WRITE);
  }

  /**
   * Charges, then returns what PostgreSQL says the transaction's {@code
   * idle_in_transaction_session_timeout} is.
   */
  @Transactional
  public String chargeAndShowIdleTimeout(Style style, long customer) {
    write(style, customer);
    return jdbc.queryForObject("SHOW idle_in_transaction_session_timeout", String.class);
  }

  /** Saves new aggregates with Spring Data JDBC's {@code saveAll}; returns their ids. */
  @Transactional
  public java.util.List<Long> saveAllWithSpringDataJdbc(java.util.List<Long> customers) {
    return jdbcCharges
        .saveAll(customers.stream().map(c -> new JdbcCharge(c, 1000)).toList())
        .stream()
        .map(JdbcCharge::getId)
        .toList();
  }

  private void write(Style style, long customer) {
    switch (style) {
      case JDBC_TEMPLATE ->
          jdbc.update("INSERT INTO charges (customer_id, amount_cents) VALUES (?, 1000)", customer);
      case JPA_REPOSITORY -> jpaCharges.save(new JpaCharge(customer, 1000));
      case JPA_FLUSH_AT_COMMIT -> entityManager.persist(new JpaInvoice(customer, 1000));
      case ENTITY_MANAGER_FLUSH -> {
        entityManager.persist(new JpaInvoice(customer, 1000));
        entityManager.flush();
      }
      case SPRING_DATA_JDBC -> jdbcCharges.save(new JdbcCharge(customer, 1000));
    }
  }
}
