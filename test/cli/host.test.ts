/**
 * Several game servers on one host in one `hub-agent run` (servers.d; lib/app/host.ts), the compiled binary against
 * the in-memory service: each server its own agent and store; one server whose wrapped game keeps exiting starts
 * again with a growing pause while the others ban and kick as always; SIGHUP adds, removes and reloads servers,
 * leaving an unchanged one untouched; one-shot commands and `status` name the server.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { type AgentRun, jsonLines, logged } from "../support/agent-run.ts";
import { spawn } from "../support/procs.ts";
import { useSandbox } from "../support/sandbox.ts";
import { until } from "../support/until.ts";
import { binary, hub, hubBinary } from "./binary.ts";

let sb: Sandbox;
useSandbox((s) => (sb = s));
const root = mkdtempSync(join(tmpdir(), "host-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const ALICE = { id: "76561198012345671", name: "Alice" };
const CAROL = { id: "76561198123456783", name: "Carol" };
const DAVE = { id: "76561198000000042", name: "Dave" };
const ERIN = { id: "76561198000000055", name: "Erin" };

/** A host: the shared file (the service, the simulated game), and servers.d with `servers`. */
function host(servers: Record<string, string>): string {
  const dir = mkdtempSync(join(root, "host-"));
  writeFileSync(
    join(dir, "hub-agent.toml"),
    `[api]\nurl = "${sb.url}"\nkey = "${sb.key}"\nserver_id = "${sb.serverId}"\ntimeout = 2\n\n[game]\nbridge = "sim"\n`,
  );
  mkdirSync(join(dir, "servers.d"));
  for (const [name, text] of Object.entries(servers)) writeFileSync(join(dir, "servers.d", `${name}.toml`), text);
  return dir;
}

/** A simulated server with these players online, its game's actions in <dir>/<name>-actions.jsonl. */
const simServer = (dir: string, name: string, players: { id: string; name: string }[], extra = "") =>
  `[api]\nserver_id = "${serverIdOf(dir, name)}"\n\n${simGame(dir, name, players)}${extra}`;
const simGame = (dir: string, name: string, players: { id: string; name: string }[]) =>
  `[game.sim]\nplayers = [${players.map((p) => `"${p.id}:${p.name}"`).join(", ")}]\nactions_log = "${join(dir, `${name}-actions.jsonl`)}"\n`;

/** Each server its own server at VyHub (in the sandbox's bundle), the same one each time its file is written. */
const serverIds = new Map<string, string>();
function serverIdOf(dir: string, name: string): string {
  const key = join(dir, name);
  const id = serverIds.get(key) ?? sb.state.addServer({ name, serverbundle_id: sb.bundleId }).id;
  serverIds.set(key, id);
  return id;
}

/** A host of two simulated servers: alpha with Alice online, beta with nobody. */
function twoServers(): string {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", []));
  return dir;
}

const allReady = async (run: AgentRun, ...names: string[]) => {
  for (const name of names) await logged(run, said(run, name, "ready"), `${name} ready`);
};

type HostBody = (run: AgentRun) => Promise<void>;

/** A host run (startHost) for `body`, stopped by SIGTERM after it, also when it fails; it must exit 0. */
async function withHost(dir: string, ...rest: [HostBody] | [string[], Record<string, string>, HostBody]) {
  const body = rest.at(-1) as HostBody;
  const run = rest.length === 3 ? await startHost(dir, rest[0], rest[1]) : await startHost(dir);
  try {
    await body(run);
  } finally {
    run.proc.kill("SIGTERM");
    expect(await run.proc.exited).toBe(0);
  }
}

async function startHost(dir: string, args: string[] = [], env: Record<string, string> = {}): Promise<AgentRun> {
  const log = join(dir, "run.log");
  const proc = spawn([await binary(), "run", "--log-format", "json", ...args], {
    cwd: dir,
    env: { PATH: process.env.PATH ?? "", ...env },
    stdin: "ignore",
    stdout: "ignore",
    stderr: Bun.file(log),
  });
  return { proc, log, lines: () => jsonLines(log) };
}

const said = (run: AgentRun, tag: string, msg: string | RegExp) => (l: Record<string, unknown>) =>
  l.tag === tag && (typeof msg === "string" ? l.msg === msg : msg.test(String(l.msg)));
