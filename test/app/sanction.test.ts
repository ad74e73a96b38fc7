/**
 * The one-shot sanction operations (lib/app/sanction.ts) in-process, as `ban`, `unban`, `warn` and `warns` run them:
 * a real store in a temporary directory, the in-memory service over loopback, and the typed outcome each answers
 * with (cli/sanction.ts maps its status to the exit code; test/cli/sanctions.test.ts runs the binary end to end).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/app/config.ts";
import { issueSanction, unban, warns } from "../../lib/app/sanction.ts";
import { type Session, openSession } from "../../lib/app/session.ts";
import type { Watched } from "../../lib/app/service.ts";
import { memoryLogger } from "../../lib/log.ts";
import { onlineCache } from "../../lib/players/online.ts";
import { SEED_IDS, startSandbox, type Sandbox } from "../../lib/sandbox/index.ts";
import { sanctionQueues } from "../../lib/sanctions/index.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";

const KEY = "app-sanction-key-7c2e94";
const { alice: ALICE, bob: BOB, carol: CAROL } = SEED_IDS.steamid64;
const USERS = SEED_IDS.users;
const DOWN = "http://127.0.0.1:1/sandbox/v1";

let sb: Sandbox;
beforeAll(async () => {
  sb = await startSandbox({ key: KEY });
});
afterAll(() => sb?.stop());

/** A session on its own storage directory (or `dir`), as a command line opens it; `env` overrides the service. */
async function session(env: Record<string, string> = {}, dir = mkdtempSync(join(tmpdir(), "hub-app-"))) {
  const loaded = await loadConfig({
    env: {
      ...sandboxEnv(sb, dir),
      ...env,
    },
    cwd: dir,
  });
  if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
  const watched: Watched[] = [];
  const s: Session = openSession({ config: async () => loaded.config, logger: memoryLogger(), watched });
  return Object.assign(s, { dir });
}
const queued = async (s: Session) => {
  const q = sanctionQueues(await s.store());
  return [(await q.ban.list()).length, (await q.unban.list()).length, (await q.warning.list()).length];
};

