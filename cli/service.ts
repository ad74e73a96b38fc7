/**
 * The service client of a command, watched for a refused key or an unknown server id (lib/api/credentials.ts): the
 * runner turns either into exit 3 with one line and the fix, whatever the command was doing when it met it.
 */
import type { Api, ApiOptions } from "../lib/api/client.ts";
import type { CredentialGuard, GuardOptions } from "../lib/api/credentials.ts";
import type { Config } from "../lib/config/index.ts";
import type { Clock } from "../lib/clock.ts";
import type { Invocation } from "./context.ts";

export async function serviceApi(
  config: Config,
  opts: Omit<ApiOptions, "url" | "key" | "timeoutMs" | "maxResponseBytes"> & {
    /** Told of each change (run's log). */
    onChange?: GuardOptions["onChange"];
    /**
     * The command line whose exit code a refused key or unknown server id decides (exit 3); none for `run`, which
     * keeps serving and says so in its log.
     */
    invocation: Invocation | null;
  },
): Promise<{ api: Api; guard: CredentialGuard }> {
  const [{ createApi }, { guardCredentials, CREDENTIAL_BACKOFF_MAX_MS: maxMs }, { systemClock }] = await Promise.all([
    import("../lib/api/client.ts"),
    import("../lib/api/credentials.ts"),
    import("../lib/clock.ts"),
  ]);
  const { onChange, invocation, ...apiOpts } = opts;
  const api = createApi({
    url: config.api.url,
    key: config.api.key,
    timeoutMs: config.api.timeout * 1000,
    maxResponseBytes: config.api.max_response_bytes,
    ...apiOpts,
  });
  const clock: Clock = opts.clock ?? systemClock;
  const baseMs = Math.min(config.intervals.user_retry * 1000, maxMs);
  const guard = guardCredentials(api, { clock, baseMs, maxMs, onChange });
  invocation?.guards.push({ guard, serverId: config.api.server_id });
  return { api: guard.api, guard };
}

/** The line for the refused key or unknown server id a command's requests met, if any. */
export async function credentialRefusal(invocation: Invocation): Promise<string | undefined> {
  const found = invocation.guards.find((w) => w.guard.problem());
  if (!found) return undefined;
  const { describeCredentialProblem } = await import("../lib/api/credentials.ts");
  return describeCredentialProblem(found.guard.problem()!, found.serverId);
}
