/**
 * Against a real Teeworlds 0.7.5 server (Debian package `teeworlds-server`): hub-agent's econ transport logs in,
 * `doctor`'s check passes through the bridge kind registry, a wrong password is named, and every hostile value
 * broadcast with `say` through the preset's escaping comes back as exactly one chat line holding the cleaned value
 * (the real console is the judge of the escaping). The server runs the README's config lines, and hub-agent the
 * README's configuration (only the password and ports filled in). The server binds loopback only and does not register with the
 * master servers. No client can join here (no headless client, no bots in release builds): joins are covered by
 * the preset's fixture test. Skipped, with the reason, when the server is not installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadConfig } from "../../lib/config/index.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { sanitize } from "../../lib/game/presets/escape.ts";
import { teeworlds } from "../../lib/game/presets/teeworlds.ts";
import { Econ } from "../../lib/game/transports/econ.ts";
import type { TransportError } from "../../lib/game/transports/transport.ts";
import { HOSTILE } from "../game/presets/hostile-values.ts";
import { spawn } from "../support/procs.ts";
import { readmeBlock } from "../support/readme.ts";
import { until } from "../support/until.ts";
import { freePort } from "./world.ts";

const SERVER = "/usr/games/teeworlds-server";
const SECTION = "### Teeworlds and DDNet";
const installed = existsSync(SERVER);
if (!installed)
  console.warn(`SKIPPED: the Teeworlds test needs ${SERVER} (Debian package teeworlds-server; .ci/run installs it)`);

const canConnect = (port: number) =>
  new Promise<boolean>((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => (s.destroy(), resolve(true)));
    s.on("error", () => resolve(false));
  });

describe.skipIf(!installed)("Teeworlds 0.7.5 over econ (real server)", () => {
  let dir: string;
  let econPort: number;
  let server: ReturnType<typeof spawn>;
  const PASSWORD = "hub-econ-secret";

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "hub-teeworlds-"));
    econPort = await freePort("tcp");
    const gamePort = await freePort("udp");
    // The config file must be relative to the working directory (the game refuses absolute paths). The README's
    // lines, then what a test adds: loopback, no master servers, free ports (a later line wins).
    writeFileSync(
      join(dir, "server.cfg"),
      [
        readmeBlock(SECTION, "", 0).replaceAll("<password>", PASSWORD),
        'sv_name "hub-agent test"',
        "sv_register 0",
        "bindaddr 127.0.0.1",
        `sv_port ${gamePort}`,
        `ec_port ${econPort}`,
      ].join("\n"),
    );
    server = spawn([SERVER, "-f", "server.cfg"], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? "", HOME: dir },
      stdout: "ignore",
      stderr: "ignore",
      scope: "file",
    });
    await until(() => canConnect(econPort), "the econ port", { timeoutMs: 20_000, everyMs: 50 });
  }, 30_000);

  afterAll(async () => {
    server?.kill("SIGTERM");
    await server?.exited;
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("doctor's check through the registry: password accepted, the player list answers", async () => {
    // The README's configuration, word for word but for the password.
    writeFileSync(join(dir, "hub-agent.toml"), readmeBlock(SECTION, "toml", 0).replaceAll("<password>", PASSWORD));
    const loaded = await loadConfig({
      env: {
        HUB_API_URL: "http://127.0.0.1:1/v1",
        HUB_API_KEY: "k",
        HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
        HUB_CONFIG: join(dir, "hub-agent.toml"),
        HUB_GAME_RCON_PORT: String(econPort), // the README's is the default, 8303
      },
      cwd: dir,
    });
    if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
    const [check] = await checkGame(loaded.config, { timeoutMs: 5000 });
    expect(check).toMatchObject({
      status: "ok",
      message: `econ 127.0.0.1:${econPort} (Teeworlds / DDNet): password accepted; 0 players online`,
    });
  });

  test("a wrong password is an auth error (tried once: three would ban this address)", async () => {
    const econ = new Econ({ host: "127.0.0.1", port: econPort, password: "wrong", timeoutMs: 5000 });
    const err = (await econ.send("echo x").catch((e) => e)) as TransportError;
    await econ.close();
    expect(err.code).toBe("auth");
    expect(err.message).toContain("Wrong password 1/3");
  });

  test("every hostile value said through the preset's escaping is one chat line holding the cleaned value", async () => {
    const econ = new Econ({ host: "127.0.0.1", port: econPort, password: PASSWORD, timeoutMs: 5000 });
    const said: string[] = [];
    await econ.start((line) => {
      if (line.startsWith("[chat]: *** ")) said.push(line.slice("[chat]: *** ".length));
    });
    try {
      for (const value of HOSTILE) {
        const expected = sanitize(value).replace(/"/g, "'").replace(/\\/g, "/");
        if (!expected.trim()) continue; // nothing to say
        said.length = 0;
        expect(await econ.send("echo before")).toBe("before");
        await econ.send(`say ${teeworlds.escape(value)}`);
        // The echo after it comes back after every line `say` printed (the console runs commands in order).
        expect(await econ.send("echo after")).toBe("after");
        // One line, holding the value (the server cuts a long chat line, possibly inside a character).
        expect({ value, lines: said.length }).toEqual({ value, lines: 1 });
        const got = said[0]!.replace(/\uFFFD$/, "");
        expect(got.length).toBeGreaterThan(0);
        expect({ value, prefix: expected.startsWith(got) }).toEqual({ value, prefix: true });
      }
      // Still the same server: nothing a value smuggled in stopped it.
      expect(await econ.send("echo alive")).toBe("alive");
    } finally {
      await econ.close();
    }
  }, 60_000);
});