const count = (run: AgentRun, tag: string, msg: string) => run.lines().filter(said(run, tag, msg)).length;
const kicked = (dir: string, name: string, id: string) =>
  jsonLines(join(dir, `${name}-actions.jsonl`)).some((a) => a.type === "kick" && a.player === id);

test("one server's game keeps exiting: it starts again after 1 s, then 2 s; the other bans and kicks as always", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(
    join(dir, "servers.d", "beta.toml"),
    `[game]\nbridge = "wrapper"\npreset = "openarena"\n\n[game.wrapper]\ncommand = ["sh", "-c", "exit 3"]\n`,
  );
  await withHost(dir, async (run) => {
    await logged(run, (l) => l.msg === "hosting 2 servers: alpha, beta", "the host's first line");
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    await logged(run, said(run, "beta", /ended .*; starting it again in 1 s$/), "beta's first restart");
    await logged(run, said(run, "beta", /ended .*; starting it again in 2 s$/), "beta's second restart", 20_000);

    const ban = await hub(["ban", ALICE.id, "1h", "griefing", "--server", "alpha"], { cwd: dir });
    expect(ban.code).toBe(0);
    // By name once alpha's run has saved who is online (its first poll), by id before.
    expect(ban.stdout.trim()).toMatch(/^(Alice|76561198012345671) has been banned for 1h\. Reason: griefing$/);
    await until(() => kicked(dir, "alpha", ALICE.id), "Alice kicked in alpha's game");
    await logged(
      run,
      said(run, "alpha:bans", /^ban of (Alice|76561198012345671) from another hub-agent process/),
      "alpha took it",
    );

    // Each server has its own store; `status` shows both, and exits 1 while one of them is not running.
    const status = await hub(["status", "--json"], { cwd: dir });
    const views = JSON.parse(status.stdout).servers;
    expect(Object.keys(views)).toEqual(["alpha", "beta"]);
    expect(views.alpha.run.alive).toBe(true);
    expect(JSON.stringify(views.beta)).toContain(join(dir, "data", "servers", "beta", "corrupt"));
    const text = await hub(["status"], { cwd: dir });
    expect(text.stdout).toContain(`none (${join(dir, "data", "servers", "alpha", "corrupt")})`);
    expect(text.stdout).toMatch(/^── alpha ─+$/m);
    expect(text.stdout).toMatch(/^── beta ─+$/m);

    // Without --server, a command for one server is refused in one line naming them.
    const unnamed = await hub(["ban", ALICE.id, "1h", "x"], { cwd: dir });
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain(
      `${join(dir, "servers.d")} holds 2 servers (alpha, beta): name one with --server <name>`,
    );
  });
}, 60_000);

