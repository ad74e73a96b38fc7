/**
 * Records the bytecode layout profiles that packaging/build.ts compiles with (`--bytecode-order`; docs/packaging.md,
 * "Bytecode layout"): builds hub-agent without them, runs it the ways operators start it, each run writing which
 * functions it loaded (BUN_BYTECODE_ORDER_OUT), and keeps the files in packaging/bytecode/. The most common way
 * comes first: `ban` typed with the service down, `queue status`, `--help`, then `run` (started once, so last).
 *
 * Profiles match functions by a hash of their syntax, so one recorded last month still applies to the functions
 * that did not change; record again when a large part of the program changed. Run: npm run build:order
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerSchema } from "../lib/api/schemas.ts";
import { startSandbox } from "../lib/sandbox/index.ts";
import { openStore } from "../lib/store/index.ts";
import examples from "../test/fixtures/api-examples.json";
import { build, ORDER_DIR, ORDER_FILES, ROOT } from "./build.ts";

const work = mkdtempSync(join(tmpdir(), "hub-order-"));
const bin = join(work, "hub-agent");
await build({ outfile: bin, order: false });

const out = join(ROOT, ORDER_DIR);
mkdirSync(out, { recursive: true });
const seeded = join(work, "seeded");
const server = examples["01 GET /server/{server_id}"].response.body;
await (await openStore({ dir: seeded })).cache("server", ServerSchema).set(server as never);
const data = join(work, "data");
const fresh = () => {
  rmSync(data, { recursive: true, force: true });
  cpSync(seeded, data, { recursive: true });
};
const env = (file: string, extra: Record<string, string> = {}) => ({
  PATH: process.env.PATH ?? "",
  HUB_API_URL: "http://127.0.0.1:9/record/v1", // nothing listens: the service is down
  HUB_API_KEY: "record-key-not-used",
  HUB_API_SERVER_ID: server.id,
  HUB_GAME_BRIDGE: "sim",
  HUB_STORAGE_DIR: data,
  BUN_BYTECODE_ORDER_OUT: join(out, file),
  ...extra,
});
function once(file: string, args: string[], ok: number[]) {
  fresh();
  const r = Bun.spawnSync([bin, ...args], { env: env(file), stdout: "ignore", stderr: "pipe" });
  if (!ok.includes(r.exitCode)) throw new Error(`${args.join(" ")} exited ${r.exitCode}: ${r.stderr.toString()}`);
}

const [ban, queue, help, run] = ORDER_FILES;
once(ban, ["ban", "76561198000000001", "1h", "record"], [6]);
once(queue, ["queue", "status", "--json"], [0]);
once(help, ["--help"], [0]);

// `run` against the in-memory service, with a player banned while it runs, then stopped as systemd stops it.
const sb = await startSandbox();
fresh();
const agent = Bun.spawn([bin, "run"], {
  env: env(run, { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId }),
  stdout: "ignore",
  stderr: "pipe",
});
await Bun.sleep(3000);
// Spawned, not spawnSync: the service in this process must answer meanwhile.
const banned = await Bun.spawn([bin, "ban", "76561198000000002", "1h", "record"], {
  env: env(`${run}.ban`, { HUB_API_URL: sb.url, HUB_API_KEY: sb.key, HUB_API_SERVER_ID: sb.serverId }),
  stdout: "ignore",
  stderr: "ignore",
}).exited;
await Bun.sleep(2000);
agent.kill("SIGTERM");
const code = await agent.exited;
await sb.stop();
rmSync(join(out, `${run}.ban`), { force: true });
if (code !== 0 || banned !== 0)
  throw new Error(`run exited ${code}, its ban ${banned}: ${await new Response(agent.stderr).text()}`);
rmSync(work, { recursive: true, force: true });

for (const f of ORDER_FILES) {
  const lines = readFileSync(join(out, f), "utf8").split("\n").length;
  console.log(`${ORDER_DIR}/${f}: ${lines} functions`);
}
