package dev.fencing.spring.readme;

import java.util.List;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/** The service the README's example job calls. */
@Service
public class InvoiceService {

  private final JdbcTemplate jdbc;

  public InvoiceService(JdbcTemplate jdbc) {
    this.jdbc = jdbc;
  }

  public List<Long> dueCustomers() {
    return jdbc.queryForList(
        "SELECT id FROM customers c WHERE NOT EXISTS"
            + " (SELECT 1 FROM charges WHERE customer_id = c.id) ORDER BY id",
        Long.class);
  }

  @Transactional
  public void charge(long customer) {
    jdbc.update("INSERT INTO charges (customer_id, amount_cents) VALUES (?, 1000)", customer);
  }
}