test("SIGHUP: a new file starts its server, a removed one stops, a changed one reloads, an unchanged one goes on", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", []));
  writeFileSync(join(dir, "servers.d", "delta.toml"), simServer(dir, "delta", []));
  writeFileSync(join(dir, "servers.d", "epsilon.toml"), simServer(dir, "epsilon", []));
  writeFileSync(join(dir, "servers.d", "zeta.toml"), simServer(dir, "zeta", []));
  await withHost(dir, async (run) => {
    for (const name of ["alpha", "beta", "delta", "epsilon", "zeta"])
      await logged(run, said(run, name, "ready"), `${name} ready`);
    // A change only a start applies (the game's side): that server's agent starts again, at once, with it.
    writeFileSync(join(dir, "servers.d", "zeta.toml"), simServer(dir, "zeta", [DAVE]));
    writeFileSync(join(dir, "servers.d", "epsilon.toml"), "[intervals]\nstatus = soon\n"); // a typo
    writeFileSync(join(dir, "servers.d", "gamma.toml"), simServer(dir, "gamma", [CAROL]));
    unlinkSync(join(dir, "servers.d", "beta.toml"));
    writeFileSync(
      join(dir, "servers.d", "alpha.toml"),
      simServer(dir, "alpha", [ALICE], "\n[intervals]\nstatus = 61\n"),
    );
    run.proc.kill("SIGHUP");
    await logged(run, said(run, "gamma", "ready"), "gamma started");
    await logged(run, said(run, "beta", "stopped"), "beta stopped");
    await logged(
      run,
      said(run, "alpha", /^SIGHUP: .*alpha\.toml is valid; applying intervals\.status/),
      "alpha reloaded",
    );
    await logged(run, said(run, "delta", /^SIGHUP: .*delta\.toml is valid and unchanged$/), "delta unchanged");
    expect(count(run, "delta", "ready")).toBe(1); // not started again
    await logged(
      run,
      said(run, "zeta", /^SIGHUP: game\.sim\.players changed: starting this server's agent again with them$/),
      "zeta restarting",
    );
    await until(() => count(run, "zeta", "ready") === 2, "zeta ready again");
    const zetaPlayers = async () =>
      JSON.parse((await hub(["status", "--json", "--server", "zeta"], { cwd: dir })).stdout).snapshot?.players;
    await until(async () => (await zetaPlayers())?.[0]?.name === DAVE.name, "Dave online in zeta's status");
    // A broken file keeps that server's running configuration, in one line.
    await logged(
      run,
      said(run, "epsilon", /^SIGHUP: .*epsilon\.toml is not valid, the running configuration stays: /),
      "epsilon kept",
    );
    expect(count(run, "epsilon", "ready")).toBe(1);
    expect(run.lines().some(said(run, "epsilon", "stopped"))).toBe(false);

    // The new server works: Carol is banned through it and kicked in its game.
    const ban = await hub(["ban", CAROL.id, "1h", "spam", "--server", "gamma"], { cwd: dir });
    expect(ban.code).toBe(0);
    await until(() => kicked(dir, "gamma", CAROL.id), "Carol kicked in gamma's game");
    const gone = await hub(["queue", "status", "--server", "beta"], { cwd: dir });
    expect(gone.code).toBe(2);
    expect(gone.stderr).toContain("no server is named beta");
  });
}, 60_000);

test("two servers on one store are refused in one line; the other runs", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), `[storage]\ndir = "${join(dir, "shared-store")}"\n`);
  writeFileSync(join(dir, "servers.d", "beta.toml"), `[storage]\ndir = "${join(dir, "shared-store")}"\n`);
  await withHost(dir, async (run) => {
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    await logged(
      run,
      said(run, "beta", /is not valid, so it is not running: beta: storage\.dir .* is also alpha's/),
      "beta refused",
    );
  });
}, 60_000);

test("the shared http.listen is the host's page: every server by name in /status.json, /metrics and /readyz", async () => {
  const dir = host({});
  writeFileSync(join(dir, "hub-agent.toml"), `[http]\nlisten = "127.0.0.1:0"\n\n`, { flag: "a" });
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ERIN])); // banned by no test
  writeFileSync(
    join(dir, "servers.d", "beta.toml"),
    `[game]\nbridge = "wrapper"\npreset = "openarena"\n\n[game.wrapper]\ncommand = ["sh", "-c", "exit 3"]\n`,
  );
  await withHost(dir, async (run) => {
    const page = (l: Record<string, unknown>) => !l.tag && String(l.msg).startsWith("status page on ");
    await logged(run, page, "the host's status page");
    const url = /status page on (\S+)/.exec(String(run.lines().find(page)?.msg))?.[1] as string;
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    // Within beta's pause of 2 s (its agent runs a moment between pauses): what a server not running shows.
    await logged(run, said(run, "beta", /starting it again in 2 s$/), "beta's second pause");
    // Only the host listens: no server has a page of its own.
    expect(run.lines().filter((l) => String(l.msg).startsWith("status page on "))).toHaveLength(1);

    const status = (await (await fetch(`${url}status.json`)).json()) as { servers: Record<string, any> };
    expect(Object.keys(status.servers)).toEqual(["alpha", "beta"]);
    expect(status.servers.alpha.run.alive).toBe(true);
    expect(status.servers.alpha.snapshot.players.map((p: { name: string }) => p.name)).toEqual(["Erin"]);
    expect(status.servers.beta.running).toBe(false);
    expect(status.servers.beta.why).toMatch(/^its agent ended .*; starting it again in \d+ s$/);

    const metrics = await (await fetch(`${url}metrics`)).text();
    expect(metrics).toContain('hub_agent_server_running{server="alpha"} 1');
    expect(metrics).toContain('hub_agent_server_running{server="beta"} 0');
    expect(metrics).toContain('hub_agent_queue_entries{server="alpha",queue="ban"} 0');
    expect(metrics.match(/^# TYPE hub_agent_queue_entries /gm)).toHaveLength(1); // each family once
    expect(metrics).not.toMatch(/\{queue="ban"\}/); // every series names its server

    const ready = await fetch(`${url}readyz`);
    expect([ready.status, await ready.text()]).toEqual([503, "not ready: beta is not ready\n"]);
  });
}, 60_000);

