package dev.groundwire.client;

import io.grpc.health.v1.HealthCheckResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A real {@code python -m server serve --port 0} child process: started on a free loopback port,
 * awaited until its health service says SERVING, stopped with SIGTERM (then SIGKILL).
 *
 * <p>The interpreter is $GROUNDWIRE_PYTHON, else {@code <repo>/.venv/bin/python}; the repository
 * root is the system property {@code groundwire.root} (set by the pom), else {@code ../..}.
 */
final class LiveServer implements AutoCloseable {
  private static final Pattern LISTENING = Pattern.compile("groundwire listening on ([\\d.]+):(\\d+)");
  private static final Duration STARTUP = Duration.ofSeconds(240);

  private final Process process;
  private final Path log;
  private final String address;

  private LiveServer(Process process, Path log, String address) {
    this.process = process;
    this.log = log;
    this.address = address;
  }

  static Path repoRoot() {
    return Path.of(System.getProperty("groundwire.root", "../..")).toAbsolutePath().normalize();
  }

  static String python() {
    String configured = System.getenv("GROUNDWIRE_PYTHON");
    if (configured != null && !configured.isBlank()) {
      return configured;
    }
    return repoRoot().resolve(".venv/bin/python").toString();
  }

  /** A plaintext server without extra settings. */
  static LiveServer start(Path dataDir) throws IOException, InterruptedException {
    return start(dataDir, Map.of(), address -> GroundwireClient.builder(address).build());
  }

  /**
   * Starts a server with extra GROUNDWIRE_* settings; {@code probe} makes the client whose health
   * call must answer SERVING (it needs the server's TLS settings).
   */
  static LiveServer start(Path dataDir, Map<String, String> env, Function<String, GroundwireClient> probe)
      throws IOException, InterruptedException {
    Files.createDirectories(dataDir);
    Path log = dataDir.resolveSibling(dataDir.getFileName() + "-server.log");
    ProcessBuilder builder =
        new ProcessBuilder(python(), "-m", "server", "serve", "--port", "0", "--data-dir", dataDir.toString())
            .directory(repoRoot().toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    // The server reads every GROUNDWIRE_* variable as a setting: GROUNDWIRE_PYTHON is only ours.
    builder.environment().remove("GROUNDWIRE_PYTHON");
    builder.environment().put("GROUNDWIRE_MODEL__DEVICE", "cpu");
    builder.environment().put("GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS", "false");
    builder.environment().put("GROUNDWIRE_SERVER__PROCESSES", "1");
    builder.environment().putAll(env);
    Process process = builder.start();
    long deadline = System.nanoTime() + STARTUP.toNanos();
    try {
      String address = awaitListening(process, log, deadline);
      try (GroundwireClient client = probe.apply(address)) {
        GroundwireClient once = client.withRetryPolicy(RetryPolicy.NONE).withDeadline(Duration.ofSeconds(2));
        awaitServing(process, log, once, deadline);
      }
      return new LiveServer(process, log, address);
    } catch (IOException | InterruptedException | RuntimeException | Error failure) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
      throw failure;
    }
  }

  private static String awaitListening(Process process, Path log, long deadline)
      throws IOException, InterruptedException {
    while (true) {
      Matcher match = LISTENING.matcher(Files.readString(log, StandardCharsets.UTF_8));
      if (match.find()) {
        return "127.0.0.1:" + match.group(2);
      }
      assertAlive(process, log, deadline);
      Thread.sleep(50);
    }
  }

  private static void awaitServing(Process process, Path log, GroundwireClient client, long deadline)
      throws IOException, InterruptedException {
    while (true) {
      try {
        if (client.health() == HealthCheckResponse.ServingStatus.SERVING) {
          return;
        }
      } catch (GroundwireException notYet) {
        // loading, or the channel is still connecting
      }
      assertAlive(process, log, deadline);
      Thread.sleep(50);
    }
  }

  private static void assertAlive(Process process, Path log, long deadline) throws IOException {
    if (!process.isAlive()) {
      throw new IllegalStateException(
          "server exited with " + process.exitValue() + ":\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
    if (System.nanoTime() > deadline) {
      throw new IllegalStateException("server not SERVING in time:\n" + Files.readString(log, StandardCharsets.UTF_8));
    }
  }

  /** "127.0.0.1:PORT". */
  String address() {
    return address;
  }

  /** Everything the server printed so far. */
  String logText() throws IOException {
    return Files.readString(log, StandardCharsets.UTF_8);
  }

  @Override
  public void close() throws InterruptedException {
    process.destroy();
    if (!process.waitFor(60, TimeUnit.SECONDS)) {
      process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
    }
  }
}
