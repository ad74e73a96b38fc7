import { mkdir, unlink, writeFile } from "./fsio.ts";
import { join } from "node:path";
import type { Config } from "./config/index.ts";
import { createApi, describeError, type Api, type ApiResult, type Server } from "./api/client.ts";
import { CREDENTIAL_FIX } from "./api/credentials.ts";
import type { Check } from "./check.ts";
import { fsErrorLine, isStoreDirErrno, storeDirError } from "./store/errors.ts";
import { checkFormat, StoreFormatError } from "./store/format.ts";
import { QUARANTINE_FIX, listCorrupt } from "./store/records.ts";
import { StoreUnsafeError, secureStore } from "./store/secure.ts";
import type { Logger } from "./log.ts";

export type { Check, FailureKind } from "./check.ts";

/** Clock skew that makes ban and membership times visibly wrong. */
export const SKEW_WARN_MS = 5_000;
export const SKEW_FAIL_MS = 60_000;

/**
 * The checks after the configuration, in order. One GET /server/<id> answers three of them: whether the
 * service answers at all, whether it accepts the key and knows the server, and its clock (the Date header).
 */
export async function runChecks(config: Config, opts: { logger?: Logger; now?: () => number; api?: Api } = {}) {
  const now = opts.now ?? Date.now;
  const checks: Check[] = [];
  checks.push(await checkStorage(config.storage.dir));
  const quarantined = checks.at(-1)?.status === "ok" ? await checkQuarantine(config.storage.dir) : undefined;
  if (quarantined) checks.push(quarantined);

  const api =
    opts.api ??
    createApi({
      url: config.api.url,
      key: config.api.key,
      timeoutMs: config.api.timeout * 1000,
      maxResponseBytes: config.api.max_response_bytes,
      retries: 0,
      logger: opts.logger,
    });
  const started = now();
  const res = await api.getServer(config.api.server_id);
  const ms = now() - started;
  checks.push(checkReachable(res, config.api.url, ms));
  checks.push(checkServer(res, config));
  if (res.ok && config.game.bridge !== "sim") {
    // The record's type against the game (the simulated game plays whichever the record says).
    const [{ resolvePreset }, { checkServerType }] = await Promise.all([
      import("./game/presets/index.ts"),
      import("./game/server-type.ts"),
    ]);
    const typeCheck = checkServerType(resolvePreset(config.game.preset ?? "", config.game.overrides), res.value.type);
    if (typeCheck) checks.push(typeCheck);
  }
  checks.push(checkClock(res, now()));
  if (config.game.bridge !== "sim") {
    // The game's console: reachable, password right, player list answering (or the server to start found).
    const { checkGame } = await import("./game/doctor.ts");
    checks.push(...(await checkGame(config)));
  }
  return checks;
}

export async function checkStorage(dir: string): Promise<Check> {
  const probe = join(dir, `.doctor-${process.pid}`);
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 }).catch((e: unknown) => {
      throw storeDirError(e, dir);
    });
    // As every other command opens it: another user's store is refused (exit 8), before anything is written in it.
    await secureStore(dir);
    await checkFormat(dir);
    await writeFile(probe, "ok", { mode: 0o600 });
    await unlink(probe);
    return { name: "storage", status: "ok", message: `${dir} is writable` };
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (e instanceof StoreFormatError)
      return { name: "storage", status: "fail", message: e.problem, fix: e.fix, kind: "store" };
    if (e instanceof StoreUnsafeError) return { name: "storage", status: "fail", message: e.message, kind: "store" };
    return {
      name: "storage",
      status: "fail",
      message: err.code && err.path ? fsErrorLine(err.code, err.path, dir) : `${dir} is not writable (${err.code})`,
      fix: "create the directory and give it to the user running hub-agent, or set storage.dir / HUB_STORAGE_DIR",
      kind: isStoreDirErrno(err.code) ? "store" : "failure",
    };
  }
}

/** Records moved to <dir>/corrupt/ (by any process): a warning, since what they held was not acted on; none: no line. */
export async function checkQuarantine(dir: string): Promise<Check | undefined> {
  const root = join(dir, "corrupt");
  const files = await listCorrupt(dir);
  if (!files.length) return undefined;
  const keys = files.slice(0, 5).map((f) => f.key);
  return {
    name: "storage",
    status: "warn",
    message: `${files.length} unreadable record(s) quarantined in ${root}: ${keys.join(", ")}${files.length > keys.length ? ", …" : ""}`,
    fix: QUARANTINE_FIX,
  };
}

