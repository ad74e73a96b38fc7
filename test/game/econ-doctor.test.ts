/**
 * doctor on an econ console: beside the login and the player list (test/game/readme-configs.test.ts), it looks for
 * the console on the host's other addresses, where a bind address that doesn't do what it says (DDNet 16.4's
 * `ec_bindaddr ::1`) opens it. The real case runs in test/e2e/ddnet.test.ts; here the probe and the verdict.
 */
import { afterEach, describe, expect, test } from "bun:test";
import * as net from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Check } from "../../lib/check.ts";
import { loadConfig } from "../../lib/app/config.ts";
import { checkGame } from "../../lib/game/doctor.ts";
import { answersOn, exposureOf, ownAddresses } from "../../lib/game/kinds/econ.ts";
import { ddnet } from "../../lib/game/presets/ddnet.ts";
import { type EconDialect, FakeEconServer } from "./transports/fake-econ-server.ts";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const fn of cleanups.splice(0).reverse()) await fn();
});

describe("doctor on econ: loopback only, and the preset of the server it is", () => {
  test("the probe finds econ's prompt, and only econ's, without sending a password", async () => {
    const fake = await FakeEconServer.start();
    cleanups.push(() => fake.close());
    const other = net.createServer((s) => s.end("SSH-2.0-OpenSSH_9.2\r\n"));
    await new Promise<void>((r) => other.listen(0, "127.0.0.1", () => r()));
    cleanups.push(() => new Promise((r) => other.close(() => r())));
    const otherPort = (other.address() as net.AddressInfo).port;
    expect(await answersOn(fake.port, ["127.0.0.1"], 2000)).toEqual([`127.0.0.1:${fake.port}`]);
    expect(await answersOn(otherPort, ["127.0.0.1"], 2000)).toEqual([]);
    expect(await answersOn(fake.port, ["::1"], 2000)).toEqual([]); // nothing listens there
    expect(fake.commands).toEqual([]); // no password was tried, nothing ran
    expect(ownAddresses().every((a) => a !== "127.0.0.1" && a !== "::1" && !a.startsWith("fe80:"))).toBe(true);
  });

  test("found elsewhere: a warning that says where, with the preset's way to keep it on loopback", () => {
    const ok: Check = {
      name: "game",
      status: "ok",
      message: "econ 127.0.0.1:8303 (DDNet): password accepted; 0 players online",
    };
    expect(exposureOf(ok, [], ddnet.consoles.econ?.enable)).toBe(ok);
    const warned = exposureOf(ok, ["192.0.2.2:8303"], ddnet.consoles.econ?.enable);
    expect(warned.status).toBe("warn");
    expect(warned.message).toContain("econ answers on 192.0.2.2:8303 too");
    expect(warned.fix).toContain("ec_bindaddr 127.0.0.1 and sysctl net.ipv6.ip_nonlocal_bind=1");
  });

  test("the other game's preset: a warning naming the one that reads this server", async () => {
    const check = async (dialect: EconDialect, preset: string) => {
      const fake = await FakeEconServer.start({ dialect });
      cleanups.push(() => fake.close());
      const loaded = await loadConfig({
        env: {
          HUB_API_URL: "https://api.example/x/v1",
          HUB_API_KEY: "k-0123456789",
          HUB_API_SERVER_ID: "541d1c41-1b58-40fc-8780-70c400ea5686",
          HUB_GAME_BRIDGE: "econ",
          HUB_GAME_PRESET: preset,
          HUB_GAME_RCON_PASSWORD: "secret",
          HUB_GAME_RCON_PORT: String(fake.port),
        },
        cwd: mkdtempSync(join(tmpdir(), "hub-econ-doctor-")),
      });
      if (!loaded.ok) throw new Error(loaded.problems.join("\n"));
      return (await checkGame(loaded.config, { timeoutMs: 5000 }))[0]!;
    };
    expect(await check("ddnet", "teeworlds")).toMatchObject({
      status: "warn",
      message: expect.stringContaining("the server prints DDNet's console: the teeworlds preset sees no player there"),
      fix: 'set game.preset = "ddnet"',
    });
    expect(await check("teeworlds", "ddnet")).toMatchObject({ status: "warn", fix: 'set game.preset = "teeworlds"' });
    expect(await check("ddnet", "ddnet")).toMatchObject({ status: "ok" });
    expect(await check("teeworlds", "teeworlds")).toMatchObject({ status: "ok" });
  });
});