test("one server's console hangs, another's service answers 503: the others ban, kick and report on time", async () => {
  // A console that takes the connection and never answers; a service that answers everything with 503.
  const hung = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const down = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response("unavailable", { status: 503 }) });
  const dir = host({});
  try {
    writeFileSync(
      join(dir, "servers.d", "alpha.toml"),
      simServer(dir, "alpha", [ALICE], "\n[intervals]\nstatus = 1\n"),
    );
    writeFileSync(
      join(dir, "servers.d", "beta.toml"),
      `[game]\nbridge = "rcon"\npreset = "minecraft"\n\n[game.rcon]\nhost = "127.0.0.1"\nport = ${hung.port}\npassword = "secret"\n`,
    );
    writeFileSync(
      join(dir, "servers.d", "gamma.toml"),
      simServer(dir, "gamma", [CAROL]).replace("[api]\n", `[api]\nurl = "http://127.0.0.1:${down.port}/down/v1"\n`),
    );
    await withHost(dir, async (run) => {
      await logged(run, said(run, "alpha", "ready"), "alpha ready");
      const sent = () => count(run, "alpha:agent", "status sent");
      const before = sent();
      const ban = await hub(["ban", ALICE.id, "1h", "griefing", "--server", "alpha"], { cwd: dir });
      expect(ban.code).toBe(0);
      await until(() => kicked(dir, "alpha", ALICE.id), "Alice kicked in alpha's game");
      // gamma's service has never answered: its own commands say so (nothing to queue against yet), alpha's do not.
      const refused = await hub(["ban", CAROL.id, "1h", "spam", "--server", "gamma"], { cwd: dir });
      expect(refused.code).toBe(4);
      expect(refused.stderr).toContain("503 unavailable) and no server record is cached yet");
      // alpha's status rounds go on every second meanwhile.
      await until(() => sent() >= before + 3, "three more status rounds of alpha", { timeoutMs: 15_000 });
      // The hung console and the refusing service keep their agents running, waiting: nothing to restart.
      expect(run.lines().some((l) => /ended/.test(String(l.msg)))).toBe(false);
    });
  } finally {
    hung.stop(true);
    await down.stop(true);
  }
}, 60_000);

test("run --server (or HUB_SERVER) alone: SIGHUP reads that server's file again, not the shared one alone", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", [CAROL]));
  for (const [args, env] of [
    [["--server", "alpha"], {}],
    [[], { HUB_SERVER: "alpha" }],
  ] as const) {
    await withHost(dir, [...args], { ...env }, async (run) => {
      await logged(run, (l) => l.msg === "ready", "alpha ready");
      writeFileSync(
        join(dir, "servers.d", "alpha.toml"),
        simServer(dir, "alpha", [ALICE], "\n[intervals]\nstatus = 61\n"),
      );
      run.proc.kill("SIGHUP");
      // Its own file's change is applied; what the shared file alone would change (its store, its game) is not.
      const hangup = (l: Record<string, unknown>) => String(l.msg).startsWith("SIGHUP: ");
      await logged(run, hangup, "the SIGHUP's line");
      const line = String(run.lines().find(hangup)?.msg);
      expect(line).toStartWith(`SIGHUP: ${join(dir, "servers.d", "alpha.toml")} is valid; applying intervals.status `);
      expect(line).not.toContain("storage.dir");
    });
    writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
    rmSync(join(dir, "run.log"));
  }
}, 60_000);

