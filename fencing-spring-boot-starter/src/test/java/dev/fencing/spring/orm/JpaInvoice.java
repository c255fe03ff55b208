package dev.fencing.spring.orm;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;
import jakarta.persistence.SequenceGenerator;
import jakarta.persistence.Table;

/**
 * An invoice as a JPA entity with a SEQUENCE id: Hibernate inserts it at the flush, which is the
 * commit unless the code flushes before.
 */
@Entity
@Table(name = "jpa_invoices")
public class JpaInvoice {

  @Id
  @GeneratedValue(strategy = GenerationType.SEQUENCE, generator = "invoices")
  @SequenceGenerator(name = "invoices", sequenceName = "jpa_invoices_seq", allocationSize = 1)
  private Long id;

  @Column(name = "customer_id")
  private long customerId;

  @Column(name = "amount_cents")
  private int amountCents;

  protected JpaInvoice() {}

  public JpaInvoice(long customerId, int amountCents) {
    this.customerId = customerId;
    this.amountCents = amountCents;
  }
}
