/**
 * A one-shot sanction command says a sentence for what it issued, in the configured language; with --json it says none
 * (its JSON has the facts), so it loads no messages for it (lib/app/sanction.ts parts). A language file that cannot be
 * used still stops a command that would say one, before anything is queued; with --json, a failure's line is then
 * said in English.
 */
import { describe, expect, test } from "bun:test";
import type { Sandbox } from "../../lib/sandbox/index.ts";
import { useSandbox } from "../support/sandbox.ts";
import { sandboxEnv } from "../support/sandbox-env.ts";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerSchema } from "../../lib/api/schemas.ts";
import { openStore } from "../../lib/store/index.ts";
import examples from "../fixtures/api-examples.json";
import { hub } from "./binary.ts";

const server = examples["01 GET /server/{server_id}"].response.body;

/** A store with the server record cached, the service down, and a language the program does not have. */
async function env(): Promise<Record<string, string>> {
  const dir = mkdtempSync(join(tmpdir(), "hub-sentences-"));
  await (await openStore({ dir })).cache("server", ServerSchema).set(server as never);
  return {
    HUB_API_URL: "http://127.0.0.1:1/v1",
    HUB_API_KEY: "sentences-key-not-used",
    HUB_API_SERVER_ID: server.id,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: dir,
    HUB_LANG: "fr",
  };
}
const banned = (dir: string) => {
  try {
    return readdirSync(join(dir, "queue", "ban")).length;
  } catch {
    return 0;
  }
};

test("--json: the ban is queued and told as JSON; the language it would not say anything in is not loaded", async () => {
  const e = await env();
  const r = await hub(["ban", "76561198000000001", "1h", "griefing", "--json"], { env: e });
  expect(r.code).toBe(6);
  expect(JSON.parse(r.stdout)).toMatchObject({ action: "ban", status: "queued", reason: "griefing" });
  expect(banned(e.HUB_STORAGE_DIR!)).toBe(1);
});

test("with a sentence to say, an unknown language stops the ban before anything is queued: a configuration error", async () => {
  const e = await env();
  const r = await hub(["ban", "76561198000000001", "1h", "griefing"], { env: e });
  expect(r.code).toBe(3);
  expect(r.stderr).not.toContain("unexpected error");
  expect(r.stderr).toContain('unknown language "fr"');
  expect(banned(e.HUB_STORAGE_DIR!)).toBe(0);
});

test("run with an unknown language exits 3, a configuration error (systemd does not restart it)", async () => {
  const r = await hub(["run", "--once"], { env: await env() });
  expect(r.code).toBe(3);
  expect(r.stderr).toContain('unknown language "fr"');
  expect(r.stderr).not.toContain("unexpected error");
});

describe("a ban VyHub refuses, told as JSON", () => {
  let sb: Sandbox;
  useSandbox((s) => (sb = s));

  test("--json: the refusal is told in English, not the language file's problem; the file is named once", async () => {
    const told = async (lang: Record<string, string>) => {
      sb.control.failNext({ method: "POST", path: "/ban/" }, 1, 422, { detail: "the reason is too long" });
      const dir = mkdtempSync(join(tmpdir(), "hub-sentences-"));
      return hub(["ban", "76561198000000001", "1h", "griefing", "--json"], {
        env: { ...sandboxEnv(sb, dir), ...lang },
      });
    };
    const english = await told({});
    const unknown = await told({ HUB_LANG: "fr" });
    expect(english.code).toBe(1);
    expect(JSON.parse(english.stdout).error.message).toContain("VyHub refused the ban of 76561198000000001");
    expect([unknown.code, JSON.parse(unknown.stdout)]).toEqual([english.code, JSON.parse(english.stdout)]);
    expect(unknown.stderr.split('unknown language "fr"')).toHaveLength(2);
  });
});
