/**
 * Another local user and a storage directory open to everyone (mode 0777, as `mkdir -m 777` leaves it): a real second
 * user (made with useradd, run with runuser) plants a ban entry in it, as the console would have written it. The
 * compiled `run --once` and `ban` must refuse the store (exit 8, one line naming the planted file and the fix) and
 * deliver nothing; once the operator has removed it, the store is corrected to 0700 and used. Needs root.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { binary, hubBinary } from "../cli/binary.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

const USER = `hubplant${process.pid % 10_000}`;
const run = async (cmd: string[]) => {
  const p = spawn(cmd, { stdout: "pipe", stderr: "pipe" });
  const [code, out, err] = await Promise.all([p.exited, new Response(p.stdout).text(), new Response(p.stderr).text()]);
  return { code, out: out + err };
};
const missing =
  process.getuid?.() !== 0
    ? "root (useradd, runuser)"
    : !Bun.which("useradd") || !Bun.which("runuser")
      ? "useradd and runuser (apt-get install passwd util-linux)"
      : undefined;
if (missing) console.warn(`SKIPPED: the planted-entry test needs ${missing}`);

/** What the console's `ban` would have queued: no creator, so sent with the server's own rights. */
function plantedBan() {
  const id = `${String(Date.now()).padStart(15, "0")}-${crypto.randomUUID()}`;
  const entry = {
    v: 1,
    id,
    createdAt: Date.now(),
    attempts: 0,
    data: {
      target: { identifier: "76561198000000777", type: "STEAM", user_id: null, name: "" },
      length: null,
      reason: "planted",
      creator: null,
      created_on: new Date().toISOString(),
      status: "ACTIVE",
      serverbundle_id: sb.bundleId,
      enforce: "now",
    },
  };
  return { id, entry };
}

let sb: Sandbox;
useSandbox((s) => (sb = s));
beforeAll(async () => {
  if (missing) return;
  await binary();
  const made = await run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", USER]);
  if (made.code !== 0 && !made.out.includes("already exists")) throw new Error(`useradd: ${made.out}`);
});
afterAll(async () => {
  if (!missing) await run(["userdel", USER]);
});

test.skipIf(missing !== undefined)(
  "a ban entry another user planted in a 0777 store: run and ban refuse the store, nothing is delivered",
  async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-owner-"));
    chmodSync(home, 0o755); // the other user may reach the store, as in /srv or a game server's directory
    const store = join(home, "store");
    mkdirSync(store);
    chmodSync(store, 0o777);
    const env = sandboxEnv(sb, store);
    const { id, entry } = plantedBan();
    const plant = `mkdir -p ${store}/queue/ban && printf '%s' '${JSON.stringify(entry)}' > ${store}/queue/ban/${id}`;
    const planted = await run(["runuser", "-u", USER, "--", "sh", "-c", plant]);
    expect(planted).toEqual({ code: 0, out: "" });
    const file = join(store, "queue", "ban", id);
    const line = `the store ${store} is open to other users (mode 0777) and holds ${join(store, "queue")}, which user ${USER}`;

    for (const args of [
      ["run", "--once"],
      ["ban", "76561198000000778", "1h", "cheating"],
      ["queue", "status"],
    ]) {
      const r = await hubBinary(args, { env, cwd: home });
      expect({ args, code: r.code }).toEqual({ args, code: 8 });
      expect(r.stderr).toContain(`error: ${line}`);
      expect(r.stderr).toContain(`(\`find ${store} ! -user 0\` lists it), then \`chmod 700 ${store}\``);
    }
    expect(sb.control.requests({ method: "POST", path: "/ban/" })).toEqual([]);
    expect(statSync(store).mode & 0o777).toBe(0o777);

    // The operator looks, removes what is not theirs: the store is corrected and used.
    rmSync(join(store, "queue"), { recursive: true });
    const r = await hubBinary(["ban", "76561198000000778", "1h", "cheating"], { env, cwd: home });
    expect(r.code).toBe(0);
    expect(statSync(store).mode & 0o777).toBe(0o700);
    expect(r.stderr).toContain(`the store ${store} was open to other users (mode 0777): corrected to 0700`);
    expect(existsSync(file)).toBe(false);
    const made = sb.control
      .requests({ method: "POST", path: "/ban/" })
      .map((q) => (q.body as { reason: string }).reason);
    expect(made).toEqual(["cheating"]);
  },
  60_000,
);

test.skipIf(missing !== undefined)(
  "a 0700 store whose queue folder links to a place another user can write: refused, nothing is delivered",
  async () => {
    const home = mkdtempSync(join(tmpdir(), "hub-owner-"));
    chmodSync(home, 0o755);
    const store = join(home, "store");
    mkdirSync(store, { mode: 0o700 });
    // Another disk, say, where the game server's user may write too.
    const shared = join(home, "shared-queue");
    mkdirSync(shared);
    chmodSync(shared, 0o1777);
    symlinkSync(shared, join(store, "queue"));
    const { id, entry } = plantedBan();
    const plant = `mkdir -p ${shared}/ban && printf '%s' '${JSON.stringify(entry)}' > ${shared}/ban/${id}`;
    expect(await run(["runuser", "-u", USER, "--", "sh", "-c", plant])).toEqual({ code: 0, out: "" });
    const env = sandboxEnv(sb, store);
    const link = join(store, "queue");
    const posts = () => sb.control.requests({ method: "POST", path: "/ban/" }).length;
    const before = posts();
    for (const args of [
      ["run", "--once"],
      ["ban", "76561198000000778", "1h", "cheating"],
    ]) {
      const r = await hubBinary(args, { env, cwd: home });
      expect({ args, code: r.code }).toEqual({ args, code: 8 });
      expect(r.stderr).toContain(`error: the store ${store} holds ${link}, a link to ${shared}:`);
    }
    expect(posts()).toBe(before);
  },
  60_000,
);
