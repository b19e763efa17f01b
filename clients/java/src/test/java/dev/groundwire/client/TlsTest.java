package dev.groundwire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.health.v1.HealthCheckResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Mutual TLS against a real server, with a CA, server and client certificates made by openssl. */
class TlsTest {
  @TempDir static Path tmp;
  private static Path pki;
  private static LiveServer server;

  @BeforeAll
  static void startServer() throws Exception {
    pki = Files.createDirectories(tmp.resolve("pki"));
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
        "-days", "2", "-subj", "/CN=groundwire java test CA");
    issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
    issue("client", "/CN=java test client", "extendedKeyUsage=clientAuth\n");
    server =
        LiveServer.start(
            tmp.resolve("data"),
            Map.of(
                "GROUNDWIRE_SERVER__TLS_CERT_FILE", pki.resolve("server.crt").toString(),
                "GROUNDWIRE_SERVER__TLS_KEY_FILE", pki.resolve("server.key").toString(),
                "GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE", pki.resolve("ca.crt").toString()),
            TlsTest::mutual);
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  private static GroundwireClient mutual(String address) {
    return GroundwireClient.builder(address)
        .caFile(pki.resolve("ca.crt"))
        .clientCertificate(pki.resolve("client.crt"), pki.resolve("client.key"))
        .build();
  }

  private static void issue(String name, String subject, String extensions) throws Exception {
    openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", name + ".key", "-subj", subject, "-out", name + ".csr");
    Files.writeString(pki.resolve(name + ".ext"), extensions, StandardCharsets.UTF_8);
    openssl("x509", "-req", "-in", name + ".csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
        "-days", "2", "-sha256", "-extfile", name + ".ext", "-out", name + ".crt");
  }

  private static void openssl(String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of("openssl"));
    command.addAll(List.of(args));
    Process process = new ProcessBuilder(command).directory(pki.toFile()).redirectErrorStream(true).start();
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertEquals(0, process.waitFor(), "openssl " + String.join(" ", args) + ":\n" + output);
  }

  @Test
  void aClientWithTheCaAndItsCertificateIsServed() {
    try (GroundwireClient client = mutual(server.address())) {
      assertEquals(HealthCheckResponse.ServingStatus.SERVING, client.health());
      client.createCollection("over_tls");
      assertTrue(client.listCollections().stream().anyMatch(c -> c.getName().equals("over_tls")));
    }
  }

  @Test
  void withoutAClientCertificateTheHandshakeFails() {
    try (GroundwireClient client =
        GroundwireClient.builder(server.address())
            .caFile(pki.resolve("ca.crt"))
            .retryPolicy(RetryPolicy.NONE)
            .deadline(Duration.ofSeconds(10))
            .build()) {
      GroundwireException error = assertThrows(GroundwireException.class, client::listCollections);
      assertEquals(Status.Code.UNAVAILABLE, error.code(), error.getMessage());
    }
  }

  @Test
  void aPlaintextClientIsRefused() {
    try (GroundwireClient client =
        GroundwireClient.builder(server.address()).retryPolicy(RetryPolicy.NONE).deadline(Duration.ofSeconds(10)).build()) {
      GroundwireException error = assertThrows(GroundwireException.class, client::listCollections);
      assertEquals(Status.Code.UNAVAILABLE, error.code(), error.getMessage());
    }
  }

  @Test
  void aClientCertificateWithoutTlsIsRejectedByTheBuilder() {
    IllegalArgumentException error =
        assertThrows(
            IllegalArgumentException.class,
            () -> GroundwireClient.builder(server.address())
                .clientCertificate(pki.resolve("client.crt"), pki.resolve("client.key"))
                .build());
    assertTrue(error.getMessage().contains("caFile"), error.getMessage());
  }
}
