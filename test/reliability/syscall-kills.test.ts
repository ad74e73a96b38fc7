/**
 * `ban` killed before each of its file-system calls in turn: strace delivers SIGKILL on entry to the nth mkdir,
 * openat, write, fsync, rename, link, unlink or rmdir of the compiled binary (which does its file operations blocking,
 * lib/fsio.ts), for n = 1, 2, … until a run gets through. After every kill no queue entry is torn and each entry
 * has its index markers (lib/store/keyindex.ts: written before the entry, removed after it); after one
 * delivery round per storage directory each ban is at the service at most once, and exactly once when its entry
 * had been written or the command had answered. Each kill has its own storage directory (in a shared one every
 * entry left behind adds calls to the next run's round, so n would never catch up); the delivery round meets what
 * the killed process left there (its lock, a temp file, an uncertain entry).
 */
import { beforeAll, expect, test } from "bun:test";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { playerIndexKeys, sanctionQueues } from "../../lib/sanctions/index.ts";
import { segment } from "../../lib/store/keyindex.ts";
import { openStore } from "../../lib/store/index.ts";
import { binary } from "../cli/binary.ts";
import { spawn } from "../support/procs.ts";
import { deliverAll, laneEnv, newPlayer } from "./scenarios.ts";

const SYSCALLS = ["mkdir", "openat", "write", "fsync", "rename", "link", "unlink", "rmdir"];
/** More calls of one kind than `ban` makes (about 50 openat, fewer of the rest): still killed at this n, it hangs. */
const MAX_CALLS = 150;

const strace = Bun.which("strace");
/** strace needs ptrace, which some containers forbid. */
const canTrace =
  strace !== null && (await spawn(["strace", "-qq", "-o", "/dev/null", "true"], { stdout: "ignore" }).exited) === 0;
const missing = !strace ? "strace (apt-get install strace)" : !canTrace ? "ptrace (strace true failed)" : undefined;
if (missing) console.warn(`SKIPPED: the kill-at-every-file-call test needs ${missing}`);

let sb: Sandbox;
let bin: string;
useSandbox((s) => (sb = s));
beforeAll(async () => void (bin = await binary()));

/** Queue entries (their text), every file that is not whole JSON or was quarantined, and entries without a marker. */
async function scan(dir: string): Promise<{ entries: string[]; torn: string[]; unindexed: string[] }> {
  const entries: string[] = [];
  const torn: string[] = [];
  const unindexed: string[] = [];
  for (const q of ["ban", "unban", "warning"]) {
    const at = join(dir, "queue", q);
    if (!existsSync(at)) continue;
    for (const f of readdirSync(at)) {
      if (f.includes(".tmp-")) continue; // a writer's temp file: never read as an entry
      const text = readFileSync(join(at, f), "utf8");
      try {
        const entry = JSON.parse(text);
        entries.push(text);
        for (const key of playerIndexKeys(entry.data.target))
          if (!existsSync(join(dir, "index", q, await segment(key), f))) unindexed.push(`queue/${q}/${f} ${key}`);
      } catch {
        torn.push(`queue/${q}/${f}`);
      }
    }
  }
  if (existsSync(join(dir, "corrupt")))
    for (const f of readdirSync(join(dir, "corrupt"), { recursive: true })) torn.push(`corrupt/${f}`);
  return { entries, torn, unindexed };
}

test.skipIf(missing !== undefined)(
  "SIGKILL before each file call of ban: no torn entry, each ban at most once, exactly once when queued or answered",
  async () => {
    const intents: { id: string; reason: string; kept: boolean }[] = [];
    const envs: Record<string, string>[] = [];
    let kills = 0;
    for (const call of SYSCALLS) {
      for (let n = 1; ; n++) {
        expect(n).toBeLessThan(MAX_CALLS);
        const env = laneEnv(sb);
        const id = newPlayer();
        const reason = `killed before ${call} #${n}`;
        const p = spawn(
          ["strace", "-f", "-qq", "-o", "/dev/null", "-e", `trace=${call}`].concat([
            "-e",
            `inject=${call}:signal=SIGKILL:when=${n}`,
            bin,
            "ban",
            id,
            "30m",
            reason,
          ]),
          { env, cwd: env.HUB_STORAGE_DIR, stdout: "pipe", stderr: "pipe" },
        );
        const [out, err, code] = await Promise.all([
          new Response(p.stdout).text(),
          new Response(p.stderr).text(),
          p.exited,
        ]);
        const killed = p.signalCode === "SIGKILL" || code === 128 + 9;
        const { entries, torn, unindexed } = await scan(env.HUB_STORAGE_DIR as string);
        expect({ after: reason, torn, unindexed }).toEqual({ after: reason, torn: [], unindexed: [] });
        // Kept: the entry is on disk, or the command said the ban was made or queued.
        const kept = entries.some((t) => t.includes(JSON.stringify(reason))) || out.includes(id);
        intents.push({ id, reason, kept });
        if (entries.length) envs.push(env); // only a directory with an entry left has anything to deliver
        if (!killed) {
          expect({ reason, code, err }).toEqual({ reason, code: 0, err: "" });
          break;
        }
        kills++;
      }
    }
    expect(await deliverAll({ sb, bin }, envs)).toBe(0);

    const wrong: string[] = [];
    for (const { id, reason, kept } of intents) {
      const user = sb.state.findUser(id, "STEAM");
      const made = [...sb.state.bans.values()].filter((b) => b.user_id === user?.id && b.reason === reason).length;
      if (made > 1 || (kept && made === 0)) wrong.push(`${reason}: ${made} bans${kept ? " (kept)" : ""}`);
    }
    expect(wrong).toEqual([]);
    for (const env of envs) {
      const q = sanctionQueues(await openStore({ dir: env.HUB_STORAGE_DIR as string }));
      expect([...(await q.ban.list()), ...(await q.unban.list()), ...(await q.warning.list())]).toEqual([]);
    }
    console.log(`syscall kills: ${kills} kills before ${SYSCALLS.join(", ")}; ${intents.length} bans, 0 torn`);
  },
  240_000,
);