test("run --once with one server in servers.d runs it, as every one-shot command takes it; with two, names them", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  const once = await hub(["run", "--once"], { cwd: dir });
  expect([once.code, once.stderr]).toEqual([0, expect.not.stringContaining("error")]);
  // Its round ran as that server: in its own store, its game's players.
  const queue = await hub(["queue", "status"], { cwd: dir });
  expect(queue.stdout).toContain(join(dir, "data", "servers", "alpha", "corrupt"));
  expect(jsonLines(join(dir, "alpha-actions.jsonl")).length).toBeGreaterThan(0);

  writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", []));
  const two = await hub(["run", "--once"], { cwd: dir });
  expect(two.code).toBe(2);
  expect(two.stderr).toContain("run --once runs one server: name it with --server <name>");
}, 60_000);

test("no server left running (the last one's file removed, the others waiting for a SIGHUP): the host waits, alive", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), "[intervals]\nstatus = soon\n"); // a typo: waits for a SIGHUP
  await withHost(dir, async (run) => {
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    await logged(run, said(run, "beta", /is not valid, so it is not running/), "beta waiting");
    unlinkSync(join(dir, "servers.d", "alpha.toml"));
    run.proc.kill("SIGHUP");
    await logged(run, said(run, "alpha", "stopped"), "alpha stopped");
    await Bun.sleep(1_000);
    expect(run.proc.exitCode).toBeNull(); // not gone with exit 0, deaf to the SIGHUP that mends beta
    writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", [CAROL]));
    run.proc.kill("SIGHUP");
    await logged(run, said(run, "beta", "ready"), "beta mended and started");
  });
}, 60_000);

test("a server's file removed while its store still holds a ban not delivered: said, with what to do", async () => {
  const dir = twoServers();
  await withHost(dir, async (run) => {
    await allReady(run, "alpha", "beta");
    await sb.control.down();
    try {
      const ban = await hub(["ban", CAROL.id, "1h", "spam", "--server", "beta"], { cwd: dir });
      expect(ban.code).toBe(6); // queued in beta's store, for beta's agent to send
      unlinkSync(join(dir, "servers.d", "beta.toml"));
      run.proc.kill("SIGHUP");
      await logged(run, said(run, "beta", "stopped"), "beta stopped");
      await logged(
        run,
        (l) =>
          l.level === "warn" &&
          String(l.msg) ===
            `SIGHUP: beta's store ${join(dir, "data", "servers", "beta")} still holds what its agent had not sent (ban: 1): no other server sends it; put ${join(dir, "servers.d", "beta.toml")} back until \`hub-agent queue status --server beta\` shows it sent`,
        "the undelivered ban said",
      );
    } finally {
      await sb.control.up();
    }
  });
}, 60_000);

test("servers.d added beside a store the single run left a ban in: the host says no server sends it", async () => {
  const dir = host({});
  expect((await hub(["run", "--once"], { cwd: dir })).code).toBe(0); // one server, the shared file: its store, data/
  await sb.control.down();
  try {
    expect((await hub(["ban", CAROL.id, "1h", "spam"], { cwd: dir })).code).toBe(6); // queued in data/
  } finally {
    await sb.control.up();
  }
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  await withHost(dir, async (run) => {
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    await logged(
      run,
      (l) =>
        l.level === "warn" &&
        String(l.msg).startsWith(
          `the store ${join(dir, "data")} holds what the run of the shared file alone had not sent (ban: 1): no server of servers.d sends it`,
        ),
      "the shared store's ban said",
    );
  });
}, 60_000);

test("a second host of the same servers.d exits 7 as a second single run does, the first one untouched", async () => {
  const dir = twoServers();
  await withHost(dir, async (run) => {
    await allReady(run, "alpha", "beta");
    const second = await hubBinary(["run"], { cwd: dir });
    expect(second.code).toBe(7);
    expect(second.stderr).toContain("another hub-agent run holds this storage directory");
    expect(run.proc.exitCode).toBeNull();
    expect(count(run, "alpha", "stopped")).toBe(0);
  });
}, 60_000);

