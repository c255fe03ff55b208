package dev.fencing.examples;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;

/** The no-configuration path: embedded PostgreSQL and Redis, as on a fresh machine. */
class EmbeddedServersTest {

  @Test
  void startsEmbeddedPostgresAndRedisBillsAndStopsThem() throws Exception {
    List<String> log = new ArrayList<>();
    String jdbcUrl;
    int redisPort;
    try (Servers servers =
        Servers.start(null, null, EmbeddedRedisServer.Source.PATH_OR_BUNDLED, log::add)) {
      jdbcUrl = servers.jdbcUrl();
      redisPort = Integer.parseInt(servers.redisUrl().replaceAll(".*:", ""));
      assertThat(log).anyMatch(l -> l.startsWith("embedded PostgreSQL on port"));
      assertThat(log).anyMatch(l -> l.startsWith("embedded Redis: "));

      try (var pool = servers.newPool("embedded-test", 4)) {
        BillingSchema schema = new BillingSchema(pool, "billing");
        schema.migrate();
        schema.seedCustomers(30);
        new BillingJob(
                pool,
                new JdbcBillingDao(BillingDatabase.POSTGRESQL, "billing"),
                new NoLockStrategy())
            .run("embedded", "2026-05");
        BillingStats stats = BillingStats.query(pool, "billing", "2026-05");
        assertThat(stats.charges()).isEqualTo(27);
        assertThat(stats.customersChargedTwice()).isZero();
      }
      RedissonClient redisson = servers.newRedisson();
      try {
        var bucket = redisson.getBucket("k", StringCodec.INSTANCE);
        bucket.set("v");
        assertThat(bucket.get()).isEqualTo("v");
      } finally {
        redisson.shutdown();
      }
    }
    assertThat(EmbeddedRedisServer.ping("127.0.0.1", redisPort, 200)).as("redis stopped").isFalse();
    final String url = jdbcUrl;
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> Servers.checkDatabase(url))
        .as("postgres stopped")
        .isInstanceOf(ServerException.class);
  }

  @Test
  void theDemoWithNoConfigurationRunsOnEmbeddedServersAndFencedChargesNobodyTwice() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status =
        App.execute(
            new String[] {"demo", "--customers", "200", "--ttl-ms", "1000", "--modes", "3,4"},
            Map.of(),
            new PrintStream(out, true, StandardCharsets.UTF_8),
            new PrintStream(err, true, StandardCharsets.UTF_8));
    String printed = out.toString(StandardCharsets.UTF_8);
    assertThat(status).as(err.toString(StandardCharsets.UTF_8)).isEqualTo(App.OK);
    assertThat(printed)
        .contains("starting embedded PostgreSQL", "starting embedded Redis")
        .containsPattern("(?m)^3 token \\+ heartbeat, no fencing +180 +\\d+ +[1-9]\\d* +0 +0$")
        .containsPattern("(?m)^4 fenced +180 +180 +0 +[1-9]\\d* +0$");
  }

  @Test
  void theBundledRedisIsTheFallbackWhenNoneIsOnPath() throws Exception {
    try (EmbeddedRedisServer redis =
        EmbeddedRedisServer.start(EmbeddedRedisServer.Source.BUNDLED)) {
      assertThat(redis.description()).startsWith("bundled");
      assertThat(EmbeddedRedisServer.ping("127.0.0.1", redis.port(), 500)).isTrue();
    }
  }
}