describe("issueSanction", () => {
  test("a ban delivered: the service's ban id, the sentence, --as as the creator", async () => {
    const s = await session();
    const o = await issueSanction(s, { kind: "ban", player: "STEAM_0:1:26039971", length: "1d12h", reason: "spam" });
    const ban = [...sb.state.bans.values()].filter((b) => b.user_id === USERS.alice).at(-1)!;
    expect(o).toMatchObject({
      status: "delivered",
      kind: "ban",
      target: { identifier: ALICE, type: "STEAM" },
      seconds: 129_600,
      length: "1d 12h",
      creator: null,
      banId: ban.id,
    });
    const as = await issueSanction(s, { kind: "ban", player: ALICE, length: "90", reason: "x", as: CAROL });
    expect(as).toMatchObject({ status: "delivered", creator: { identifier: CAROL } });
    expect(sb.state.bans.get((as as { banId: string }).banId)).toMatchObject({ creator_id: USERS.carol });
  });

  test("refused (--as without the permission), invalid length, unknown user: nothing stays queued", async () => {
    const s = await session();
    const refused = await issueSanction(s, { kind: "ban", player: ALICE, length: "90", reason: "x", as: BOB });
    expect(refused).toEqual({
      status: "refused",
      message: `VyHub refused the ban of ${ALICE}: POST /ban/: 403 Missing properties: ban_edit (missing_properties)`,
    });
    expect(await issueSanction(s, { kind: "ban", player: ALICE, length: "soon", reason: "x" })).toMatchObject({
      status: "invalid",
    });
    const unknown = await issueSanction(s, {
      kind: "warning",
      player: "user:00000000-0000-4000-8000-00000000dead",
      reason: "x",
    });
    expect(unknown.status).toBe("not_found");
    expect(await queued(s)).toEqual([0, 0, 0]);
  });

  test("nicks: several online players match (ambiguous), none (not_found); --as errors say so", async () => {
    const s = await session();
    const players = [
      { id: ALICE, name: "Sam", user_id: null },
      { id: BOB, name: "sam", user_id: null },
    ];
    await onlineCache(await s.store()).set({ user_type: "STEAM", players });
    expect(await issueSanction(s, { kind: "warning", player: "Sam", reason: "x" })).toMatchObject({
      status: "ambiguous",
    });
    const as = await issueSanction(s, { kind: "warning", player: ALICE, reason: "x", as: "nobody" });
    expect(as.status).toBe("not_found");
    expect((as as { message: string }).message).toStartWith("--as: ");
  });

  test("--as names a player by the whole nick only: part of one borrows nobody's rights", async () => {
    const s = await session();
    const players = [{ id: CAROL, name: "ModeratorAdmin", user_id: USERS.carol }];
    await onlineCache(await s.store()).set({ user_type: "STEAM", players });
    const part = await issueSanction(s, { kind: "warning", player: ALICE, reason: "x", as: "Mod" });
    expect(part.status).toBe("not_found");
    expect((part as { message: string }).message).toStartWith('--as: no online player is named "Mod"');
    expect(await queued(s)).toEqual([0, 0, 0]);
    // As <player>, part of a nick still names its player; the whole nick, in any case, names them for --as.
    const whole = await issueSanction(s, { kind: "warning", player: "moderator", reason: "x", as: "moderatoradmin" });
    expect(whole).toMatchObject({ status: "delivered", creator: { user_id: USERS.carol } });
  });

  test("service down: the bundle unknown (nothing queued); with it cached, queued with why", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    const down = await session({ HUB_API_URL: DOWN }, dir);
    const none = await issueSanction(down, { kind: "ban", player: ALICE, length: "30m", reason: "r" });
    expect(none.status).toBe("unreachable");
    expect((none as { message: string }).message).toStartWith(
      "nothing was queued: this server's serverbundle is unknown",
    );
    expect((await warns(await session({}, dir), { player: ALICE })).status).toBe("listed"); // caches the record

    const again = await session({ HUB_API_URL: DOWN }, dir);
    const o = await issueSanction(again, { kind: "warning", player: ALICE, reason: "later" });
    expect(o).toMatchObject({ status: "queued", kind: "warning", autoBanned: null });
    if (o.status !== "queued") throw new Error("queued");
    expect(o.error).toContain("ECONNREFUSED");
    expect(o.message).toStartWith(`Warning for ${ALICE} is queued and will be sent to VyHub. Reason: later (`);
    expect(await queued(again)).toEqual([0, 0, 1]);
  });

  test("a cached record of another server (api.server_id changed since) names no bundle: asked, not used", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    await warns(await session({}, dir), { player: ALICE }); // caches this server's record
    const other = "00000000-0000-4000-8000-000000000001";
    const moved = await session({ HUB_API_URL: DOWN, HUB_API_SERVER_ID: other }, dir);
    const o = await issueSanction(moved, { kind: "ban", player: ALICE, length: "30m", reason: "r" });
    expect(o.status).toBe("unreachable");
    expect((o as { message: string }).message).toStartWith("nothing was queued: this server's serverbundle is unknown");
    expect(await queued(moved)).toEqual([0, 0, 0]);
  });

  test("a refused key with the entry queued: credentials, and the entry kept", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    await warns(await session({}, dir), { player: ALICE }); // caches the server record
    const s = await session({ HUB_API_KEY: "not-the-key-0000000000" }, dir);
    const o = await issueSanction(s, { kind: "ban", player: ALICE, length: "perm", reason: "r" });
    expect(o.status).toBe("credentials");
    expect((o as { message: string }).message).toContain("the ban stays queued (nothing is lost)");
    expect(await queued(s)).toEqual([1, 0, 0]);
  });
});

describe("a redirect in answer to a write (a proxy, http → https)", () => {
  test("never a delivery, and never followed: the write is sent once and its entry waits", async () => {
    // Between hub-agent and the service: POST /ban/ is passed on, then answered with a 307 to itself (a write
    // the redirect would send again); POST /warning/ is answered with a 301 (which fetch follows as a GET, whose
    // list answer would read as a delivery). Everything else passes through.
    const origin = new URL(sb.url).origin;
    const pass = async (req: Request, u: URL) =>
      fetch(origin + u.pathname + u.search, {
        method: req.method,
        headers: req.headers,
        body: req.method === "GET" ? undefined : await req.text(),
      });
    using proxy = Bun.serve({
      port: 0,
      async fetch(req) {
        const u = new URL(req.url);
        if (req.method === "POST" && u.pathname.endsWith("/ban/")) {
          await (await pass(req, u)).arrayBuffer();
          return new Response(null, { status: 307, headers: { location: req.url } });
        }
        if (req.method === "POST" && u.pathname.endsWith("/warning/"))
          return new Response(null, { status: 301, headers: { location: req.url } });
        return pass(req, u);
      },
    });
    const s = await session({ HUB_API_URL: `http://127.0.0.1:${proxy.port}/sandbox/v1` });
    const ban = await issueSanction(s, { kind: "ban", player: ALICE, length: "30m", reason: "redirected ban" });
    const warning = await issueSanction(s, { kind: "warning", player: BOB, reason: "redirected warning" });
    expect([ban.status, warning.status]).toEqual(["queued", "queued"]);
    expect((warning as { error: string }).error).toEndWith(
      `POST /warning/: 301 Moved Permanently, to http://127.0.0.1:${proxy.port}/sandbox/v1/warning/`,
    );
    expect([...sb.state.bans.values()].filter((b) => b.reason === "redirected ban")).toHaveLength(1);
    expect([...sb.state.warnings.values()].filter((w) => w.reason === "redirected warning")).toHaveLength(0);
    expect(await queued(s)).toEqual([1, 0, 1]);
  });
});

