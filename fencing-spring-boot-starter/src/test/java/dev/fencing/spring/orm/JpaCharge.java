package dev.fencing.spring.orm;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** A charge as a JPA entity with an IDENTITY id: Hibernate inserts it when it is persisted. */
@Entity
@Table(name = "jpa_charges")
public class JpaCharge {

  @Id
  @GeneratedValue(strategy = GenerationType.IDENTITY)
  private Long id;

  @Column(name = "customer_id")
  private long customerId;

  @Column(name = "amount_cents")
  private int amountCents;

  protected JpaCharge() {}

  public JpaCharge(long customerId, int amountCents) {
    this.customerId = customerId;
    this.amountCents = amountCents;
  }

  public Long getId() {
    return id;
  }
}
