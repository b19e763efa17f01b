/** TLS with a CA file and mutual TLS, against a server using certificates openssl makes here. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { GroundwireClient, GroundwireError, status, type TlsOptions } from "../src";
import { LiveServer } from "./live_server";

let pki: string;
let tlsServer: LiveServer;
let mtlsServer: LiveServer;

function openssl(...args: string[]): void {
  execFileSync("openssl", args, { cwd: pki, stdio: "pipe" });
}

/** A key and certificate for `name` signed by the test CA. */
function issue(name: string, subject: string, extensions: string): void {
  openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-subj", subject, "-out", `${name}.csr`);
  writeFileSync(join(pki, `${name}.ext`), extensions);
  openssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial",
    "-days", "2", "-sha256", "-extfile", `${name}.ext`, "-out", `${name}.crt`);
}

before(async () => {
  pki = mkdtempSync(join(tmpdir(), "groundwire-ts-pki-"));
  openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.crt",
    "-days", "2", "-subj", "/CN=groundwire test CA");
  issue("server", "/CN=localhost", "subjectAltName=DNS:localhost,IP:127.0.0.1\nextendedKeyUsage=serverAuth\n");
  issue("client", "/CN=test client", "extendedKeyUsage=clientAuth\n");
  const serverTls = {
    GROUNDWIRE_SERVER__TLS_CERT_FILE: join(pki, "server.crt"),
    GROUNDWIRE_SERVER__TLS_KEY_FILE: join(pki, "server.key"),
  };
  const caOnly = { caFile: join(pki, "ca.crt") };
  const mutual = { ...caOnly, certFile: join(pki, "client.crt"), keyFile: join(pki, "client.key") };
  [tlsServer, mtlsServer] = await Promise.all([
    LiveServer.start({ env: serverTls, client: { tls: caOnly } }),
    LiveServer.start({
      env: { ...serverTls, GROUNDWIRE_SERVER__TLS_CLIENT_CA_FILE: join(pki, "ca.crt") },
      client: { tls: mutual },
    }),
  ]);
});

after(async () => {
  await Promise.all([tlsServer?.stop(), mtlsServer?.stop()]);
  rmSync(pki, { recursive: true, force: true });
});

async function listCode(server: LiveServer, tls: TlsOptions | boolean): Promise<number> {
  const client = new GroundwireClient(server.address, { tls, retry: false, timeoutMs: 20_000 });
  try {
    await client.listCollections();
    return status.OK;
  } catch (error) {
    assert.ok(error instanceof GroundwireError);
    return error.code;
  } finally {
    client.close();
  }
}

test("TLS: the CA file verifies the server", async () => {
  assert.equal(await listCode(tlsServer, { caFile: join(pki, "ca.crt") }), status.OK);
});

test("TLS: without the test CA the server certificate is not trusted", async () => {
  assert.equal(await listCode(tlsServer, true), status.UNAVAILABLE);
});

test("TLS: a plaintext client cannot talk to a TLS server", async () => {
  assert.equal(await listCode(tlsServer, false), status.UNAVAILABLE);
});

test("mutual TLS: the client certificate is presented and accepted", async () => {
  const tls = { caFile: join(pki, "ca.crt"), certFile: join(pki, "client.crt"), keyFile: join(pki, "client.key") };
  assert.equal(await listCode(mtlsServer, tls), status.OK);
});

test("mutual TLS: a client without a certificate is refused", async () => {
  assert.equal(await listCode(mtlsServer, { caFile: join(pki, "ca.crt") }), status.UNAVAILABLE);
});

test("a certificate without its key is refused before connecting", () => {
  assert.throws(
    () => new GroundwireClient("127.0.0.1:1", { tls: { certFile: join(pki, "client.crt") } }),
    /mutual TLS needs both a client certificate and its key/,
  );
});
