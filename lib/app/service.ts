/**
 * The service client of a session, watched for a refused key or an unknown server id (lib/api/credentials.ts): a
 * one-shot command turns either into exit 3 with one line and the fix, whatever it was doing when it met it; `run`
 * keeps serving and says so in its log.
 */
import type { Api, ApiOptions } from "../api/client.ts";
import type { CredentialGuard, GuardOptions } from "../api/credentials.ts";
import type { Config } from "./config.ts";
import type { Clock } from "../clock.ts";

/** A service client whose refused key or unknown server id decides a command's outcome. */
export interface Watched {
  guard: CredentialGuard;
  serverId: string;
}

export async function serviceApi(
  config: Config,
  opts: Omit<ApiOptions, "url" | "key" | "timeoutMs" | "maxResponseBytes"> & {
    /** Told of each change (run's log). */
    onChange?: GuardOptions["onChange"];
    /** Where the command keeps the clients it watches (credentialRefusal); none for `run`. */
    watched: Watched[] | null;
  },
): Promise<{ api: Api; guard: CredentialGuard }> {
  const [{ createApi }, { guardCredentials, CREDENTIAL_BACKOFF_MAX_MS: maxMs }, { systemClock }] = await Promise.all([
    import("../api/client.ts"),
    import("../api/credentials.ts"),
    import("../clock.ts"),
  ]);
  const { onChange, watched, ...apiOpts } = opts;
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
  watched?.push({ guard, serverId: config.api.server_id });
  return { api: guard.api, guard };
}

/** The line for the refused key or unknown server id a command's requests met, if any. */
export async function credentialRefusal(watched: readonly Watched[]): Promise<string | undefined> {
  const found = watched.find((w) => w.guard.problem());
  if (!found) return undefined;
  const { describeCredentialProblem } = await import("../api/credentials.ts");
  return describeCredentialProblem(found.guard.problem()!, found.serverId);
}
