/** Retries: backoff on UNAVAILABLE through a real channel, and the server's RetryInfo delay honoured. */
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:net";
import { join } from "node:path";
import { test } from "node:test";
import { Metadata } from "@grpc/grpc-js";
import { DEFAULT_RETRY_POLICY, GroundwireClient, GroundwireError, status } from "../src";
import { decodeStatusDetails } from "../src/errors";
import { backoffMs, withRetries } from "../src/retry";
import { REPO_ROOT } from "./live_server";

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const listener = createServer();
  await new Promise<void>((resolve) => listener.listen(0, "127.0.0.1", resolve));
  const address = listener.address();
  await new Promise((resolve) => listener.close(resolve));
  assert.ok(address !== null && typeof address === "object");
  return address.port;
}

/** The status the server sends for `python` (an expression building a core.errors error). */
function serverStatus(python: string): { code: number; details: Metadata } {
  const interpreter = process.env.GROUNDWIRE_PYTHON ?? join(REPO_ROOT, ".venv", "bin", "python");
  const script = [
    "import base64, core.errors as e",
    "from server.errors import rich_status",
    `s = rich_status(${python})`,
    "print(s.code.value[0], base64.b64encode(dict(s.trailing_metadata)['grpc-status-details-bin']).decode())",
  ].join("\n");
  const [code, details] = execFileSync(interpreter, ["-c", script], { cwd: REPO_ROOT }).toString().trim().split(" ");
  const metadata = new Metadata();
  metadata.set("grpc-status-details-bin", Buffer.from(details ?? "", "base64"));
  return { code: Number(code), details: metadata };
}

test("UNAVAILABLE is retried with growing backoff until attempts run out", async () => {
  const client = new GroundwireClient(`127.0.0.1:${await closedPort()}`);
  const waits: [number, number][] = [];
  try {
    const error = await client
      .listCollections({
        retry: { maxAttempts: 4, initialBackoffMs: 20, multiplier: 2, onRetry: (n, _e, ms) => waits.push([n, ms]) },
      })
      .catch((e: unknown) => e);
    assert.ok(error instanceof GroundwireError);
    assert.equal(error.code, status.UNAVAILABLE);
    assert.deepEqual(
      waits.map(([n]) => n),
      [1, 2, 3],
    );
    waits.forEach(([n, ms]) => {
      const ceiling = 20 * 2 ** (n - 1);
      assert.ok(ms >= ceiling / 2 && ms <= ceiling, `wait ${ms} ms for retry ${n} outside [${ceiling / 2}, ${ceiling}]`);
    });
  } finally {
    client.close();
  }
});

test("retry: false makes a single attempt", async () => {
  const client = new GroundwireClient(`127.0.0.1:${await closedPort()}`, { retry: false });
  const waits: number[] = [];
  try {
    await assert.rejects(client.stats("", { retry: { onRetry: (n) => waits.push(n) } }), GroundwireError);
    assert.deepEqual(waits, []);
  } finally {
    client.close();
  }
});

test("the RetryInfo delay the server sends decides the wait", async () => {
  const sent = serverStatus('e.Overloaded("query embedding queue is full", retry_after_s=0.25)');
  assert.equal(sent.code, status.RESOURCE_EXHAUSTED);
  assert.deepEqual(decodeStatusDetails(sent.details), { fieldViolations: [], retryDelayMs: 250 });
  const failure = Object.assign(new Error("full"), { code: sent.code, details: "full", metadata: sent.details });
  const waits: number[] = [];
  let attempts = 0;
  const result = await withRetries(
    { ...DEFAULT_RETRY_POLICY, onRetry: (_n, _e, ms) => waits.push(ms) },
    undefined,
    undefined,
    async () => {
      attempts += 1;
      if (attempts === 1) {
        throw failure;
      }
      return "ok";
    },
  );
  assert.equal(result, "ok");
  assert.deepEqual(waits, [250]);
});

test("a wait that would pass the deadline is not taken", async () => {
  const error = new GroundwireError(status.UNAVAILABLE, "loading", { retryDelayMs: 60_000 });
  assert.equal(backoffMs(DEFAULT_RETRY_POLICY, 1, error), 60_000);
  let attempts = 0;
  const failed = withRetries(DEFAULT_RETRY_POLICY, new Date(Date.now() + 5_000), undefined, async () => {
    attempts += 1;
    throw error;
  });
  await assert.rejects(failed, (e: unknown) => e === error);
  assert.equal(attempts, 1);
});

test("BadRequest violations from the server's status are decoded in order", () => {
  const sent = serverStatus(
    'e.InvalidArgument("bad", violations=[e.FieldViolation("query", "must not be blank"), e.FieldViolation("top_k", "too big")])',
  );
  assert.equal(sent.code, status.INVALID_ARGUMENT);
  assert.deepEqual(decodeStatusDetails(sent.details).fieldViolations, [
    { field: "query", description: "must not be blank" },
    { field: "top_k", description: "too big" },
  ]);
});
