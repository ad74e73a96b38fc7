/**
 * Memory against a hostile or broken service (docs/limits.md): every answer, on every endpoint, is 100 MB — an
 * endless 200, a 100 KB gzip body that inflates to 100 MB, or a 500 with an endless message — and the compiled
 * binary stays under its ceilings: `run` (every job at once, every second, 20 players looked up) 120 MB, a one-shot
 * command 80 MB. The peak is the kernel's: VmHWM in /proc/<pid>/status, read while the process lives.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerSchema } from "../../lib/api/schemas.ts";
import { openStore } from "../../lib/store/index.ts";
import examples from "../fixtures/api-examples.json";
import { spawn } from "../support/procs.ts";
import { binary } from "./binary.ts";

const RUN_CEILING_MB = 120;
const ONE_SHOT_CEILING_MB = 80;
const BODY = 100_000_000;
const KINDS = ["endless", "gzip", "error"] as const;

/** Answers by kind, to show each was met. */
const answered: Record<(typeof KINDS)[number], number> = { endless: 0, gzip: 0, error: 0 };
/** 100 MB of spaces (valid JSON whitespace), produced only as fast as the client reads. */
const endless = () => {
  const chunk = new Uint8Array(64 * 1024).fill(0x20);
  let left = BODY;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (left <= 0) return controller.close();
      left -= chunk.byteLength;
      controller.enqueue(chunk);
    },
  });
};
let gzip: Uint8Array;
let requests = 0;
const server = Bun.serve({
  hostname: "127.0.0.1",
  port: 0,
  idleTimeout: 0,
  fetch() {
    const kind = KINDS[requests++ % KINDS.length] as (typeof KINDS)[number];
    answered[kind]++;
    const json = { "content-type": "application/json" };
    if (kind === "gzip") return new Response(gzip, { headers: { ...json, "content-encoding": "gzip" } });
    return new Response(endless(), { status: kind === "error" ? 500 : 200, headers: json });
  },
});

let root: string;
let store: string;
beforeAll(async () => {
  // Compressed as a stream: the 100 MB it inflates to never exists here.
  gzip = new Uint8Array(
    await new Response(
      endless().pipeThrough(new CompressionStream("gzip") as unknown as TransformStream<Uint8Array, Uint8Array>),
    ).arrayBuffer(),
  );
  root = mkdtempSync(join(tmpdir(), "hostile-"));
  store = join(root, "store");
  // The server record cached, so `run` gets past hub_ready and runs every job.
  const server = examples["01 GET /server/{server_id}"].response.body;
  await (await openStore({ dir: store })).cache("server", ServerSchema).set(server as never);
  await binary();
}, 120_000);
afterAll(() => {
  server.stop(true);
  rmSync(root, { recursive: true, force: true });
});

const PLAYERS = Array.from({ length: 20 }, (_, i) => `${76561198000001000 + i}:Player${i}`).join(",");
const env = () => ({
  PATH: process.env.PATH ?? "",
  HUB_API_URL: `http://127.0.0.1:${server.port}/v1`,
  HUB_API_KEY: "hostile-test-key",
  HUB_API_SERVER_ID: examples["01 GET /server/{server_id}"].response.body.id,
  HUB_GAME_BRIDGE: "sim",
  HUB_GAME_SIM_PLAYERS: PLAYERS,
  HUB_STORAGE_DIR: store,
  ...Object.fromEntries(
    ["status", "groups", "bans", "queues", "rewards", "adverts", "user_retry"].map((k) => [
      `HUB_INTERVALS_${k.toUpperCase()}`,
      "1",
    ]),
  ),
});

/** The process's peak resident memory so far, in MB (undefined once it has exited). */
function peakMb(pid: number): number | undefined {
  try {
    const kb = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

/** Runs the binary until it exits or `seconds` pass (then SIGTERM); its peak memory, sampled every few ms. */
async function peakOf(args: string[], seconds: number): Promise<{ peak: number; code: number; stderr: string }> {
  const p = spawn([await binary(), ...args], {
    cwd: root,
    env: env(),
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  const stderr = new Response(p.stderr).text();
  let peak = 0;
  const until = performance.now() + seconds * 1000;
  while (p.exitCode === null) {
    peak = Math.max(peak, peakMb(p.pid) ?? 0);
    if (performance.now() > until) {
      p.kill("SIGTERM");
      break;
    }
    await Bun.sleep(5);
  }
  return { peak, code: await p.exited, stderr: await stderr };
}

test(`run, every job every second against 100 MB answers, stays under ${RUN_CEILING_MB} MB`, async () => {
  const before = requests;
  const { peak, code, stderr } = await peakOf(["run"], 20);
  console.log(`run: peak ${peak.toFixed(1)} MB over ${requests - before} answers of 100 MB`);
  expect(code).toBe(0);
  expect(stderr).toContain("response larger than the 16777216-byte cap");
  expect(requests - before).toBeGreaterThanOrEqual(15);
  expect(peak).toBeGreaterThan(20); // it was measured
  expect(peak).toBeLessThan(RUN_CEILING_MB);
}, 60_000);

test(`one-shot commands against 100 MB answers stay under ${ONE_SHOT_CEILING_MB} MB`, async () => {
  for (const kind of KINDS) answered[kind] = 0;
  const peaks: string[] = [];
  // Each kind of answer in turn meets each command.
  for (let round = 0; round < KINDS.length; round++) {
    for (const args of [["ban", "76561198000000001", "10", "hostile"], ["warns", "76561198000000001"], ["doctor"]]) {
      const { peak, code } = await peakOf(args, 30);
      peaks.push(`${args[0]} ${peak.toFixed(1)} MB (exit ${code})`);
      expect(peak).toBeGreaterThan(20);
      expect(peak).toBeLessThan(ONE_SHOT_CEILING_MB);
    }
  }
  console.log(`one-shot commands: ${peaks.join(", ")}`);
  for (const kind of KINDS) expect(answered[kind]).toBeGreaterThan(0);
}, 180_000);
