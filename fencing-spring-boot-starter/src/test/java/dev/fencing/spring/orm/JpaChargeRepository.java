package dev.fencing.spring.orm;

import org.springframework.data.jpa.repository.JpaRepository;

/** A Spring Data JPA repository, as Boot's auto-configuration creates it. */
public interface JpaChargeRepository extends JpaRepository<JpaCharge, Long> {}