describe("unban and warns", () => {
  test("unban offline cancels the queued ban; online it is delivered", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    await warns(await session({}, dir), { player: BOB });
    const down = await session({ HUB_API_URL: DOWN }, dir);
    expect((await issueSanction(down, { kind: "ban", player: BOB, length: "1h", reason: "r" })).status).toBe("queued");
    const o = await unban(down, { player: BOB });
    expect(o).toMatchObject({ status: "queued", kind: "unban", cancelled: 1 });
    if (o.status !== "queued") throw new Error("queued");
    expect(o.notes).toHaveLength(1);
    expect((await unban(await session({}, dir), { player: BOB })).status).toBe("delivered");
  });

  test("--as, the service down: VyHub checks that user first, so nothing counts here until it has", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    await warns(await session({}, dir), { player: BOB }); // caches the server record
    const down = await session({ HUB_API_URL: DOWN }, dir);
    const q = sanctionQueues(await down.store());
    const ban = await issueSanction(down, { kind: "ban", player: BOB, length: "1h", reason: "r", as: CAROL });
    expect(ban.status).toBe("queued");
    expect((ban as { message: string }).message).toContain("it takes effect once VyHub accepts it");
    expect((await q.ban.list()).map((e) => e.data.enforce)).toEqual(["on_accept"]);
    // The console's own ban of Alice counts at once; an unban --as spares it (only VyHub may lift it, once it checked).
    expect((await issueSanction(down, { kind: "ban", player: ALICE, length: "1h", reason: "r" })).status).toBe(
      "queued",
    );
    const lift = await unban(down, { player: ALICE, as: CAROL });
    expect(lift).toMatchObject({ status: "queued", kind: "unban", cancelled: 0 });
    expect((lift as { message: string }).message).toContain("it takes effect once VyHub accepts it");
    expect((await q.ban.list()).map((e) => e.data.enforce).sort()).toEqual(["now", "on_accept"]);
  });

  test("warns: the player's warnings newest first; unreachable when the service is down", async () => {
    const s = await session();
    await issueSanction(s, { kind: "warning", player: CAROL, reason: "first" });
    await issueSanction(s, { kind: "warning", player: CAROL, reason: "second" });
    const o = await warns(s, { player: CAROL });
    if (o.status !== "listed") throw new Error(o.status);
    expect(o.warnings.slice(0, 2)).toMatchObject([
      { reason: "second", creator: null, active: true },
      { reason: "first" },
    ]);
    expect(o.lines[0]).toBe(`Warnings of ${CAROL} (${o.total}):`);
    expect((await warns(await session({ HUB_API_URL: DOWN }), { player: CAROL })).status).toBe("unreachable");
  });
});

describe("a game whose players are known by name (OpenArena)", () => {
  const OPENARENA = {
    HUB_GAME_BRIDGE: "q3rcon",
    HUB_GAME_PRESET: "openarena",
    HUB_GAME_RCON_HOST: "127.0.0.1",
    HUB_GAME_RCON_PORT: "9",
    HUB_GAME_RCON_PASSWORD: "secret-pw",
  };

  test("an offline player never seen is banned by the name the game knows, queued while the service is down", async () => {
    const dir = mkdtempSync(join(tmpdir(), "hub-app-"));
    await warns(await session({}, dir), { player: BOB }); // caches the server record
    const s = await session({ ...OPENARENA, HUB_API_URL: DOWN }, dir);
    // No list of online players at all (no `run` yet): the name is the game's id.
    const o = await issueSanction(s, { kind: "ban", player: "^1Gri^7efer", length: "1h", reason: "spawn camping" });
    expect(o).toMatchObject({ status: "queued", kind: "ban" });
    const [entry] = await sanctionQueues(await s.store()).ban.list();
    expect(entry?.data.target).toMatchObject({ identifier: "Griefer", type: "CENTRAL" });
  });

  test("delivered as the CENTRAL user of that name; a name seen online still resolves to its player", async () => {
    const s = await session(OPENARENA);
    const o = await issueSanction(s, { kind: "ban", player: "Camper", length: "1h", reason: "camping" });
    expect(o).toMatchObject({ status: "delivered", kind: "ban" });
    const user = [...sb.state.users.values()].find((u) => u.type === "CENTRAL" && u.identifier === "Camper");
    expect(user).toBeDefined();
    await onlineCache(await s.store()).set({
      user_type: "CENTRAL",
      players: [{ id: "Sniper Wolf", name: "Sniper Wolf", user_id: null }],
    });
    const w = await issueSanction(s, { kind: "warning", player: "sniper", reason: "language" });
    expect(w).toMatchObject({ status: "delivered", kind: "warning" });
    expect([...sb.state.users.values()].some((u) => u.type === "CENTRAL" && u.identifier === "Sniper Wolf")).toBe(true);
  });
});
