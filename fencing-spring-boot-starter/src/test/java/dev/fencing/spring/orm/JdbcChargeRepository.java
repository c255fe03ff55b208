package dev.fencing.spring.orm;

import org.springframework.data.repository.ListCrudRepository;

/** A Spring Data JDBC repository, as Boot's auto-configuration creates it. */
public interface JdbcChargeRepository extends ListCrudRepository<JdbcCharge, Long> {}
