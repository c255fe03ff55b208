package dev.fencing.shedlock;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fencing.core.LeaseOptions;
import dev.fencing.core.RedisLeaseManager;
import dev.fencing.jdbc.FenceOptions;
import dev.fencing.jdbc.FencedDataSource;
import dev.fencing.jdbc.FencedLeaseManager;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.stream.Collectors;
import javax.sql.DataSource;
import net.javacrumbs.shedlock.core.LockProvider;
import org.junit.jupiter.api.Test;
import org.redisson.api.RedissonClient;

/** The "without Spring Boot" example of docs/shedlock.md is the one compiled here. */
class ShedLockPageExampleTest {

  @SuppressWarnings("unused") // compiled; the provider itself is exercised by the other tests
  private static LockProvider swapTheBean(RedissonClient redisson, DataSource hikariDataSource) {
    // README:begin
    FencedDataSource db = FencedDataSource.wrap(hikariDataSource, FenceOptions.defaults());
    LockProvider lockProvider =
        new FencedLockProvider(
            new FencedLeaseManager(
                RedisLeaseManager.create(redisson, LeaseOptions.defaults()), db.fence()),
            FencedLockOptions.defaults());
    // README:end
    return lockProvider;
  }

  @Test
  void theShedLockPageShowsTheExampleCompiledHere() throws IOException {
    String source =
        Files.readString(
            Path.of("src/test/java/dev/fencing/shedlock/ShedLockPageExampleTest.java"));
    String block =
        source.substring(
            source.indexOf("// README:begin\n") + "// README:begin\n".length(),
            source.indexOf("    // README:end"));
    String snippet =
        Arrays.stream(block.split("\n"))
            .map(line -> line.length() >= 4 ? line.substring(4) : line)
            .collect(Collectors.joining("\n"));
    assertThat(Files.readString(Path.of("..", "docs", "shedlock.md"))).contains(snippet);
  }
}