/** The service did not give a usable answer at all: down, failing, or rate-limiting us. */
const unanswered = (res: ApiResult<Server>) =>
  !res.ok && (res.error.kind === "Network" || res.error.kind === "ServerError" || res.error.kind === "RateLimited");

function checkReachable(res: ApiResult<Server>, url: string, ms: number): Check {
  if (res.ok || !unanswered(res)) return { name: "service", status: "ok", message: `${url} answered in ${ms} ms` };
  const e = res.error;
  const fix =
    e.kind === "Network" && e.tls
      ? "check that api.url is the service's https:// address (http:// for a plain-HTTP sandbox); for a certificate of your own authority, add that authority with NODE_EXTRA_CA_CERTS=<file.pem> in hub-agent's environment"
      : e.kind === "Network"
        ? "check api.url (scheme, host, port and the /<instance>/v1 path), DNS and the firewall; `curl -I <api.url>/openapi.json` should answer"
        : e.kind === "RateLimited"
          ? "the service is rate-limiting this key: wait, and make sure only one hub-agent runs per server"
          : "the service is having trouble: try again later, and check the service's status page";
  return { name: "service", status: "fail", message: `${url}: ${describeError(e)}`, fix, kind: "unreachable" };
}

function checkServer(res: ApiResult<Server>, config: Config): Check {
  if (unanswered(res)) return { name: "server", status: "skipped", message: "the service did not answer" };
  if (res.ok) {
    const s = res.value;
    const bundle = s.serverbundle ? `"${s.serverbundle.name}" (${s.serverbundle.id})` : s.serverbundle_id;
    if (!bundle)
      return {
        name: "server",
        status: "fail",
        message: `server "${s.name}" belongs to no serverbundle`,
        fix: "assign the server to a serverbundle in the service's server settings",
        kind: "config",
      };
    return {
      name: "server",
      status: "ok",
      message: `key accepted; server "${s.name}" (${s.type}) in serverbundle ${bundle}`,
    };
  }
  const e = res.error;
  // The service's own 404 (its error code) is an unknown server id; any other says api.url's path is wrong.
  if (e.kind === "NotFound")
    return e.code
      ? {
          name: "server",
          status: "fail",
          message: `the service knows no server ${config.api.server_id}`,
          fix: CREDENTIAL_FIX.unknown_server,
          kind: "config",
        }
      : {
          name: "server",
          status: "fail",
          message: `the service has no such path: ${config.api.url} answered ${describeError(e)}, not the service's own not_found of an unknown server`,
          fix: CREDENTIAL_FIX.wrong_path,
          kind: "config",
        };
  if (e.kind === "ClientError" && (e.status === 401 || e.status === 403))
    return {
      name: "server",
      status: "fail",
      message: `the service refused the API key (${e.status}${e.code ? ` ${e.code}` : ""})`,
      fix: "create a new server API key in the service's server settings and put it in api.key / HUB_API_KEY (or api.key_file)",
      kind: "config",
    };
  return {
    name: "server",
    status: "fail",
    message: describeError(e),
    fix: "the service's answer was unexpected: check that api.url points at the service's API (…/v1)",
    kind: "failure",
  };
}

function checkClock(res: ApiResult<Server>, now: number): Check {
  if (!res.ok) {
    const message = unanswered(res)
      ? "the service did not answer: its clock could not be compared"
      : "no usable answer from the service (see above): its clock was not compared";
    return { name: "clock", status: "skipped", message };
  }
  const date = res.headers.get("date");
  const theirs = date ? Date.parse(date) : NaN;
  if (Number.isNaN(theirs))
    return { name: "clock", status: "skipped", message: `the service's answer had no readable Date header` };
  const skew = now - theirs;
  const text = `${Math.abs(Math.round(skew / 1000))} s ${skew >= 0 ? "ahead of" : "behind"} the service`;
  const fix = "sync this machine's clock (systemd-timesyncd or chrony); ban and membership times depend on it";
  if (Math.abs(skew) > SKEW_FAIL_MS) return { name: "clock", status: "fail", message: text, fix, kind: "failure" };
  if (Math.abs(skew) > SKEW_WARN_MS) return { name: "clock", status: "warn", message: text, fix };
  return { name: "clock", status: "ok", message: text };
}
