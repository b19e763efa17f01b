/**
 * A real `groundwire serve --port 0` child process for the tests: spawned from the repository root
 * with $GROUNDWIRE_PYTHON (default <repo>/.venv/bin/python), ready once health says SERVING.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { GroundwireClient, type ClientOptions } from "../src";

/** The repository root (clients/typescript/dist/test -> four levels up). */
export const REPO_ROOT = resolve(__dirname, "..", "..", "..", "..");
const LISTENING = /groundwire listening on [\d.]+:(\d+)/;
const START_TIMEOUT_MS = 180_000;

/**
 * This process's environment without GROUNDWIRE_PYTHON: the server reads every GROUNDWIRE_* variable
 * as a setting and refuses unknown ones.
 */
function serverEnvironment(): NodeJS.ProcessEnv {
  const { GROUNDWIRE_PYTHON: _python, ...rest } = process.env;
  return rest;
}

export interface StartOptions {
  /** Extra GROUNDWIRE_* settings for the server. */
  env?: Record<string, string>;
  /** How the readiness check connects (TLS servers need the CA). */
  client?: ClientOptions;
}

export class LiveServer {
  private output = "";

  private constructor(
    private readonly child: ChildProcess,
    private readonly dataDir: string,
    public port = 0,
  ) {
    child.stdout?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr?.on("data", (chunk: Buffer) => (this.output += chunk.toString()));
  }

  /** "127.0.0.1:<port>". */
  get address(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** Everything the server printed so far. */
  get log(): string {
    return this.output;
  }

  static async start(options: StartOptions = {}): Promise<LiveServer> {
    const python = process.env.GROUNDWIRE_PYTHON ?? join(REPO_ROOT, ".venv", "bin", "python");
    if (!existsSync(python)) {
      throw new Error(`no Python at ${python}: set GROUNDWIRE_PYTHON to the groundwire virtualenv's python`);
    }
    const dataDir = mkdtempSync(join(tmpdir(), "groundwire-ts-"));
    const child = spawn(python, ["-m", "server", "serve", "--port", "0", "--data-dir", dataDir], {
      cwd: REPO_ROOT,
      env: {
        ...serverEnvironment(),
        GROUNDWIRE_MODEL__DEVICE: "cpu",
        GROUNDWIRE_STORAGE__SEED_DEMO_CORPUS: "false",
        GROUNDWIRE_SERVER__PROCESSES: "1",
        ...options.env,
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const server = new LiveServer(child, dataDir);
    try {
      await server.waitServing(options.client ?? {}, Date.now() + START_TIMEOUT_MS);
    } catch (error) {
      await server.stop();
      throw error;
    }
    return server;
  }

  /** SIGTERM, then SIGKILL if it has not exited within 30 s; removes the data directory. */
  async stop(): Promise<void> {
    if (this.child.exitCode === null && this.child.signalCode === null) {
      const exited = new Promise((resolve) => this.child.once("exit", resolve));
      this.child.kill("SIGTERM");
      const timer = setTimeout(() => this.child.kill("SIGKILL"), 30_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }

  private async waitServing(clientOptions: ClientOptions, deadline: number): Promise<void> {
    let match: RegExpMatchArray | null;
    while ((match = LISTENING.exec(this.output)) === null) {
      this.assertAlive(deadline);
      await sleep(50);
    }
    this.port = Number(match[1]);
    const client = new GroundwireClient(this.address, { ...clientOptions, retry: false });
    try {
      for (;;) {
        this.assertAlive(deadline);
        const status = await client.health("", { timeoutMs: 2000 }).catch(() => "UNREACHABLE");
        if (status === "SERVING") {
          return;
        }
        await sleep(50);
      }
    } finally {
      client.close();
    }
  }

  private assertAlive(deadline: number): void {
    if (this.child.exitCode !== null || this.child.signalCode !== null) {
      throw new Error(`server exited with ${this.child.exitCode ?? this.child.signalCode}:\n${this.output}`);
    }
    if (Date.now() > deadline) {
      throw new Error(`server not SERVING within ${START_TIMEOUT_MS} ms:\n${this.output}`);
    }
  }
}