test("two servers with one api.server_id: the second is refused, since VyHub would see them as one server", async () => {
  const dir = host({});
  // Neither file sets api.server_id: both take the shared file's, and a `once` reward would run on both.
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simGame(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), simGame(dir, "beta", [ALICE]));
  writeFileSync(join(dir, "servers.d", "gamma.toml"), simServer(dir, "gamma", []));
  await withHost(dir, async (run) => {
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    await logged(run, said(run, "gamma", "ready"), "gamma ready");
    await logged(
      run,
      said(run, "beta", /is not valid, so it is not running: beta: api\.server_id \S+ is also alpha's: VyHub would/),
      "beta refused",
    );
    expect(count(run, "beta", "ready")).toBe(0);
  });
}, 60_000);

test("two servers on one game console (game.rcon's host and port): the second is refused in one line", async () => {
  const dir = host({});
  // A file copied with its api.server_id changed and its port not: both agents would kick and reward in one game.
  const rcon = `[game]\nbridge = "rcon"\npreset = "minecraft"\n\n[game.rcon]\nport = 25999\npassword = "secret"\n`;
  writeFileSync(join(dir, "servers.d", "alpha.toml"), `[api]\nserver_id = "${serverIdOf(dir, "alpha")}"\n\n${rcon}`);
  writeFileSync(join(dir, "servers.d", "beta.toml"), `[api]\nserver_id = "${serverIdOf(dir, "beta")}"\n\n${rcon}`);
  await withHost(dir, async (run) => {
    await logged(
      run,
      said(run, "beta", /is not valid, so it is not running: beta: game\.rcon 127\.0\.0\.1:25999 is also alpha's: /),
      "beta refused",
    );
    expect(run.lines().some(said(run, "alpha", /is not valid/))).toBe(false);
  });
}, 60_000);

test("SIGHUP with the shared http.listen changed: the host's page moves there, as a single run's does", async () => {
  const dir = host({});
  writeFileSync(join(dir, "hub-agent.toml"), `[http]\nlisten = "127.0.0.1:0"\n\n`, { flag: "a" });
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", []));
  const free = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
  const port = free.port;
  free.stop(true);
  await withHost(dir, async (run) => {
    const pages = () => run.lines().filter((l) => !l.tag && String(l.msg).startsWith("status page on "));
    await until(() => pages().length === 1, "the host's status page");
    const first = /status page on (\S+)/.exec(String(pages()[0]?.msg))?.[1] as string;
    await logged(run, said(run, "alpha", "ready"), "alpha ready");
    const shared = readFileSync(join(dir, "hub-agent.toml"), "utf8");
    writeFileSync(join(dir, "hub-agent.toml"), shared.replace("127.0.0.1:0", `127.0.0.1:${port}`));
    run.proc.kill("SIGHUP");
    await until(() => pages().length === 2, "the page moved");
    expect(String(pages()[1]?.msg)).toStartWith(`status page on http://127.0.0.1:${port}/`);
    const status = (await (await fetch(`http://127.0.0.1:${port}/status.json`)).json()) as { servers: object };
    expect(Object.keys(status.servers)).toEqual(["alpha", "beta"]);
    expect(
      await fetch(`${first}readyz`).then(
        () => "answered",
        () => "refused",
      ),
    ).toBe("refused");
  });
}, 60_000);

test("a single run's SIGHUP after servers.d got its first servers: says a restart hosts them", async () => {
  const dir = host({});
  rmSync(join(dir, "servers.d"), { recursive: true });
  writeFileSync(join(dir, "hub-agent.toml"), `\n[game.sim]\nplayers = ["${ALICE.id}:${ALICE.name}"]\n`, { flag: "a" });
  await withHost(dir, async (run) => {
    await logged(run, (l) => l.msg === "ready", "the single run ready");
    mkdirSync(join(dir, "servers.d"));
    writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
    writeFileSync(join(dir, "servers.d", "beta.toml"), simServer(dir, "beta", []));
    run.proc.kill("SIGHUP");
    await logged(
      run,
      (l) =>
        l.level === "warn" &&
        l.msg ===
          `SIGHUP: ${join(dir, "servers.d")} now holds servers (alpha, beta): this run goes on as the shared file's one server; a restart (systemctl restart hub-agent) hosts them`,
      "the new servers said",
    );
  });
}, 60_000);

test("a SIGHUP with nothing changed does not cut short the pause of a server that keeps failing", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", []));
  writeFileSync(
    join(dir, "servers.d", "beta.toml"),
    `[game]\nbridge = "wrapper"\npreset = "openarena"\n\n[game.wrapper]\ncommand = ["sh", "-c", "exit 3"]\n`,
  );
  await withHost(dir, async (run) => {
    const at = (msg: RegExp) => Date.parse(String(run.lines().find(said(run, "beta", msg))?.ts));
    await logged(run, said(run, "beta", /starting it again in 2 s$/), "beta's second pause");
    run.proc.kill("SIGHUP"); // a tool reloading on a timer: beta's file is as it was
    await logged(run, said(run, "beta", /starting it again in 4 s$/), "beta's third pause", 20_000);
    // Its pause of 2 s was waited out whole, SIGHUP or not.
    expect(at(/in 4 s$/) - at(/in 2 s$/)).toBeGreaterThanOrEqual(1_900);
    expect(count(run, "alpha", "ready")).toBe(1);
  });
}, 60_000);

