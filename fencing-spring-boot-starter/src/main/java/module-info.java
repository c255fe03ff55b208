/**
 * Spring Boot auto-configuration for fencing: the fenced {@code DataSource}, the fenced lease
 * manager, {@code @Fenced} methods, stale-write exception translation, the fence migrations.
 *
 * <p>The public API is the package {@code dev.fencing.spring}. The module is open: Spring creates
 * and proxies its configuration classes and beans reflectively.
 */
open module dev.fencing.spring {
  requires transitive dev.fencing.jdbc;
  requires transitive dev.fencing.migrations;
  requires transitive dev.fencing.schema;
  requires static transitive dev.fencing.micrometer;
  requires static transitive dev.fencing.shedlock;
  requires static transitive dev.fencing.testing;
  requires static transitive micrometer.core;
  requires static transitive net.javacrumbs.shedlock.core;
  requires static spring.boot.actuator; // the optional health indicator
  requires transitive spring.boot.autoconfigure;
  requires transitive spring.boot;
  requires transitive spring.context;
  requires transitive spring.core;
  requires transitive spring.beans;
  requires transitive spring.aop;
  requires transitive spring.jdbc;
  requires transitive spring.tx;
  requires org.slf4j;

  exports dev.fencing.spring;
}
