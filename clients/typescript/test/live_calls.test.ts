/** Every call of GroundwireClient against one real server: index, retrieve, answer, errors. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { DocumentOutcome, GroundwireClient, GroundwireError, status, type AnswerEvent } from "../src";
import { LiveServer } from "./live_server";

const COLLECTION = "ts_client";
const DOCUMENTS = [
  { documentId: "tides", text: "# Tides\n\nTides are caused by the Moon's gravity pulling on the oceans." },
  { documentId: "seasons", text: "# Seasons\n\nSeasons come from the tilt of the Earth's axis." },
  {
    documentId: "eclipses",
    text: "# Eclipses\n\nA solar eclipse happens when the Moon passes between the Sun and the Earth.",
    metadata: { topic: "astronomy" },
  },
];

async function* slowly<T>(items: T[]): AsyncGenerator<T> {
  for (const item of items) {
    await new Promise((resolve) => setImmediate(resolve));
    yield item;
  }
}

let server: LiveServer;
let client: GroundwireClient;

before(async () => {
  server = await LiveServer.start();
  client = new GroundwireClient(server.address, { timeoutMs: 60_000 });
  await client.createCollection(COLLECTION, { description: "TypeScript client tests" });
});

after(async () => {
  client?.close();
  await server?.stop();
});

describe("index, retrieve, answer", () => {
  test("upserting from an async iterable reports one result per document", async () => {
    const reply = await client.upsertDocuments(slowly(DOCUMENTS), { collection: COLLECTION, batchSize: 2 });
    assert.deepEqual(
      reply.results.map((r) => [r.documentId, r.outcome]),
      DOCUMENTS.map((d) => [d.documentId, DocumentOutcome.DOCUMENT_OUTCOME_UPSERTED]),
    );
    assert.equal(reply.upserted, 3);
    const again = await client.upsertDocuments(DOCUMENTS, { collection: COLLECTION });
    assert.equal(again.unchanged, 3);
  });

  test("retrieve finds the document that answers, with filters and a budget", async () => {
    const found = await client.retrieve("What causes tides?", {
      collection: COLLECTION,
      mode: "hybrid",
      topK: 2,
      budget: { maxTokens: 300 },
    });
    assert.equal(found.hits[0]?.chunk?.documentId, "tides");
    assert.ok(found.hits.length <= 2);
    assert.equal(found.context?.budgetTokens, 300);
    const filtered = await client.retrieve("What causes tides?", {
      collection: COLLECTION,
      mode: "dense",
      filters: { metadataEquals: { topic: "astronomy" } },
    });
    assert.deepEqual(
      filtered.hits.map((h) => h.chunk?.documentId),
      ["eclipses"],
    );
  });

  test("answer streams started, deltas, then a summary citing the retrieved chunk", async () => {
    const events: AnswerEvent[] = [];
    for await (const event of client.answer("What causes tides?", { collection: COLLECTION, topK: 1 })) {
      events.push(event);
    }
    assert.equal(events[0]?.type, "started");
    const last = events.at(-1);
    assert.ok(last?.type === "summary");
    const deltas = events.filter((e) => e.type === "delta");
    assert.ok(deltas.length > 0);
    assert.equal(deltas.map((d) => d.text).join(""), last.text);
    assert.deepEqual(
      last.citations.map((c) => c.documentId),
      ["tides"],
    );
  });

  test("get, stats, list and delete", async () => {
    const stored = await client.getDocument("seasons", { collection: COLLECTION });
    assert.equal(stored.document?.text, DOCUMENTS[1]?.text);
    assert.ok(stored.chunks.length >= 1);
    const stats = await client.stats(COLLECTION);
    assert.equal(stats.collection?.documentCount, 3);
    const names = (await client.listCollections()).map((c) => c.name);
    assert.ok(names.includes(COLLECTION));
    const deleted = await client.deleteDocuments(["seasons", "never-indexed"], { collection: COLLECTION });
    assert.equal(deleted.deleted, 1);
    assert.deepEqual(deleted.notFound, ["never-indexed"]);
    await assert.rejects(client.getDocument("seasons", { collection: COLLECTION }), (error: unknown) => {
      assert.ok(error instanceof GroundwireError);
      assert.equal(error.code, status.NOT_FOUND);
      return true;
    });
  });

  test("create and drop a collection; health says SERVING", async () => {
    const created = await client.createCollection("ts_scratch", { chunking: { maxTokens: 64 } });
    assert.equal(created.name, "ts_scratch");
    await client.upsertDocuments([DOCUMENTS[0]!], { collection: "ts_scratch" });
    assert.equal(await client.dropCollection("ts_scratch"), 1);
    assert.equal(await client.health(), "SERVING");
  });
});

describe("errors, cancellation and deadlines", () => {
  test("a bad request surfaces the BadRequest field violations", async () => {
    const error = await client.retrieve("", { collection: COLLECTION, topK: 0 }).catch((e: unknown) => e);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.INVALID_ARGUMENT);
    assert.equal(error.codeName, "INVALID_ARGUMENT");
    assert.deepEqual(
      error.fieldViolations.map((v) => v.field),
      ["query", "top_k"],
    );
    assert.equal(error.fieldViolations[1]?.description, "must be between 1 and 100; got 0");
  });

  test("aborting the signal cancels an answer stream mid-way", async () => {
    const controller = new AbortController();
    const seen: string[] = [];
    const stream = client.answer("What causes tides?", { collection: COLLECTION, signal: controller.signal });
    const error = await (async () => {
      for await (const event of stream) {
        seen.push(event.type);
        controller.abort();
      }
    })().catch((e: unknown) => e);
    assert.deepEqual(seen, ["started"]);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.CANCELLED);
  });

  test("an already-aborted signal fails before any call", async () => {
    const error = await client
      .retrieve("What causes tides?", { collection: COLLECTION, signal: AbortSignal.abort() })
      .catch((e: unknown) => e);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.CANCELLED);
  });

  test("leaving the for-await loop early ends the stream and the client stays usable", async () => {
    for await (const event of client.answer("What causes seasons?", { collection: COLLECTION })) {
      assert.equal(event.type, "started");
      break;
    }
    const found = await client.retrieve("What causes seasons?", { collection: COLLECTION, topK: 1 });
    assert.equal(found.hits.length, 1);
  });

  test("a failing document source fails the upsert with its own error", async () => {
    async function* failing(): AsyncGenerator<{ documentId: string; text: string }> {
      yield { documentId: "half-written", text: "The source fails after this document." };
      throw new Error("the source broke");
    }
    await assert.rejects(client.upsertDocuments(failing(), { collection: COLLECTION, batchSize: 1 }), /the source broke/);
  });

  test("a deadline that expires fails with DEADLINE_EXCEEDED and is not retried", async () => {
    const retries: number[] = [];
    const error = await client
      .retrieve(`eclipse of the ${Date.now()} moons`, {
        collection: COLLECTION,
        timeoutMs: 1,
        retry: { onRetry: (attempt) => retries.push(attempt) },
      })
      .catch((e: unknown) => e);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.DEADLINE_EXCEEDED);
    assert.deepEqual(retries, []);
  });
});

describe("README example", () => {
  const packageDir = join(__dirname, "..", "..");

  test("the README shows examples/quickstart.ts verbatim", () => {
    const readme = readFileSync(join(packageDir, "README.md"), "utf-8");
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1];
    assert.equal(block, readFileSync(join(packageDir, "examples", "quickstart.ts"), "utf-8"));
  });

  test("the example runs as written: indexes, retrieves and streams a cited answer", () => {
    const output = execFileSync(process.execPath, [join(packageDir, "dist", "examples", "quickstart.js")], {
      env: { ...process.env, GROUNDWIRE_ADDRESS: server.address },
      timeout: 120_000,
    }).toString();
    assert.match(output, /^indexed 3 documents, 3 chunks$/m);
    assert.match(output, /^1\. tides \(/m);
    assert.match(output, /^cited: tides/m);
  });
});
