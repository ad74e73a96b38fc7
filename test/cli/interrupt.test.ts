/**
 * Ctrl-C on a one-shot `ban` that waits for VyHub (a service that takes the connection and never answers): the
 * entry is queued already and will be sent, so the command says so, with how to withdraw it, and exits 6. Typed
 * again, it would be there twice. The compiled binary, a real signal.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ServerSchema } from "../../lib/api/schemas.ts";
import { openStore } from "../../lib/store/index.ts";
import examples from "../fixtures/api-examples.json";
import { hubInBackground } from "./binary.ts";
import { until } from "../support/until.ts";

// Takes every connection and never answers.
const silent = Bun.listen({ hostname: "127.0.0.1", port: 0, socket: { data() {} } });
afterAll(() => silent.stop(true));

test("SIGINT while `ban` waits for VyHub: the entry stays queued, the command says so and how to drop it (exit 6)", async () => {
  const dir = mkdtempSync(join(tmpdir(), "hub-interrupt-"));
  const server = examples["01 GET /server/{server_id}"].response.body;
  await (await openStore({ dir })).cache("server", ServerSchema).set(server as never); // its serverbundle known
  const env = {
    HUB_API_URL: `http://127.0.0.1:${silent.port}/x/v1`,
    HUB_API_KEY: "interrupt-key",
    HUB_API_SERVER_ID: server.id,
    HUB_GAME_BRIDGE: "sim",
    HUB_STORAGE_DIR: dir,
  };
  const ban = await hubInBackground(["ban", "76561198000000001", "1h", "griefing"], { env });
  const queued = () => readdirSync(join(dir, "queue", "ban"), { withFileTypes: true }).filter((e) => e.isFile());
  await until(() => {
    try {
      return queued().length === 1;
    } catch {
      return false;
    }
  }, "the ban queued");
  await Bun.sleep(100); // its own round asks VyHub, which does not answer (api.timeout: 10 s)
  ban.proc.kill("SIGINT");
  expect(await ban.proc.exited).toBe(6);
  const said = await ban.stderr.done;
  const id = queued()[0]!.name;
  expect(said).toContain(
    `interrupted: the ban is queued (${id}) and will be sent; \`hub-agent queue drop ${id}\` withdraws it`,
  );
});
