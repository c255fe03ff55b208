package dev.fencing.spring.orm;

import org.springframework.data.annotation.Id;
import org.springframework.data.relational.core.mapping.Column;
import org.springframework.data.relational.core.mapping.Table;

/** A charge as a Spring Data JDBC aggregate. */
@Table("jdbc_charges")
public class JdbcCharge {

  @Id private Long id;

  @Column("customer_id")
  private final long customerId;

  @Column("amount_cents")
  private final int amountCents;

  public JdbcCharge(long customerId, int amountCents) {
    this.customerId = customerId;
    this.amountCents = amountCents;
  }

  public Long getId() {
    return id;
  }

  void setId(Long id) {
    this.id = id;
  }
}
