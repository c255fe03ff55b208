package dev.fencing.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.StringReader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.BindHandler;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.bind.handler.NoUnboundElementsBindHandler;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/**
 * The Spring Boot and ShedLock sections of README.md show the jobs compiled in the {@code readme}
 * package (between their {@code // README:} markers), docs/spring-boot.md its RedissonClient recipe
 * and docs/testing.md the {@code @SpringBootTest} with the probe, and every {@code fencing.*}
 * property the README sets binds to {@link FencingProperties}.
 */
class ReadmeExamplesTest {

  private static final Path README = Path.of("..", "README.md");
  private static final Path SPRING_BOOT_PAGE = Path.of("..", "docs", "spring-boot.md");
  private static final Path TESTING_PAGE = Path.of("..", "docs", "testing.md");
  private static final Path READMES = Path.of("src", "test", "java", "dev", "fencing", "spring");
  private static final Path JOB = READMES.resolve(Path.of("readme", "NightlyBilling.java"));
  private static final Path SHEDLOCK_JOB =
      READMES.resolve(Path.of("readme", "ShedLockNightlyBilling.java"));
  private static final Path REDISSON = READMES.resolve(Path.of("readme", "RedissonConfig.java"));
  private static final Path PROBE_TEST =
      READMES.resolve(Path.of("readme", "InMemoryProbeExample.java"));
  private static final Path PROPERTIES =
      Path.of("src", "test", "resources", "readme-application.properties");

  @Test
  void theReadmeShowsTheCompiledJob() throws IOException {
    assertPageShows(README, JOB);
  }

  @Test
  void theReadmeShowsTheCompiledShedLockJob() throws IOException {
    assertPageShows(README, SHEDLOCK_JOB);
  }

  @Test
  void theSpringBootPageShowsTheCompiledRedissonRecipe() throws IOException {
    assertPageShows(SPRING_BOOT_PAGE, REDISSON);
  }

  @Test
  void theTestingPageShowsTheCompiledSpringBootProbeTest() throws IOException {
    assertPageShows(TESTING_PAGE, PROBE_TEST);
  }

  @Test
  void everyFencingPropertyTheReadmeSetsBinds() throws IOException {
    Matcher m =
        Pattern.compile("`(fencing\\.[a-z0-9.-]+)=([^`]*)`").matcher(Files.readString(README));
    Map<String, Object> map = new HashMap<>();
    while (m.find()) {
      map.put(m.group(1), m.group(2));
    }
    assertThat(map)
        .containsKeys(
            "fencing.enabled", "fencing.metrics.tag-resource", "fencing.shedlock.keep-alive");
    new Binder(List.of(new MapConfigurationPropertySource(map)))
        .bind(
            "fencing",
            Bindable.of(FencingProperties.class),
            new NoUnboundElementsBindHandler(BindHandler.DEFAULT))
        .get();
  }

  private static void assertPageShows(Path page, Path source) throws IOException {
    Matcher m =
        Pattern.compile("// README:\\n(.*?)\\n\\s*// README:", Pattern.DOTALL)
            .matcher(Files.readString(source));
    assertThat(m.find()).as("markers in %s", source).isTrue();
    String snippet = m.group(1).stripIndent();
    assertThat(Files.readString(page))
        .as("%s contains, verbatim:%n%s", page, snippet)
        .contains(snippet);
  }

  @Test
  void theReadmeShowsPropertiesThatAllBind() throws IOException {
    String properties = Files.readString(PROPERTIES);
    assertThat(Files.readString(README)).contains(properties);
    Properties parsed = new Properties();
    parsed.load(new StringReader(properties));
    Map<String, Object> map = new HashMap<>();
    parsed.forEach((k, v) -> map.put((String) k, v));
    Binder binder = new Binder(List.of(new MapConfigurationPropertySource(map)));
    BindHandler strict = new NoUnboundElementsBindHandler(BindHandler.DEFAULT);
    FencingProperties bound =
        binder.bind("fencing", Bindable.of(FencingProperties.class), strict).get();
    assertThat(bound.getMigrations().getEnforce()).containsExactly("public.charges");
    assertThat(bound.effectiveTriggerMode()).isTrue();
  }
}
