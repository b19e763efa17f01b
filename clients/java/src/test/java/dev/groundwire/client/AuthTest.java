package dev.groundwire.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import groundwire.v1.Common.Document;
import groundwire.v1.IndexServiceOuterClass.CollectionInfo;
import io.grpc.Status;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A server that requires API keys: the client's key goes out as `authorization: Bearer <key>`. */
class AuthTest {
  @TempDir static Path tmp;
  private static LiveServer server;
  private static String key;

  @BeforeAll
  static void startServer() throws Exception {
    byte[] random = new byte[32];
    new SecureRandom().nextBytes(random);
    key = "gw_" + Base64.getUrlEncoder().withoutPadding().encodeToString(random);
    String sha256 =
        HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(key.getBytes(StandardCharsets.UTF_8)));
    Path keys = tmp.resolve("keys.toml");
    Files.writeString(
        keys,
        "[[keys]]\nid = \"java-test\"\ntenant = \"acme\"\nrole = \"admin\"\nsha256 = \"" + sha256 + "\"\n",
        StandardCharsets.UTF_8);
    server =
        LiveServer.start(
            tmp.resolve("data"),
            Map.of("GROUNDWIRE_AUTH__KEYS_FILE", keys.toString(), "GROUNDWIRE_AUTH__REQUIRED", "true"),
            address -> GroundwireClient.builder(address).build());
  }

  @AfterAll
  static void stopServer() throws Exception {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void withTheKeyEveryCallIsAuthenticated() {
    try (GroundwireClient client = GroundwireClient.builder(server.address()).apiKey(key).build()) {
      client.createCollection("keyed");
      client.upsertDocuments(
          "keyed", List.of(Document.newBuilder().setDocumentId("d1").setText("Keys are rotated every 90 days.").build()));
      assertEquals(
          "d1",
          client.retrieve("how often are keys rotated", RetrieveOptions.defaults().collection("keyed"))
              .getHits(0).getChunk().getDocumentId());
      assertTrue(client.listCollections().stream().map(CollectionInfo::getName).anyMatch("keyed"::equals));
    }
  }

  @Test
  void withoutAKeyTheServerRefusesWithUnauthenticated() {
    try (GroundwireClient client = GroundwireClient.builder(server.address()).build()) {
      GroundwireException error = assertThrows(GroundwireException.class, client::listCollections);
      assertEquals(Status.Code.UNAUTHENTICATED, error.code());
      assertTrue(error.description().contains("authorization: Bearer"), error.description());
    }
  }

  @Test
  void aWrongKeyIsRefused() {
    try (GroundwireClient client = GroundwireClient.builder(server.address()).apiKey("gw_not-a-real-key").build()) {
      GroundwireException error = assertThrows(GroundwireException.class, client::listCollections);
      assertEquals(Status.Code.UNAUTHENTICATED, error.code());
      assertTrue(error.description().contains("unknown API key"), error.description());
    }
  }
}
