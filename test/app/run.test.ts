/**
 * The `run` lifecycle in-process (lib/app/run.ts), as `hub-agent run` and `demo` use it: each way a run ends is a
 * typed outcome (the command maps it to its exit code; test/cli/ checks those end to end with the binary). Over the
 * in-memory service and the simulated game, with stop and reload requests through the RunControl signals would use.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig, type Config, type LoadResult } from "../../lib/app/config.ts";
import { RunControl, runAgent, type RunOutcome } from "../../lib/app/run.ts";
import { onceOutcome } from "../../lib/app/run-serving.ts";
import type { OnceSummary } from "../../lib/monitor/once.ts";
import type { QueueSummary } from "../../lib/queues.ts";
import { systemClock as clock } from "../../lib/clock.ts";
import { SimGame } from "../../lib/game/sim.ts";
import { memoryLogger } from "../../lib/log.ts";
import { startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { holdInstance } from "../../lib/store/instance.ts";
import { until } from "../support/until.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

let sb: Sandbox;
beforeAll(async () => void (sb = await startSandbox()));
afterAll(() => sb.stop());

async function load(env: Record<string, string> = {}): Promise<LoadResult & { ok: true }> {
  const dir = mkdtempSync(join(tmpdir(), "hub-app-run-"));
  const loaded = await loadConfig({
    env: {
      ...sandboxEnv(sb, dir),
      HUB_API_TIMEOUT: "1",
      ...env,
    },
    cwd: dir,
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  return loaded;
}

function start(config: Config, opts: { once?: boolean; reread?: () => Promise<LoadResult> } = {}) {
  const logger = memoryLogger();
  const control = new RunControl();
  const game = new SimGame({ clock, logger, map: "sim_island" });
  const gameStart = game.start.bind(game);
  let gameStarts = 0;
  game.start = () => (gameStarts++, gameStart());
  const gameStop = game.stop.bind(game);
  let gameStops = 0;
  game.stop = () => (gameStops++, gameStop());
  const run = runAgent({ config, bridge: game, clock, logger, control, ...opts });
  const logged = (text: string) => logger.lines.some((l) => l.msg.includes(text));
  const readies = () => logger.lines.filter((l) => l.msg === "ready").length;
  return { run, control, logged, readies, gameStarts: () => gameStarts, gameStops: () => gameStops };
}

test("served until a stop: ready, then stopped within its budget", async () => {
  const { config } = await load();
  const r = start(config);
  await until(() => r.readies() === 1, "ready");
  expect(r.control.stop("SIGTERM")).toBe(true);
  expect(r.control.stop("SIGTERM")).toBe(false); // the second one: the process gives up waiting (cli/run-signals.ts)
  expect(await r.run).toEqual({ kind: "stopped" } satisfies RunOutcome);
  expect(r.logged("stopping (SIGTERM): finishing work in flight")).toBe(true);
});

test("a stop asked for before the agent is served stops it as soon as it is there, the game never started", async () => {
  const { config } = await load();
  const r = start(config);
  r.control.stop("SIGINT");
  expect(await r.run).toEqual({ kind: "stopped" });
  expect(r.gameStarts()).toBe(0);
  expect(r.readies()).toBe(0);
});

test("another run holds the store: instance-held, nothing started", async () => {
  const { config } = await load();
  const other = await holdInstance(config.storage.dir);
  try {
    const r = start(config);
    const outcome = await r.run;
    expect(outcome.kind).toBe("instance-held");
    expect((outcome as { line: string }).line).toContain(`pid ${process.pid}`);
    expect(r.gameStarts()).toBe(0);
  } finally {
    await other.release();
  }
});

test("--once: one round, then its summary; unreachable with nothing cached; a refused key named", async () => {
  const ok = await start((await load()).config, { once: true }).run;
  expect(ok).toMatchObject({ kind: "once", waiting: 0, summary: { server_record: "api" } });

  const down = await start((await load({ HUB_API_URL: "http://127.0.0.1:9/v1" })).config, { once: true }).run;
  expect(down).toMatchObject({ kind: "unreachable", summary: { server_record: null } });

  const refused = await start((await load({ HUB_API_KEY: "not-the-key" })).config, { once: true }).run;
  expect(refused.kind).toBe("credentials");
  expect((refused as { line: string }).line).toContain("key");
});

test("a reload applies what can change live and serves again; a bad file keeps the running configuration", async () => {
  const loaded = await load();
  let next: LoadResult = loaded;
  const r = start(loaded.config, { reread: async () => next });
  await until(() => r.readies() === 1, "ready");
  next = { ok: false, problems: ["api.url: not a URL"], file: "/etc/hub-agent.toml" } as LoadResult;
  r.control.hangup();
  await until(() => r.logged("is not valid, the running configuration stays"), "the bad file refused");
  next = await load({ HUB_STORAGE_DIR: loaded.config.storage.dir, HUB_INTERVALS_ADVERTS: "123" });
  r.control.hangup();
  await until(() => r.logged("applying intervals.adverts"), "the reload applied");
  await until(() => r.readies() === 2, "served again");
  expect(r.gameStops()).toBe(0); // the game bridge keeps running
  r.control.stop("SIGTERM");
  expect(await r.run).toEqual({ kind: "stopped" });
});

test("--once's verdict: unreachable when the service did not answer, failed when jobs failed, queued when entries wait", () => {
  const job = (name: string, ok: boolean) => ({ name, ran: true, ok, error: ok ? null : "boom" });
  const summary = (o: { failed?: string[]; reachable?: boolean | null }): OnceSummary => ({
    server_record: "cache",
    jobs: [job("bans", !o.failed?.includes("bans")), job("status", !o.failed?.includes("status"))],
    failed_jobs: o.failed ?? [],
    queues: [],
    service: { reachable: o.reachable ?? true, key_accepted: true, last_error: "connection refused" },
  });
  const queue = (waiting: number) => [{ queue: "ban", entries: waiting, waiting } as QueueSummary];
  const logger = memoryLogger();
  const down = onceOutcome(summary({ failed: ["bans", "status"], reachable: false }), queue(0), logger);
  expect(down).toMatchObject({
    kind: "unreachable",
    line: "the service did not answer (connection refused): 2 of 2 jobs failed (bans, status)",
  });
  const downQueued = onceOutcome(summary({ reachable: false }), queue(1), logger);
  expect(downQueued).toMatchObject({ kind: "unreachable" });
  expect((downQueued as { line: string }).line).toContain("still queued (ban: 1)");
  const failed = onceOutcome(summary({ failed: ["bans"] }), queue(0), logger);
  expect(failed).toMatchObject({ kind: "failed", line: "1 of 2 jobs failed (bans): see the log above" });
  expect(onceOutcome(summary({}), queue(2), logger)).toMatchObject({ kind: "once", waiting: 2 });
  expect(onceOutcome(summary({}), queue(0), logger)).toMatchObject({ kind: "once", waiting: 0 });
});
