/** API keys: a server that requires one refuses calls without it and accepts the key we send. */
import assert from "node:assert/strict";
import { createHash, randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { GroundwireClient, GroundwireError, status } from "../src";
import { LiveServer } from "./live_server";

const KEY = `gw_${randomBytes(32).toString("base64url")}`;
let keysDir: string;
let server: LiveServer;

before(async () => {
  keysDir = mkdtempSync(join(tmpdir(), "groundwire-ts-keys-"));
  const keysFile = join(keysDir, "keys.toml");
  const sha256 = createHash("sha256").update(KEY).digest("hex");
  writeFileSync(keysFile, `[[keys]]\nid = "ts-admin"\ntenant = "acme"\nrole = "admin"\nsha256 = "${sha256}"\n`);
  server = await LiveServer.start({
    env: { GROUNDWIRE_AUTH__KEYS_FILE: keysFile, GROUNDWIRE_AUTH__REQUIRED: "true" },
  });
});

after(async () => {
  await server?.stop();
  rmSync(keysDir, { recursive: true, force: true });
});

test("without a key the call is UNAUTHENTICATED and names the metadata to send", async () => {
  const client = new GroundwireClient(server.address);
  try {
    const error = await client.listCollections().catch((e: unknown) => e);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.UNAUTHENTICATED);
    assert.equal(error.details, "missing credentials: send the metadata 'authorization: Bearer <api key>'");
  } finally {
    client.close();
  }
});

test("a wrong key is refused", async () => {
  const client = new GroundwireClient(server.address, { apiKey: `${KEY}x` });
  try {
    await assert.rejects(client.listCollections(), (e: unknown) => e instanceof GroundwireError && e.code === status.UNAUTHENTICATED);
  } finally {
    client.close();
  }
});

test("the API key is sent on unary, client-streaming and server-streaming calls", async () => {
  const client = new GroundwireClient(server.address, { apiKey: KEY });
  try {
    await client.createCollection("keyed");
    const upserted = await client.upsertDocuments(
      [{ documentId: "a", text: "Keys are sent as bearer tokens in the authorization metadata." }],
      { collection: "keyed" },
    );
    assert.equal(upserted.upserted, 1);
    const events = [];
    for await (const event of client.answer("How are keys sent?", { collection: "keyed" })) {
      events.push(event.type);
    }
    assert.equal(events.at(-1), "summary");
    assert.deepEqual(
      (await client.listCollections()).map((c) => c.name),
      ["keyed"],
    );
  } finally {
    client.close();
  }
});