test("SIGHUP adds two servers with one api.server_id: one runs, the other is refused, however their loads interleave", async () => {
  const dir = host({});
  writeFileSync(join(dir, "servers.d", "alpha.toml"), simServer(dir, "alpha", [ALICE]));
  await withHost(dir, async (run) => {
    await allReady(run, "alpha");
    // Neither new file sets api.server_id: both take the shared file's (alpha has its own). Their loads begin at
    // the same SIGHUP and end together: the check that refuses the second must see the first.
    writeFileSync(join(dir, "servers.d", "beta.toml"), simGame(dir, "beta", []));
    writeFileSync(join(dir, "servers.d", "gamma.toml"), simGame(dir, "gamma", []));
    run.proc.kill("SIGHUP");
    const refused = (name: string) =>
      said(run, name, /is not valid, so it is not running: \S+: api\.server_id \S+ is also/);
    await until(() => run.lines().some(refused("beta")) || run.lines().some(refused("gamma")), "one refused");
    await until(() => count(run, "beta", "ready") + count(run, "gamma", "ready") >= 1, "the other ready");
    await Bun.sleep(500);
    expect(count(run, "beta", "ready") + count(run, "gamma", "ready")).toBe(1);
  });
}, 60_000);

test("a server in its restart pause keeps its api.server_id: one added at a SIGHUP meanwhile is refused", async () => {
  const dir = host({});
  // beta takes the shared file's api.server_id, and its game keeps exiting.
  writeFileSync(
    join(dir, "servers.d", "beta.toml"),
    `[game]\nbridge = "wrapper"\npreset = "openarena"\n\n[game.wrapper]\ncommand = ["sh", "-c", "exit 3"]\n`,
  );
  await withHost(dir, async (run) => {
    await logged(run, said(run, "beta", /starting it again in 2 s$/), "beta's second pause", 20_000);
    writeFileSync(join(dir, "servers.d", "gamma.toml"), simGame(dir, "gamma", []));
    run.proc.kill("SIGHUP");
    await logged(
      run,
      said(run, "gamma", /is not valid, so it is not running: gamma: api\.server_id \S+ is also beta's/),
      "gamma refused",
    );
    expect(count(run, "gamma", "ready")).toBe(0);
  });
}, 60_000);

test("one game console named two ways (localhost, 127.0.0.1): the second server is refused", async () => {
  const dir = host({});
  const rcon = (host: string) =>
    `[game]\nbridge = "rcon"\npreset = "minecraft"\n\n[game.rcon]\nhost = "${host}"\nport = 25998\npassword = "secret"\n`;
  writeFileSync(
    join(dir, "servers.d", "alpha.toml"),
    `[api]\nserver_id = "${serverIdOf(dir, "alpha")}"\n\n${rcon("localhost")}`,
  );
  writeFileSync(
    join(dir, "servers.d", "beta.toml"),
    `[api]\nserver_id = "${serverIdOf(dir, "beta")}"\n\n${rcon("127.0.0.1")}`,
  );
  await withHost(dir, async (run) => {
    await logged(
      run,
      said(run, "beta", /not running: beta: game\.rcon 127\.0\.0\.1:25998 is also alpha's \(localhost:25998\): /),
      "beta refused",
    );
    expect(run.lines().some(said(run, "alpha", /is not valid/))).toBe(false);
  });
}, 60_000);
